//! Error paths: arguments refused before the library is called, arguments
//! the library refuses, and failures of a job — ranks that disagree, a rank
//! that never comes (timeout), a rank killed mid-collective, an abort.

mod common;

use std::env;
use std::time::{Duration, Instant};

use common::{Launch, on_ranks, run_job};
use smd::{Communicator, Error, ErrorCode, InitOptions, Op};

/// An argument error made in Rust: the library was not called, so the
/// message is the binding's (the library's name their function, smd_*).
fn refused_by_rust<T: std::fmt::Debug>(r: smd::Result<T>, method: &str) -> Error {
    let e = r.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().starts_with(method), "{e}");
    e
}

fn refused_by_library<T: std::fmt::Debug>(r: smd::Result<T>, function: &str) -> Error {
    let e = r.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().starts_with(function), "{e}");
    e
}

#[test]
fn arguments_checked_in_rust() {
    on_ranks("arguments_checked_in_rust", &[1, 2], |world| {
        let size = world.size();
        let mut out = vec![0.0f32; 3 * size + 1];
        let mut small = [0.0f32; 2];
        refused_by_rust(
            world.all_reduce_into(&[1.0f32; 3], &mut small, Op::Sum),
            "all_reduce",
        );
        refused_by_rust(world.all_gather(&[1.0f32; 3], &mut out), "all_gather");
        refused_by_rust(
            world.reduce_scatter(&out, &mut small, Op::Sum),
            "reduce_scatter",
        );
        refused_by_rust(world.all_to_all(&[1u8; 4], &mut [0u8; 5]), "all_to_all");
        refused_by_rust(
            world.reduce_into(&[1i32; 2], &mut [0i32; 3], Op::Sum, world.rank()),
            "reduce",
        );
        refused_by_rust(world.broadcast(&mut small, size), "broadcast");
        refused_by_rust(world.reduce(&mut small, Op::Max, size + 5), "reduce");
        refused_by_rust(world.send(&small, size, 0), "send");
        refused_by_rust(world.recv(&mut small, usize::MAX, 0), "recv");
        refused_by_rust(world.send(&small, 0, u32::MAX), "send");
        refused_by_rust(world.split(Some(u32::MAX), 0), "split");
        if size > 1 {
            // Lengths that are not a multiple of the size.
            let mut odd = vec![0i64; 2 * size + 1];
            refused_by_rust(world.all_gather_in_place(&mut odd), "all_gather_in_place");
            refused_by_rust(
                world.reduce_scatter_in_place(&mut odd, Op::Sum),
                "reduce_scatter_in_place",
            );
            refused_by_rust(world.all_to_all(&odd, &mut odd.clone()), "all_to_all");
            let e = refused_by_rust(world.all_gather(&[1u8], &mut [0u8; 1]), "all_gather");
            assert_eq!(
                e.to_string(),
                format!("SMD_ERR_INVALID_ARGUMENT: {}", e.message())
            );
        }
        // Nothing reached the library, so every rank is still in step.
        world.barrier().unwrap();
    });
}

#[test]
fn arguments_checked_by_the_library() {
    on_ranks("arguments_checked_by_the_library", &[1, 2], |world| {
        let tag = smd::sys::SMD_TAG_MAX + 1;
        refused_by_library(world.send(&[1u8], 0, tag), "smd_send");
        refused_by_library(world.create_group(&[0, 0]), "smd_comm_create_group");
        refused_by_library(world.rank_info(world.size()), "smd_comm_rank_info");
        let bad = smd::GroupsConfig::new(1, 1).placement("XYZ");
        refused_by_library(bad.layout(4, 0, smd::GroupKind::Tp), "smd_groups_layout");
        refused_by_library(
            Communicator::init_with(&InitOptions::new().store_addr("")),
            "smd_comm_init",
        );
        world.barrier().unwrap();
    });
}

#[test]
fn ranks_that_disagree_get_mismatch() {
    on_ranks("ranks_that_disagree_get_mismatch", &[2], |world| {
        let mut buf = vec![1.0f32; 4 + 4 * world.rank()];
        let e = world.all_reduce(&mut buf, Op::Sum).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Mismatch, "{e}");
        assert!(e.message().contains("smd_allreduce"), "{e}");
    });
}

/// The world from smdrun's variables, passed explicitly, with a short
/// deadline: this is also the test of `init_with`.
fn world_with_timeout(timeout: Duration) -> Communicator {
    let var = |name: &str| env::var(name).unwrap_or_else(|_| panic!("{name} is set by smdrun"));
    let options = InitOptions::new()
        .rank(var("SMD_RANK").parse().unwrap())
        .world_size(var("SMD_WORLD_SIZE").parse().unwrap())
        .store_addr(&var("SMD_MASTER_ADDR"))
        .store_port(var("SMD_MASTER_PORT").parse().unwrap())
        .job_token(&var("SMD_JOB_TOKEN"))
        .timeout(timeout)
        .transport("shm");
    Communicator::init_with(&options).expect("init_with")
}

#[test]
fn a_rank_that_never_comes_is_a_timeout() {
    run_job(
        "a_rank_that_never_comes_is_a_timeout",
        Launch::ranks(2),
        || {
            let world = world_with_timeout(Duration::from_millis(1500));
            // Rank 0 creates this file once its call has ended: until then
            // rank 1 stays away from the collective, and alive (however slow
            // the machine), so rank 0 sees a timeout, not a dead peer.
            let token = env::var("SMD_JOB_TOKEN").expect("SMD_JOB_TOKEN is set by smdrun");
            let done = env::temp_dir().join(format!("smd-rs-timeout-{token}"));
            if world.rank() == 1 {
                let limit = Instant::now() + Duration::from_secs(120);
                while !done.exists() {
                    assert!(Instant::now() < limit, "rank 0 never finished its call");
                    std::thread::sleep(Duration::from_millis(10));
                }
                std::fs::remove_file(&done).unwrap();
                return;
            }
            let start = Instant::now();
            let result = world.all_reduce(&mut [1i32], Op::Sum);
            let waited = start.elapsed();
            std::fs::write(&done, b"").unwrap();
            let e = result.unwrap_err();
            assert_eq!(e.code(), ErrorCode::Timeout, "{e}");
            assert!(
                waited >= Duration::from_secs(1) && waited < Duration::from_secs(5),
                "{waited:?}"
            );
            println!("timeout after {waited:?}: {e}");
        },
    );
}

unsafe extern "C" {
    fn kill(pid: i32, signal: i32) -> i32;
}
const SIGKILL: i32 = 9;

#[test]
fn a_killed_peer_is_a_peer_failure() {
    let launch = Launch {
        ranks: 3,
        status: 128 + SIGKILL, // smdrun reports the first failure: the victim
        finished: 2,
        grace: Duration::from_secs(20),
    };
    run_job("a_killed_peer_is_a_peer_failure", launch, || {
        let world = Communicator::init().unwrap();
        let victim = world.size() - 1;
        let mut buf = vec![1.0f32; 1 << 16];
        let mut i = 0;
        let (e, waited) = loop {
            if world.rank() == victim && i == 20 {
                let pid = i32::try_from(std::process::id()).unwrap();
                // SAFETY: kill(2) with our own pid; no memory is involved.
                unsafe { kill(pid, SIGKILL) };
            }
            let start = Instant::now();
            if let Err(e) = world.all_reduce(&mut buf, Op::Sum) {
                break (e, start.elapsed());
            }
            i += 1;
        };
        assert_eq!(e.code(), ErrorCode::PeerFailure, "{e}");
        assert!(waited < Duration::from_secs(10), "noticed after {waited:?}");
        println!("peer failure after {waited:?}: {e}");
    });
}

#[test]
fn abort_from_another_thread_unblocks_every_rank() {
    on_ranks(
        "abort_from_another_thread_unblocks_every_rank",
        &[2],
        |world| {
            // No sleeps order it: rank 0 aborts once its statistics count
            // the barrier as started (rank 1 has not come, so it waits),
            // and rank 1 comes only after a world barrier that rank 0
            // enters once its call has returned.
            let comm = world.dup().unwrap();
            let start = Instant::now();
            let result = if world.rank() == 0 {
                let before = comm.stats().unwrap().collectives;
                let r = std::thread::scope(|s| {
                    s.spawn(|| {
                        while comm.stats().unwrap().collectives == before {
                            std::thread::yield_now();
                        }
                        comm.abort().unwrap();
                    });
                    comm.barrier() // rank 1 is not there yet
                });
                world.barrier().unwrap();
                r
            } else {
                world.barrier().unwrap();
                comm.barrier()
            };
            let e = result.unwrap_err();
            assert_eq!(e.code(), ErrorCode::Aborted, "{e}");
            assert!(start.elapsed() < Duration::from_secs(10));
            assert_eq!(comm.async_error().unwrap(), Some(ErrorCode::Aborted));
        },
    );
}
