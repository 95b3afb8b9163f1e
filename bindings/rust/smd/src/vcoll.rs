//! Collectives with per-rank counts (all-gather-v, reduce-scatter-v,
//! all-to-all-v) and receives from any source with their status.
//!
//! `counts[r]` is rank `r`'s block in elements; `displs[r]` where it starts
//! in the slice that holds every block (`None`: packed in rank order).
//! Every rank passes the same counts (ranks that differ all get
//! [`ErrorCode::Mismatch`](crate::ErrorCode::Mismatch)); displacements are
//! each rank's own layout. All-to-all-v's counts differ between ranks by
//! design: there each pair must agree (see [`Communicator::all_to_all_v`]).

use std::os::raw::c_int;
use std::ptr;

use smd_sys as sys;

use crate::comm::Communicator;
use crate::datatype::{Datatype, Op};
use crate::error::{Error, Result, check, to_c_int};

/// Which senders and tags a receive accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Only this rank.
    Rank(usize),
    /// Any rank of the communicator (`SMD_ANY_SOURCE`).
    Any,
}

/// What a receive got: the sender, the message's tag and its length in
/// elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub source: usize,
    pub tag: u32,
    pub count: usize,
}

/// The blocks' extent in elements (checked: blocks fit `len`, counts has one
/// entry per rank) and the C displacement pointer.
fn layout(
    comm: &Communicator,
    what: &str,
    counts: &[usize],
    displs: Option<&[usize]>,
    len: usize,
) -> Result<*const usize> {
    let size = comm.size();
    if counts.len() != size || displs.is_some_and(|d| d.len() != size) {
        return Err(Error::invalid(format!(
            "{what}: counts and displs need one entry per rank ({size})"
        )));
    }
    let mut packed = 0usize;
    for r in 0..size {
        let start = displs.map_or(packed, |d| d[r]);
        let end = start
            .checked_add(counts[r])
            .ok_or_else(|| Error::invalid(format!("{what}: block {r} overflows")))?;
        if counts[r] > 0 && end > len {
            return Err(Error::invalid(format!(
                "{what}: block {r} ends at element {end}, past the slice's {len}"
            )));
        }
        packed = end;
    }
    Ok(displs.map_or(ptr::null(), |d| d.as_ptr()))
}

impl Communicator {
    /// Gathers every rank's `send` (`counts[rank()]` elements) into `recv`:
    /// rank `r`'s block at `displs[r]` (packed when `None`).
    pub fn all_gather_v<T: Datatype>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: Option<&[usize]>,
    ) -> Result<()> {
        let d = layout(self, "all_gather_v", counts, displs, recv.len())?;
        if send.len() != counts[self.rank()] {
            return Err(Error::invalid("all_gather_v: send.len() must be counts[rank()]"));
        }
        // SAFETY: the blocks lie inside recv and send holds this rank's
        // block (checked above); counts and displs have size() entries.
        check(unsafe {
            sys::smd_allgatherv(send.as_ptr().cast(), recv.as_mut_ptr().cast(), counts.as_ptr(), d,
                                T::DATATYPE, self.as_raw(), ptr::null_mut())
        })
    }

    /// All-gather-v in place: this rank's block of `buf` is its input.
    pub fn all_gather_v_in_place<T: Datatype>(
        &self,
        buf: &mut [T],
        counts: &[usize],
        displs: Option<&[usize]>,
    ) -> Result<()> {
        let d = layout(self, "all_gather_v_in_place", counts, displs, buf.len())?;
        let me = self.rank();
        let start = displs.map_or_else(|| counts[..me].iter().sum(), |d| d[me]);
        let p = buf.as_mut_ptr();
        // SAFETY: as all_gather_v; the input is this rank's block of buf.
        check(unsafe {
            sys::smd_allgatherv(p.wrapping_add(start).cast(), p.cast(), counts.as_ptr(), d,
                                T::DATATYPE, self.as_raw(), ptr::null_mut())
        })
    }

    /// Reduces `send`'s blocks over the ranks; this rank's block of the
    /// result (`counts[rank()]` elements) lands in `recv`.
    pub fn reduce_scatter_v<T: Datatype>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: Option<&[usize]>,
        op: Op,
    ) -> Result<()> {
        let d = layout(self, "reduce_scatter_v", counts, displs, send.len())?;
        if recv.len() != counts[self.rank()] {
            return Err(Error::invalid("reduce_scatter_v: recv.len() must be counts[rank()]"));
        }
        // SAFETY: the blocks lie inside send, recv holds this rank's block.
        check(unsafe {
            sys::smd_reduce_scatterv(send.as_ptr().cast(), recv.as_mut_ptr().cast(),
                                     counts.as_ptr(), d, T::DATATYPE, op.raw(), self.as_raw(),
                                     ptr::null_mut())
        })
    }

    /// Sends `send_counts[j]` elements (at `send_displs[j]` of `send`) to
    /// rank `j` and receives `recv_counts[i]` elements from rank `i` into
    /// `recv` at `recv_displs[i]` (packed when `None`). Rank `i`'s
    /// `send_counts[j]` must equal rank `j`'s `recv_counts[i]`: a pair that
    /// disagrees fails with [`ErrorCode::Truncated`](crate::ErrorCode::Truncated)
    /// on the receiving rank. `send` and `recv` are separate slices: there
    /// is no in-place form.
    pub fn all_to_all_v<T: Datatype>(
        &self,
        send: &[T],
        send_counts: &[usize],
        send_displs: Option<&[usize]>,
        recv: &mut [T],
        recv_counts: &[usize],
        recv_displs: Option<&[usize]>,
    ) -> Result<()> {
        let sd = layout(self, "all_to_all_v (send)", send_counts, send_displs, send.len())?;
        let rd = layout(self, "all_to_all_v (recv)", recv_counts, recv_displs, recv.len())?;
        // SAFETY: every block lies inside its slice and the count and
        // displacement slices have size() entries (checked above); the
        // borrows keep send and recv apart.
        check(unsafe {
            sys::smd_alltoallv(send.as_ptr().cast(), send_counts.as_ptr(), sd,
                               recv.as_mut_ptr().cast(), recv_counts.as_ptr(), rd, T::DATATYPE,
                               self.as_raw(), ptr::null_mut())
        })
    }

    /// Receives a message from `source` (a rank or any) with `tag` (`None`:
    /// any tag) into `buf`, and says who sent it, with which tag, and how
    /// many elements arrived.
    pub fn recv_status<T: Datatype>(
        &self,
        buf: &mut [T],
        source: Source,
        tag: Option<u32>,
    ) -> Result<Status> {
        let peer: c_int = match source {
            Source::Rank(r) => to_c_int(r, "source")?,
            Source::Any => sys::SMD_ANY_SOURCE,
        };
        let tag: c_int = match tag {
            Some(t) => to_c_int(t as usize, "tag")?,
            None => sys::SMD_ANY_TAG,
        };
        let mut st = sys::smd_status_t::default();
        // SAFETY: st is a valid out-parameter.
        check(unsafe { sys::smd_status_init(&mut st) })?;
        // SAFETY: buf is writable for buf.len() elements of T.
        check(unsafe {
            sys::smd_recv_status(buf.as_mut_ptr().cast(), buf.len(), T::DATATYPE, peer, tag,
                                 self.as_raw(), ptr::null_mut(), &mut st)
        })?;
        Ok(Status { source: st.source as usize, tag: st.tag as u32, count: st.count })
    }
}
