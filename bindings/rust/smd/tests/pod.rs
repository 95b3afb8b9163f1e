//! Users' own plain-old-data types ([`smd::Pod`]) over real ranks: a
//! `#[repr(C)]` struct sent and received, broadcast and all-gathered as
//! bytes, and a message that is not a whole number of values refused.

#[macro_use]
mod common;

use common::on_ranks;
use smd::{ErrorCode, Pod};

/// 24 bytes: u64, f64, two u32s; no padding, any bits valid.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Record {
    step: u64,
    loss: f64,
    rank: u32,
    flags: [u8; 4],
}
// SAFETY: repr(C), Pod fields, 8 + 8 + 4 + 4 bytes leave no padding, and
// every bit pattern is a valid Record.
unsafe impl Pod for Record {}

fn record(rank: usize, step: u64) -> Record {
    Record {
        step,
        loss: rank as f64 * 0.5,
        rank: rank as u32,
        flags: [rank as u8, 1, 2, 3],
    }
}

const EMPTY: Record = Record {
    step: 0,
    loss: 0.0,
    rank: 0,
    flags: [0; 4],
};

#[test]
fn records_travel_whole() {
    on_ranks("records_travel_whole", &[2, 3], |world| {
        let (rank, size) = (world.rank(), world.size());
        // Point to point: rank 0 sends three records to rank 1.
        if rank == 0 {
            world
                .send_pod(&[record(0, 1), record(0, 2), record(0, 3)], 1, 11)
                .unwrap();
        } else if rank == 1 {
            let mut got = [EMPTY; 8];
            let n = world.recv_pod(&mut got, 0, 11).unwrap();
            assert_eq!(&got[..n], &[record(0, 1), record(0, 2), record(0, 3)]);
        }
        // Broadcast from the last rank.
        let mut shared = [if rank == size - 1 {
            record(rank, 42)
        } else {
            EMPTY
        }; 2];
        world.broadcast_pod(&mut shared, size - 1).unwrap();
        assert_eq!(shared, [record(size - 1, 42); 2]);
        // All-gather: one record per rank, in rank order.
        let mut all = vec![EMPTY; size];
        world.all_gather_pod(&[record(rank, 5)], &mut all).unwrap();
        assert_eq!(all, (0..size).map(|r| record(r, 5)).collect::<Vec<_>>());
    });
}

#[test]
fn partial_records_are_refused() {
    on_ranks("partial_records_are_refused", &[2], |world| {
        if world.rank() == 0 {
            world.send(&[1u8; 30], 1, 12).unwrap(); // 30 bytes: 1.25 records
        } else {
            let mut got = [EMPTY; 2];
            let e = world.recv_pod(&mut got, 0, 12).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
            assert!(
                e.to_string()
                    .contains("not a whole number of 24-byte values"),
                "{e}"
            );
        }
    });
}
