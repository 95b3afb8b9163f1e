//! Every collective, blocking and in place where it has that form, for
//! every datatype (and every operation where it reduces), on 1, 2 and 4
//! ranks launched by smdrun. See common/mod.rs for how a test becomes ranks.

#[macro_use]
mod common;

use common::on_ranks;
use common::values::{OPS, Value, expected, inputs};
use std::any::TypeId;

use smd::{Communicator, Op};

const SIZES: [usize; 3] = [1, 2, 4];
/// Element counts for `T`: empty and odd for every type, and for f32 and
/// bf16 (reduced through f32) also one over the 256 KiB of a pipelined round.
fn counts<T: Value>() -> &'static [usize] {
    let large = [TypeId::of::<f32>(), TypeId::of::<smd::bf16>()];
    if large.contains(&TypeId::of::<T>()) {
        &[0, 37, 150_001]
    } else {
        &[0, 37]
    }
}

fn all_reduce_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    for &n in counts::<T>() {
        for op in OPS {
            let want = expected::<T>(op, size, n);
            let mut buf = inputs::<T>(rank, n);
            world.all_reduce(&mut buf, op).unwrap();
            assert!(
                buf == want,
                "all_reduce {op:?} n={n}: {:?}",
                &buf[..n.min(8)]
            );

            let send = inputs::<T>(rank, n);
            let mut recv = vec![T::of(0); n];
            world.all_reduce_into(&send, &mut recv, op).unwrap();
            assert!(
                recv == want,
                "all_reduce_into {op:?} n={n}: {:?}",
                &recv[..n.min(8)]
            );
        }
    }
}

datatype_test!(all_reduce, SIZES, all_reduce_of);

/// Rank r's block: r + 1 in every element.
fn block<T: Value>(rank: usize, n: usize) -> Vec<T> {
    vec![T::of(rank as i64 + 1); n]
}

fn blocks<T: Value>(size: usize, n: usize) -> Vec<T> {
    (0..size).flat_map(|r| block::<T>(r, n)).collect()
}

fn all_gather_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    for &n in counts::<T>() {
        let mut recv = vec![T::of(0); n * size];
        world.all_gather(&block::<T>(rank, n), &mut recv).unwrap();
        assert_eq!(recv, blocks::<T>(size, n), "all_gather n={n}");

        let mut buf = vec![T::of(0); n * size];
        buf[rank * n..][..n].copy_from_slice(&block::<T>(rank, n));
        world.all_gather_in_place(&mut buf).unwrap();
        assert_eq!(buf, blocks::<T>(size, n), "all_gather_in_place n={n}");
    }
}

datatype_test!(all_gather, SIZES, all_gather_of);

fn reduce_scatter_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    for &n in counts::<T>() {
        for op in [Op::Sum, Op::Max] {
            // Every rank's input is the same pattern over size × n elements;
            // rank r gets block r of its reduction.
            let send = inputs::<T>(rank, n * size);
            let whole = expected::<T>(op, size, n * size);
            let mine = &whole[rank * n..][..n];

            let mut recv = vec![T::of(0); n];
            world.reduce_scatter(&send, &mut recv, op).unwrap();
            assert_eq!(recv, mine, "reduce_scatter {op:?} n={n}");

            let mut buf = send.clone();
            world.reduce_scatter_in_place(&mut buf, op).unwrap();
            assert_eq!(
                &buf[rank * n..][..n],
                mine,
                "reduce_scatter_in_place {op:?} n={n}"
            );
        }
    }
}

datatype_test!(reduce_scatter, SIZES, reduce_scatter_of);

fn broadcast_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    for &n in counts::<T>() {
        for root in 0..size {
            let mut buf = if rank == root {
                block::<T>(root, n)
            } else {
                vec![T::of(0); n]
            };
            world.broadcast(&mut buf, root).unwrap();
            assert_eq!(buf, block::<T>(root, n), "broadcast root={root} n={n}");
        }
    }
}

datatype_test!(broadcast, SIZES, broadcast_of);

fn reduce_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    for &n in counts::<T>() {
        for root in 0..size {
            for op in [Op::Sum, Op::Min, Op::Avg] {
                let mut buf = inputs::<T>(rank, n);
                world.reduce(&mut buf, op, root).unwrap();
                let want = if rank == root {
                    expected::<T>(op, size, n)
                } else {
                    inputs::<T>(rank, n)
                };
                assert_eq!(buf, want, "reduce {op:?} root={root} n={n}");

                let send = inputs::<T>(rank, n);
                // Away from the root the output is not used: give it none.
                let mut recv = vec![T::of(0); if rank == root { n } else { 0 }];
                world.reduce_into(&send, &mut recv, op, root).unwrap();
                if rank == root {
                    assert_eq!(
                        recv,
                        expected::<T>(op, size, n),
                        "reduce_into {op:?} root={root} n={n}"
                    );
                }
            }
        }
    }
}

datatype_test!(reduce, SIZES, reduce_of);

fn all_to_all_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    for &n in counts::<T>() {
        // Block j of rank r's input: 10 r + j + 1 (at most 34: fits i8).
        let value = |from: usize, to: usize| T::of((10 * from + to + 1) as i64);
        let send: Vec<T> = (0..size).flat_map(|to| vec![value(rank, to); n]).collect();
        let mut recv = vec![T::of(0); n * size];
        world.all_to_all(&send, &mut recv).unwrap();
        let want: Vec<T> = (0..size)
            .flat_map(|from| vec![value(from, rank); n])
            .collect();
        assert_eq!(recv, want, "all_to_all n={n}");
    }
}

datatype_test!(all_to_all, SIZES, all_to_all_of);

#[test]
fn barrier() {
    on_ranks("barrier", &SIZES, |world| {
        for _ in 0..100 {
            world.barrier().unwrap();
        }
    });
}

#[test]
fn shared_slices() {
    on_ranks("shared_slices", &SIZES, |world| {
        let (rank, size) = (world.rank(), world.size());
        // 70001 f32: two pipelined rounds, read in place by the peers.
        for n in [0usize, 5, 70_001] {
            let mut mine = world.shared_slice::<f32>(n).unwrap();
            assert!(mine.iter().all(|&x| x == 0.0), "zero-filled");
            for (i, x) in mine.iter_mut().enumerate() {
                *x = (1000 * rank + i) as f32;
            }
            let mut all = world.shared_slice::<f32>(n * size).unwrap();
            world.all_gather(&mine, &mut all).unwrap();
            for (j, x) in all.iter().enumerate() {
                assert_eq!(*x, (1000 * (j / n.max(1)) + j % n.max(1)) as f32, "element {j}");
            }
            let root = size - 1;
            mine.fill((rank + 1) as f32);
            world.broadcast(&mut mine, root).unwrap();
            assert!(mine.iter().all(|&x| x == (root + 1) as f32), "broadcast n={n}");
        }
    });
}
