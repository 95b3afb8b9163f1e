//! The nonblocking forms in a scope: every one of them for every datatype,
//! completion through wait, test and wait_timeout, requests that are
//! dropped, forgotten or waited for on another thread, and concurrent use
//! of communicators from several threads.

#[macro_use]
mod common;

use std::time::Duration;

use common::on_ranks;
use common::values::{Value, expected, inputs};
use smd::{Communicator, Op, scope};

const SIZES: [usize; 3] = [1, 2, 4];
const N: usize = 19;

/// Starts every collective at once, then waits for them in reverse order.
fn every_collective_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    let mut reduced = inputs::<T>(rank, N);
    let send = inputs::<T>(rank, N);
    let mut reduced_into = vec![T::of(0); N];
    let mine = vec![T::of(rank as i64 + 1); N];
    let mut gathered = vec![T::of(0); N * size];
    let mut gathered_in_place = vec![T::of(0); N * size];
    gathered_in_place[rank * N..][..N].copy_from_slice(&mine);
    let scatter_send = inputs::<T>(rank, N * size);
    let mut scattered = vec![T::of(0); N];
    let mut scattered_in_place = scatter_send.clone();
    let mut bcast = if rank == 0 {
        mine.clone()
    } else {
        vec![T::of(0); N]
    };
    let mut reduced_at_root = inputs::<T>(rank, N);
    let mut reduced_into_root = vec![T::of(0); if rank == size - 1 { N } else { 0 }];
    let exchange: Vec<T> = (0..size).flat_map(|to| vec![T::of(to as i64); N]).collect();
    let mut exchanged = vec![T::of(0); N * size];

    let counts = scope(|s| {
        let requests = vec![
            world.iall_reduce(s, &mut reduced, Op::Sum).unwrap(),
            world
                .iall_reduce_into(s, &send, &mut reduced_into, Op::Max)
                .unwrap(),
            world.iall_gather(s, &mine, &mut gathered).unwrap(),
            world
                .iall_gather_in_place(s, &mut gathered_in_place)
                .unwrap(),
            world
                .ireduce_scatter(s, &scatter_send, &mut scattered, Op::Sum)
                .unwrap(),
            world
                .ireduce_scatter_in_place(s, &mut scattered_in_place, Op::Sum)
                .unwrap(),
            world.ibroadcast(s, &mut bcast, 0).unwrap(),
            world.ireduce(s, &mut reduced_at_root, Op::Min, 0).unwrap(),
            world
                .ireduce_into(s, &send, &mut reduced_into_root, Op::Sum, size - 1)
                .unwrap(),
            world.iall_to_all(s, &exchange, &mut exchanged).unwrap(),
            world.ibarrier(s).unwrap(),
        ];
        requests
            .into_iter()
            .rev()
            .map(|r| r.wait().unwrap())
            .collect::<Vec<_>>()
    });
    // Element counts as smd_request_get_count reports them (reversed).
    assert_eq!(
        counts,
        [0, N * size, N, N, N, N, N, N * size, N * size, N, N]
    );

    assert_eq!(reduced, expected::<T>(Op::Sum, size, N));
    assert_eq!(reduced_into, expected::<T>(Op::Max, size, N));
    let all_blocks: Vec<T> = (0..size)
        .flat_map(|r| vec![T::of(r as i64 + 1); N])
        .collect();
    assert_eq!(gathered, all_blocks);
    assert_eq!(gathered_in_place, all_blocks);
    let whole = expected::<T>(Op::Sum, size, N * size);
    assert_eq!(scattered, &whole[rank * N..][..N]);
    assert_eq!(
        &scattered_in_place[rank * N..][..N],
        &whole[rank * N..][..N]
    );
    assert_eq!(bcast, vec![T::of(1); N]);
    if rank == 0 {
        assert_eq!(reduced_at_root, expected::<T>(Op::Min, size, N));
    }
    if rank == size - 1 {
        assert_eq!(reduced_into_root, expected::<T>(Op::Sum, size, N));
    }
    assert_eq!(exchanged, vec![T::of(rank as i64); N * size]);
}

datatype_test!(every_collective, SIZES, every_collective_of);

#[test]
fn test_and_wait_timeout() {
    on_ranks("test_and_wait_timeout", &SIZES, |world| {
        let mut buf = vec![1.0f32; 1 << 16];
        scope(|s| {
            let mut r = world.iall_reduce(s, &mut buf, Op::Sum).unwrap();
            while !r.test().unwrap() {
                std::thread::yield_now();
            }
            r.wait().unwrap();
            let mut r = world.ibarrier(s).unwrap();
            while !r.wait_timeout(Duration::from_millis(5)).unwrap() {}
            assert_eq!(r.wait().unwrap(), 0);
        });
        assert!(buf.iter().all(|&v| v == world.size() as f32));
    });
}

#[test]
fn dropped_and_forgotten_requests_finish_before_the_scope_ends() {
    on_ranks(
        "dropped_and_forgotten_requests_finish_before_the_scope_ends",
        &SIZES,
        |world| {
            let mut dropped = vec![1i64; 1 << 15];
            let mut forgotten = vec![2i64; 1 << 15];
            scope(|s| {
                drop(world.iall_reduce(s, &mut dropped, Op::Sum).unwrap());
                std::mem::forget(world.iall_reduce(s, &mut forgotten, Op::Sum).unwrap());
            });
            let n = world.size() as i64;
            assert!(dropped.iter().all(|&v| v == n));
            assert!(forgotten.iter().all(|&v| v == 2 * n));
        },
    );
}

#[test]
fn requests_and_communicators_cross_threads() {
    on_ranks(
        "requests_and_communicators_cross_threads",
        &SIZES,
        |world| {
            // A request started here is waited for on another thread (Send).
            let mut buf = vec![3u32; 1000];
            scope(|s| {
                let r = world.iall_reduce(s, &mut buf, Op::Max).unwrap();
                std::thread::scope(|t| t.spawn(move || r.wait().unwrap()).join().unwrap());
            });
            assert!(buf.iter().all(|&v| v == 3));

            // Two threads share the world (Sync) but each issues its
            // collectives on its own duplicate, so the order per communicator
            // is the same on every rank.
            let comms = [world.dup().unwrap(), world.dup().unwrap()];
            std::thread::scope(|t| {
                for (i, comm) in comms.iter().enumerate() {
                    t.spawn(move || {
                        for _ in 0..50 {
                            let mut v = [i as u64 + world.rank() as u64];
                            comm.all_reduce(&mut v, Op::Sum).unwrap();
                            let n = world.size() as u64;
                            assert_eq!(v[0], i as u64 * n + n * (n - 1) / 2);
                        }
                    });
                }
            });
        },
    );
}
