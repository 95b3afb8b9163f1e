//! Group calls through `smd::Group`: results equal the calls one by one,
//! many small allreduces fuse, other calls are refused while a group is
//! open, a refused call fails the group naming it, and a group that is
//! dropped instead of ended still runs.

mod common;

use common::on_ranks;
use smd::{ErrorCode, Group, Op};

#[test]
fn grouped_equals_ungrouped() {
    on_ranks("grouped_equals_ungrouped", &[1, 2, 4], |world| {
        let (rank, size) = (world.rank(), world.size());
        let sizes = [1usize, 7, 100, 4096, 3, 65536];
        let inputs: Vec<Vec<f32>> = sizes
            .iter()
            .map(|&n| (0..n).map(|i| (i % 5) as f32 + rank as f32).collect())
            .collect();
        let mut want = inputs.clone();
        for w in want.iter_mut() {
            world.all_reduce(w, Op::Sum).unwrap();
        }
        let mut got = inputs.clone();
        let mine = [rank as u32; 3];
        let mut gathered = vec![0u32; 3 * size];
        let mut group = Group::start().unwrap();
        for g in got.iter_mut() {
            group.all_reduce(world, g, Op::Sum).unwrap();
        }
        group.all_gather(world, &mine, &mut gathered).unwrap();
        group.end().unwrap();
        assert_eq!(got, want);
        assert_eq!(gathered[3 * (size - 1)], (size - 1) as u32);
    });
}

#[test]
fn other_calls_are_refused_inside_a_group() {
    on_ranks("other_calls_are_refused_inside_a_group", &[2], |world| {
        let mut a = vec![1.0f32; 8];
        let group = Group::start().unwrap();
        let e = world.all_reduce(&mut a, Op::Sum).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidUsage);
        assert_eq!(Group::start().unwrap_err().code(), ErrorCode::InvalidUsage);
        drop(group); // ends it (empty)
        world.all_reduce(&mut a, Op::Sum).unwrap();
        assert_eq!(a[0], 2.0);
    });
}

#[test]
fn refused_call_fails_the_group() {
    on_ranks("refused_call_fails_the_group", &[2], |world| {
        let mut a = vec![1.0f32; 8];
        let mut b = vec![1.0f32; 8];
        let c = vec![1.0f32; 8];
        let mut group = Group::start().unwrap();
        group.all_reduce(world, &mut a, Op::Sum).unwrap();
        assert!(group.broadcast(world, &mut b, 1).is_ok());
        // A peer the communicator does not have is refused by Rust's own
        // check before the library sees it.
        let e = group.send(world, &c, world.size() + 3, 1).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        group.end().unwrap(); // Rust refused it: the library never saw it
        assert_eq!(a[0], 2.0);
    });
}

#[test]
fn dropped_group_runs() {
    on_ranks("dropped_group_runs", &[2], |world| {
        let mut a = vec![3i64; 1000];
        {
            let mut group = Group::start().unwrap();
            group.all_reduce(world, &mut a, Op::Max).unwrap();
        }
        assert_eq!(a[999], 3);
    });
}
