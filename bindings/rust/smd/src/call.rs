//! One operation's arguments, checked in Rust, ready for the C call.
//!
//! Every collective and point-to-point method, blocking or not, builds a
//! [`Call`] here (checking slice lengths, roots and peers against the
//! communicator before the library sees them) and hands it to
//! [`Call::issue`], the only place that calls the collective entry points.

use std::os::raw::{c_int, c_void};
use std::ptr;

use smd_sys as sys;

use crate::comm::Communicator;
use crate::datatype::{Datatype, Op};
use crate::error::{Error, Result, to_c_int};

#[derive(Debug, Clone, Copy)]
enum Kind {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    AllToAll,
    Barrier,
    Send,
    Recv,
}

/// A checked operation. Its pointers come from slices the caller borrows
/// for as long as the operation may use them.
#[derive(Debug)]
pub(crate) struct Call {
    kind: Kind,
    send: *const c_void,
    recv: *mut c_void,
    /// In elements, as the C function takes it (per block where it has blocks).
    count: usize,
    datatype: sys::smd_datatype_t,
    op: sys::smd_op_t,
    /// The root of a rooted collective, or the peer of a send or receive.
    rank: c_int,
    tag: c_int,
}

impl Call {
    fn new<T: Datatype>(kind: Kind, send: *const T, recv: *mut T, count: usize) -> Call {
        Call {
            kind,
            send: send.cast(),
            recv: recv.cast(),
            count,
            datatype: T::DATATYPE,
            op: sys::smd_op_t::SMD_SUM,
            rank: 0,
            tag: 0,
        }
    }

    fn op(mut self, op: Op) -> Call {
        self.op = op.raw();
        self
    }

    fn rank(mut self, rank: c_int) -> Call {
        self.rank = rank;
        self
    }

    /// Runs the operation (`request` = None) or starts it and stores its
    /// request (`request` = Some).
    ///
    /// # Safety
    /// `comm` is a live communicator, and the buffers behind the call's
    /// pointers stay valid and untouched by Rust until the operation has
    /// finished: until this returns for a blocking call, until the request
    /// is waited for or freed otherwise.
    pub(crate) unsafe fn issue(
        &self,
        comm: *mut sys::smd_comm_t,
        request: Option<&mut *mut sys::smd_request_t>,
    ) -> sys::smd_result_t {
        let stream: sys::smd_stream_t = ptr::null_mut();
        let (s, r, n, dt, op, rank, tag) = (
            self.send,
            self.recv,
            self.count,
            self.datatype,
            self.op,
            self.rank,
            self.tag,
        );
        // SAFETY: forwarded from this function's contract; the pointers
        // and counts come from slices checked by the constructors below.
        unsafe {
            match (self.kind, request) {
                (Kind::AllReduce, None) => sys::smd_allreduce(s, r, n, dt, op, comm, stream),
                (Kind::AllReduce, Some(q)) => sys::smd_iallreduce(s, r, n, dt, op, comm, stream, q),
                (Kind::AllGather, None) => sys::smd_allgather(s, r, n, dt, comm, stream),
                (Kind::AllGather, Some(q)) => sys::smd_iallgather(s, r, n, dt, comm, stream, q),
                (Kind::ReduceScatter, None) => {
                    sys::smd_reduce_scatter(s, r, n, dt, op, comm, stream)
                }
                (Kind::ReduceScatter, Some(q)) => {
                    sys::smd_ireduce_scatter(s, r, n, dt, op, comm, stream, q)
                }
                (Kind::Broadcast, None) => sys::smd_broadcast(s, r, n, dt, rank, comm, stream),
                (Kind::Broadcast, Some(q)) => {
                    sys::smd_ibroadcast(s, r, n, dt, rank, comm, stream, q)
                }
                (Kind::Reduce, None) => sys::smd_reduce(s, r, n, dt, op, rank, comm, stream),
                (Kind::Reduce, Some(q)) => sys::smd_ireduce(s, r, n, dt, op, rank, comm, stream, q),
                (Kind::AllToAll, None) => sys::smd_alltoall(s, r, n, dt, comm, stream),
                (Kind::AllToAll, Some(q)) => sys::smd_ialltoall(s, r, n, dt, comm, stream, q),
                (Kind::Barrier, None) => sys::smd_barrier(comm, stream),
                (Kind::Barrier, Some(q)) => sys::smd_ibarrier(comm, stream, q),
                (Kind::Send, None) => sys::smd_send(s, n, dt, rank, tag, comm, stream),
                (Kind::Send, Some(q)) => sys::smd_isend(s, n, dt, rank, tag, comm, stream, q),
                (Kind::Recv, None) => sys::smd_recv(r, n, dt, rank, tag, comm, stream),
                (Kind::Recv, Some(q)) => sys::smd_irecv(r, n, dt, rank, tag, comm, stream, q),
            }
        }
    }
}

/// `len` split into `size` equal blocks: the block length.
fn blocks(what: &str, name: &str, len: usize, size: usize) -> Result<usize> {
    if len % size != 0 {
        return Err(Error::invalid(format!(
            "{what}: {name} has {len} elements, not a multiple of the {size} ranks"
        )));
    }
    Ok(len / size)
}

fn same_len(what: &str, expected: usize, name: &str, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(Error::invalid(format!(
            "{what}: {name} has {actual} elements, expected {expected}"
        )));
    }
    Ok(())
}

fn member(what: &str, name: &str, rank: usize, comm: &Communicator) -> Result<c_int> {
    if rank >= comm.size() {
        return Err(Error::invalid(format!(
            "{what}: {name} {rank} is not a rank of the communicator (size {})",
            comm.size()
        )));
    }
    to_c_int(rank, name)
}

pub(crate) fn all_reduce<T: Datatype>(send: &[T], recv: &mut [T], op: Op) -> Result<Call> {
    same_len("all_reduce", send.len(), "recv", recv.len())?;
    Ok(Call::new(
        Kind::AllReduce,
        send.as_ptr(),
        recv.as_mut_ptr(),
        send.len(),
    )
    .op(op))
}

pub(crate) fn all_reduce_in_place<T: Datatype>(buf: &mut [T], op: Op) -> Call {
    let p = buf.as_mut_ptr();
    Call::new(Kind::AllReduce, p, p, buf.len()).op(op)
}

pub(crate) fn all_gather<T: Datatype>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
) -> Result<Call> {
    let expected = send
        .len()
        .checked_mul(comm.size())
        .ok_or_else(|| Error::invalid("all_gather: send.len() × size overflows"))?;
    same_len("all_gather", expected, "recv (size × send)", recv.len())?;
    Ok(Call::new(
        Kind::AllGather,
        send.as_ptr(),
        recv.as_mut_ptr(),
        send.len(),
    ))
}

pub(crate) fn all_gather_in_place<T: Datatype>(comm: &Communicator, buf: &mut [T]) -> Result<Call> {
    let count = blocks("all_gather_in_place", "buf", buf.len(), comm.size())?;
    let p = buf.as_mut_ptr();
    // In place: this rank's block of the output is the input.
    let send = p.wrapping_add(comm.rank() * count);
    Ok(Call::new(Kind::AllGather, send, p, count))
}

pub(crate) fn reduce_scatter<T: Datatype>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    op: Op,
) -> Result<Call> {
    let count = blocks("reduce_scatter", "send", send.len(), comm.size())?;
    same_len("reduce_scatter", count, "recv (send / size)", recv.len())?;
    Ok(Call::new(Kind::ReduceScatter, send.as_ptr(), recv.as_mut_ptr(), count).op(op))
}

pub(crate) fn reduce_scatter_in_place<T: Datatype>(
    comm: &Communicator,
    buf: &mut [T],
    op: Op,
) -> Result<Call> {
    let count = blocks("reduce_scatter_in_place", "buf", buf.len(), comm.size())?;
    let p = buf.as_mut_ptr();
    // In place: the result lands in this rank's block of the input.
    let recv = p.wrapping_add(comm.rank() * count);
    Ok(Call::new(Kind::ReduceScatter, p, recv, count).op(op))
}

pub(crate) fn broadcast<T: Datatype>(
    comm: &Communicator,
    buf: &mut [T],
    root: usize,
) -> Result<Call> {
    let root = member("broadcast", "root", root, comm)?;
    let p = buf.as_mut_ptr();
    Ok(Call::new(Kind::Broadcast, p, p, buf.len()).rank(root))
}

pub(crate) fn reduce<T: Datatype>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    op: Op,
    root: usize,
) -> Result<Call> {
    let c_root = member("reduce", "root", root, comm)?;
    let recv = if comm.rank() == root {
        same_len("reduce", send.len(), "recv (at the root)", recv.len())?;
        recv.as_mut_ptr()
    } else {
        ptr::null_mut()
    };
    Ok(Call::new(Kind::Reduce, send.as_ptr(), recv, send.len())
        .op(op)
        .rank(c_root))
}

pub(crate) fn reduce_in_place<T: Datatype>(
    comm: &Communicator,
    buf: &mut [T],
    op: Op,
    root: usize,
) -> Result<Call> {
    let root = member("reduce", "root", root, comm)?;
    let p = buf.as_mut_ptr();
    Ok(Call::new(Kind::Reduce, p, p, buf.len()).op(op).rank(root))
}

pub(crate) fn all_to_all<T: Datatype>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
) -> Result<Call> {
    let count = blocks("all_to_all", "send", send.len(), comm.size())?;
    same_len("all_to_all", send.len(), "recv", recv.len())?;
    Ok(Call::new(
        Kind::AllToAll,
        send.as_ptr(),
        recv.as_mut_ptr(),
        count,
    ))
}

pub(crate) fn barrier() -> Call {
    Call::new::<u8>(Kind::Barrier, ptr::null(), ptr::null_mut(), 0)
}

pub(crate) fn send<T: Datatype>(
    comm: &Communicator,
    buf: &[T],
    peer: usize,
    tag: u32,
) -> Result<Call> {
    let mut call = Call::new(Kind::Send, buf.as_ptr(), ptr::null_mut(), buf.len());
    call.rank = member("send", "peer", peer, comm)?;
    call.tag = tag_of("send", tag)?;
    Ok(call)
}

pub(crate) fn recv<T: Datatype>(
    comm: &Communicator,
    buf: &mut [T],
    peer: usize,
    tag: u32,
) -> Result<Call> {
    let mut call = Call::new(Kind::Recv, ptr::null(), buf.as_mut_ptr(), buf.len());
    call.rank = member("recv", "peer", peer, comm)?;
    call.tag = tag_of("recv", tag)?;
    Ok(call)
}

/// Tags above `SMD_TAG_MAX` are left for the library to refuse, with its
/// own message; only what does not fit in a C int stops here.
fn tag_of(what: &str, tag: u32) -> Result<c_int> {
    c_int::try_from(tag).map_err(|_| Error::invalid(format!("{what}: tag {tag} is out of range")))
}
