//! Revoke, agree and shrink (docs/ELASTIC.md) on a healthy communicator of
//! 1 and 2 ranks: a revoked communicator's calls fail with
//! `ErrorCode::Revoked`; agree ANDs the flags and finds no failures; shrink
//! keeps everyone and works. Grow by nobody forms a successor of the same
//! members; a joiner with a wrong token is refused and disturbs nobody.

mod common;

use common::on_ranks;
use smd::{Communicator, ErrorCode, InitOptions, Op};

#[test]
fn revoke_agree_shrink() {
    on_ranks("revoke_agree_shrink", &[1, 2], |world| {
        let (rank, size) = (world.rank(), world.size());
        let comm = world.dup().unwrap();
        comm.revoke().unwrap();
        let mut v = [1u64];
        assert_eq!(
            comm.all_reduce(&mut v, Op::Sum).unwrap_err().code(),
            ErrorCode::Revoked
        );
        let (flag, failed) = comm.agree(!(1u32 << rank)).unwrap();
        let want = (0..size).fold(u32::MAX, |f, r| f & !(1u32 << r));
        assert_eq!((flag, failed), (want, vec![]));
        let (shrunk, old_to_new) = comm.shrink().unwrap();
        assert_eq!(old_to_new, (0..size).map(Some).collect::<Vec<_>>());
        assert_eq!((shrunk.rank(), shrunk.size()), (rank, size));
        let mut v = [rank as u64];
        shrunk.all_reduce(&mut v, Op::Sum).unwrap();
        assert_eq!(v[0] as usize, size * (size - 1) / 2);
    });
}

#[test]
fn grow_by_none_and_a_refused_joiner() {
    on_ranks("grow_by_none_and_a_refused_joiner", &[2], |world| {
        let (rank, size) = (world.rank(), world.size());
        if rank == 1 {
            // The job's store (from smdrun's environment), a wrong token.
            let options = InitOptions::new().job_token("not-the-job-token");
            let err = Communicator::join_with(&options).unwrap_err();
            assert_eq!(err.code(), ErrorCode::Bootstrap, "{err}");
            assert!(err.to_string().contains("token mismatch"), "{err}");
        }
        let grown = world.grow(0, None).unwrap();
        assert_eq!((grown.rank(), grown.size()), (rank, size));
        let mut v = [rank as u64 + 1];
        grown.all_reduce(&mut v, Op::Sum).unwrap();
        assert_eq!(v[0] as usize, size * (size + 1) / 2);
    });
}
