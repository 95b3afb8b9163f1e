//! Point-to-point messages on 2 and 4 ranks: a ring, blocking and
//! nonblocking, for every datatype; short receives; truncation.

#[macro_use]
mod common;

use common::on_ranks;
use common::values::{Value, inputs};
use smd::{Communicator, ErrorCode, scope};

const SIZES: [usize; 2] = [2, 4];

fn ring_of<T: Value>(world: &Communicator) {
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let mine = inputs::<T>(rank, 33);

    // Nonblocking: post the receive, send, wait for both.
    let mut got = vec![T::of(0); 33];
    let n = scope(|s| {
        let recv = world.irecv(s, &mut got, prev, 5).unwrap();
        let send = world.isend(s, &mine, next, 5).unwrap();
        assert_eq!(send.wait().unwrap(), 33);
        recv.wait().unwrap()
    });
    assert_eq!((n, &got), (33, &inputs::<T>(prev, 33)));

    // Blocking, into a larger buffer: the count says how much arrived.
    // Even ranks send first so that the ring cannot deadlock.
    let mut big = vec![T::of(0); 100];
    let n = if rank % 2 == 0 {
        world.send(&mine[..7], next, 6).unwrap();
        world.recv(&mut big, prev, 6).unwrap()
    } else {
        let n = world.recv(&mut big, prev, 6).unwrap();
        world.send(&mine[..7], next, 6).unwrap();
        n
    };
    assert_eq!((n, &big[..7]), (7, &inputs::<T>(prev, 7)[..]));
}

datatype_test!(ring, SIZES, ring_of);

#[test]
fn messages_with_one_tag_arrive_in_order() {
    on_ranks("messages_with_one_tag_arrive_in_order", &SIZES, |world| {
        if world.rank() == 0 {
            for i in 0..20u32 {
                world.send(&[i], 1, 0).unwrap();
            }
        } else if world.rank() == 1 {
            for i in 0..20u32 {
                let mut v = [u32::MAX];
                world.recv(&mut v, 0, 0).unwrap();
                assert_eq!(v[0], i);
            }
        }
    });
}

#[test]
fn a_message_longer_than_the_buffer_is_truncated() {
    on_ranks(
        "a_message_longer_than_the_buffer_is_truncated",
        &SIZES,
        |world| {
            if world.rank() == 0 {
                // The send may or may not see the failure; only the receiver must.
                let _ = world.send(&[1.0f64; 16], 1, 9);
            } else if world.rank() == 1 {
                let mut small = [0.0f64; 4];
                let e = world.recv(&mut small, 0, 9).unwrap_err();
                assert_eq!(e.code(), ErrorCode::Truncated, "{e}");
                assert!(!e.message().is_empty());
            }
        },
    );
}
