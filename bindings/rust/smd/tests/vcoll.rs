//! All-gather-v and reduce-scatter-v with uneven and zero counts, and
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
