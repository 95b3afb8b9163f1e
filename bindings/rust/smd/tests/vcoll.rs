//! All-gather-v, reduce-scatter-v and all-to-all-v with uneven and zero
//! counts, and
//! receives from any source, on 2 and 3 ranks.

#[macro_use]
mod common;

use common::on_ranks;
use smd::{Op, Source, Status};

const SIZES: [usize; 2] = [2, 3];

fn counts(size: usize) -> Vec<usize> {
    (0..size).map(|r| (r * 5 + 2) % 7).collect()
}

#[test]
fn all_gather_v_and_reduce_scatter_v() {
    on_ranks("all_gather_v_and_reduce_scatter_v", &SIZES, |world| {
        let (me, p) = (world.rank(), world.size());
        let c = counts(p);
        let total: usize = c.iter().sum();
        let mine = vec![me as f32 + 1.0; c[me]];
        let mut all = vec![0.0f32; total];
        world.all_gather_v(&mine, &mut all, &c, None).unwrap();
        let want: Vec<f32> = (0..p).flat_map(|r| vec![r as f32 + 1.0; c[r]]).collect();
        assert_eq!(all, want);

        let mut again = vec![0.0f32; total];
        let start: usize = c[..me].iter().sum();
        again[start..start + c[me]].copy_from_slice(&mine);
        world.all_gather_v_in_place(&mut again, &c, None).unwrap();
        assert_eq!(again, want);

        let send: Vec<f64> = (0..total).map(|i| (i + me) as f64).collect();
        let mut got = vec![0.0f64; c[me]];
        world.reduce_scatter_v(&send, &mut got, &c, None, Op::Sum).unwrap();
        for (i, v) in got.iter().enumerate() {
            let want: f64 = (0..p).map(|r| (start + i + r) as f64).sum();
            assert_eq!(*v, want);
        }
        // A slice too short for the blocks is refused before any call.
        assert!(world.all_gather_v(&mine, &mut all[..total.saturating_sub(1)], &c, None).is_err()
            || total == 0);
    });
}

// Elements rank `from` sends rank `to`: uneven, some zero.
fn pair_count(from: usize, to: usize) -> usize {
    (from * 3 + to * 5) % 4
}

#[test]
fn all_to_all_v_uneven_and_disagreeing() {
    on_ranks("all_to_all_v_uneven_and_disagreeing", &SIZES, |world| {
        let (me, p) = (world.rank(), world.size());
        let sc: Vec<usize> = (0..p).map(|j| pair_count(me, j)).collect();
        let rc: Vec<usize> = (0..p).map(|i| pair_count(i, me)).collect();
        let send: Vec<i32> =
            (0..p).flat_map(|j| vec![(me * 10 + j) as i32; sc[j]]).collect();
        // Received blocks in reverse order with a gap of 2 before each.
        let mut rd = vec![0usize; p];
        let mut at = 0;
        for i in (0..p).rev() {
            rd[i] = at + 2;
            at = rd[i] + rc[i];
        }
        let mut recv = vec![-1i32; at];
        world.all_to_all_v(&send, &sc, None, &mut recv, &rc, Some(&rd)).unwrap();
        for i in 0..p {
            assert!(recv[rd[i]..rd[i] + rc[i]].iter().all(|&v| v == (i * 10 + me) as i32));
            assert_eq!(recv[rd[i] - 2..rd[i]], [-1, -1]);
        }
        // Rank 1 expects one more element from rank 0 than rank 0 sends.
        let dup = world.dup().unwrap();
        let mut rc2 = vec![3usize; p];
        if me == 1 {
            rc2[0] = 4;
        }
        let mut recv2 = vec![0i32; rc2.iter().sum()];
        let r = dup.all_to_all_v(&vec![7i32; 3 * p], &vec![3; p], None, &mut recv2, &rc2, None);
        if me == 1 {
            assert_eq!(r.unwrap_err().code(), smd::ErrorCode::Truncated);
        }
    });
}

#[test]
fn recv_from_any_source() {
    on_ranks("recv_from_any_source", &SIZES, |world| {
        let (me, p) = (world.rank(), world.size());
        if me != 0 {
            world.send(&vec![me as u32; me + 1], 0, me as u32).unwrap();
        } else {
            let mut seen = Vec::new();
            for _ in 1..p {
                let mut buf = vec![0u32; p + 1];
                let st: Status = world.recv_status(&mut buf, Source::Any, None).unwrap();
                assert_eq!((st.tag as usize, st.count), (st.source, st.source + 1));
                assert!(buf[..st.count].iter().all(|&v| v as usize == st.source));
                seen.push(st.source);
            }
            seen.sort();
            assert_eq!(seen, (1..p).collect::<Vec<_>>());
        }
        world.barrier().unwrap();
    });
}
