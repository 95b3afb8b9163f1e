"""Communicators (smd_comm_t): collectives, point-to-point, creation.

Conventions of every collective:

- **In place where the result replaces the input** (the rule of
  torch.distributed, and of smd's C and Rust APIs): allreduce, broadcast
  and reduce (on the root) write their result into ``buf`` itself, on
  every rank that gets one, so ``comm.broadcast(b, root=0)`` leaves the
  root's data in ``b`` everywhere. ``out=`` names another array to write
  into instead, leaving ``buf`` untouched. A read-only ``buf`` (bytes, a
  tensor that requires grad) needs ``out=``.
- **A new array where the result has another shape**: allgather,
  reduce_scatter, alltoall, gather, scatter and the v-forms (allgatherv,
  reduce_scatterv, alltoallv) write into ``out=`` or,
  without it, into a new array of the input's kind (a torch tensor for a
  torch tensor, else numpy). In place is still possible with no extra
  memory: ``comm.alltoall(buf, out=buf)``,
  ``comm.allgather(out[comm.rank], out=out)``,
  ``comm.reduce_scatter(buf, out=buf[comm.rank])`` (buf shaped
  ``(size, ...)``). alltoallv has no in-place form. Other overlaps of
  input and output are refused.
- **Every call returns the object holding its result** (``buf``, ``out``
  or the new array; None where a rank gets no result: reduce and gather
  off the root).
- **Shapes.** allreduce, broadcast, reduce and alltoall keep the input's
  shape; allgather gives ``(size, *buf.shape)``; reduce_scatter gives
  ``buf.shape[1:]`` when ``buf.shape[0] == size``, else a flat array of
  ``buf.size // size`` elements (buf.size must divide). An ``out=`` array
  may have any shape with the right number of elements and datatype.
- **Datatypes** come from the arrays (numpy int8 ... float64, float16);
  ``dtype=`` reinterprets the bytes, e.g. ``dtype="bfloat16"`` for bfloat16
  bits in uint16 arrays. The result of a reduction has the input's dtype.
- **Blocking calls** are interruptible: Ctrl-C raises KeyboardInterrupt
  within 50 ms (see Comm's ``interruptible``). A collective interrupted
  half-way leaves the ranks out of step and its buffers in use, so the
  communicator is aborted first (its peers' operations on it fail with
  AbortedError) and the communicator must then be destroyed.
- **Device arrays** (CuPy, torch CUDA tensors, JAX arrays, anything with
  ``__cuda_array_interface__`` or DLPack) are passed to the library as
  device memory, with a stream: ``stream=`` (an int handle, a torch or
  CuPy stream), else the framework's current stream (torch's for the
  tensor's device, CuPy's), else the stream the array interface names,
  else CUDA's legacy default stream (NULL). New results are arrays of the
  caller's type on its device. Host memory takes ``stream=None``. What the
  library supports on device memory and streams is in docs/GPU.md; what it
  refuses comes back as NotSupportedError.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Set, Tuple

import numpy as np

from . import _fast, _interrupt, group_calls
from ._ffi import constants, ffi, lib
from .buffers import Buffer, as_buffer, new_output
from .dtypes import _FROM_NUMPY, _OPS_BY_NAME, DatatypeLike, Op, OpLike, resolve_op
from .errors import InvalidArgumentError, InvalidUsageError, Result, check, error_for
from .groups import Groups
from .request import Completion, Request, call_interruptibly, run_to_completion, settle_all
from .tensors import read_only_reason

_SUCCESS = int(Result.SUCCESS)

# The lean path of a blocking allreduce of a numpy array (Comm._lean):
# what a call would resolve, as plain ints, looked up by the caller's spelling.
_DATATYPE_VALUES = {dtype: int(datatype) for dtype, datatype in _FROM_NUMPY.items()}
_OP_VALUES = {**{name: int(op) for name, op in _OPS_BY_NAME.items()}, **{op: int(op) for op in Op}}

# Re-exported: smd's ANY_SOURCE, ANY_TAG, TAG_MAX and UNDEFINED are these.
from ._call import ANY_SOURCE, ANY_TAG, TAG_MAX, UNDEFINED, ArrayLike, _Call, _stream  # noqa: F401
from .comm_rooted import RootedCalls
from .comm_v import VCollectives


@dataclass(frozen=True)
class RankInfo:
    """Where a rank of a communicator runs (smd_rank_info_t)."""
    rank: int
    world_rank: int
    node_index: int
    local_rank: int
    local_size: int
    pid: int
    numa_node: Optional[int]  # None when unknown or spread over several
    cpus: int
    host: str
    cpuset: str  # e.g. "0-3,8"; "" when unknown


def _destroy_handle(handle: Any) -> None:
    lib.smd_comm_destroy(handle)



def _queried(c_function: str, doc: str) -> Any:
    """A read-only int property asked of the library on each read
    (``smd_comm_<what>(comm, &out)``)."""
    return property(lambda comm: comm._query(getattr(lib, c_function)), doc=doc)


class Comm(RootedCalls, VCollectives):
    """A communicator: an ordered group of ranks that run collectives
    together. Made by :func:`smd.init` (the world), :meth:`split`,
    :meth:`dup`, :meth:`create_group` and :meth:`groups`.

    Collectives must be called in the same order on every member rank.
    Destroy a communicator with :meth:`destroy` or by leaving a ``with``
    block; one that is garbage-collected (or alive at exit) is destroyed
    then. Leaving a ``with`` block by an exception aborts the communicator
    first, so that its peers fail at once instead of at their deadline.

    ``interruptible`` (default True, inherited by the communicators made
    from this one): Ctrl-C interrupts blocking calls. They are the
    library's blocking functions, which notice SIGINT in their own waits
    (smd_set_interrupt_fd, see smd._interrupt), where the program left
    SIGINT to Python's default handler (or ignores it); otherwise (a SIGINT handler of the
    program's, or requests of this communicator still pending) the
    nonblocking form plus a wait in 50 ms slices, several microseconds
    slower. Set it to False to always call the blocking functions, Ctrl-C
    then being noticed only when the call returns (at worst at the
    library's deadline).
    """

    def __init__(self, handle: Any, *, owner: Optional["Groups"] = None,
                 interruptible: bool = True) -> None:
        """Internal: wrap a live smd_comm_t (use smd.init() and the methods
        that create communicators)."""
        self._handle = handle
        # The handle as a number and the compiled fast path (smd/_fast.py).
        self._address = int(ffi.cast("uintptr_t", handle))
        self._fast = _fast.get()
        self._owner = owner
        self.interruptible = interruptible
        # The C requests started on it and not yet freed (destroy waits).
        self._pending: Set[Completion] = set()
        self._rank = self._query(lib.smd_comm_rank)
        self._size = self._query(lib.smd_comm_size)
        self._finalizer = None if owner is not None else weakref.finalize(self, _destroy_handle, handle)
        # gather and scatter move blocks by point-to-point messages on a
        # duplicate made at their first call, so users' tags never meet theirs.
        self._side: Optional["Comm"] = None
        self._side_calls = 0

    # -- identity ------------------------------------------------------------

    def _live(self) -> Any:
        handle = self._handle
        if handle is None:
            raise InvalidUsageError(f"{self!r}: the communicator was destroyed")
        return handle

    def _query(self, fn: Any) -> int:
        out = ffi.new("int *")
        check(fn(self._live(), out))
        return out[0]

    @property
    def rank(self) -> int:
        """This process's rank in the communicator."""
        return self._rank

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._size

    local_rank = _queried("smd_comm_local_rank", "Rank among the members on this node.")
    local_size = _queried("smd_comm_local_size", "Number of members on this node.")
    node_index = _queried("smd_comm_node_index",
                          "Index of this rank's node among the communicator's nodes.")
    node_count = _queried("smd_comm_node_count", "Number of nodes the communicator spans.")

    @property
    def destroyed(self) -> bool:
        """True once destroy() ran (or its Groups were destroyed)."""
        return self._handle is None

    def world_rank(self, rank: Optional[int] = None) -> int:
        """The world rank of `rank` of this communicator (default: this rank)."""
        out = ffi.new("int *")
        check(lib.smd_comm_world_rank(self._live(), self._rank if rank is None else rank, out))
        return out[0]

    def rank_info(self, rank: Optional[int] = None) -> RankInfo:
        """Where `rank` (default: this rank) runs, as reported when the world
        formed. Local: no communication."""
        info = ffi.new("smd_rank_info_t *")
        info.struct_size = ffi.sizeof("smd_rank_info_t")
        info.version = constants["SMD_RANK_INFO_VERSION"]
        check(lib.smd_comm_rank_info(self._live(), self._rank if rank is None else rank, info))
        return RankInfo(rank=info.rank, world_rank=info.world_rank, node_index=info.node_index,
                        local_rank=info.local_rank, local_size=info.local_size, pid=info.pid,
                        numa_node=None if info.numa_node < 0 else info.numa_node, cpus=info.cpus,
                        host=ffi.string(info.host).decode(errors="replace"),
                        cpuset=ffi.string(info.cpuset).decode(errors="replace"))

    def shared_empty(self, shape: Any, dtype: Any = np.float32) -> np.ndarray:
        """A new numpy array (contents undefined) in memory from
        ``smd_mem_alloc``: the ranks on this node can map it, so a
        collective whose input is such an array (allgather, a broadcast
        root's, allreduce, reduce, reduce_scatter) has it read by peers where
        it lies, with no copy through staging buffers. It is ordinary
        memory for everything else, and freed when the array (and every view
        of it) is garbage-collected. Local: no communication."""
        dt = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count < 0:
            raise InvalidArgumentError(f"shared_empty: negative dimension in shape {shape}")
        nbytes = max(1, count * dt.itemsize)
        out = ffi.new("void **")
        check(lib.smd_mem_alloc(self._live(), nbytes, out))
        # The buffer keeps the cdata alive, and the cdata frees the block.
        memory = ffi.gc(out[0], lib.smd_mem_free, size=nbytes)
        return np.frombuffer(ffi.buffer(memory, nbytes), dtype=dt, count=count).reshape(shape)

    def async_error(self) -> Optional[Result]:
        """The communicator's background failure (a Result code), or None."""
        out = ffi.new("smd_result_t *")
        check(lib.smd_comm_get_async_error(self._live(), out))
        return None if out[0] == Result.SUCCESS else Result(out[0])

    def stats(self) -> dict:
        """Traffic and algorithm statistics of this communicator on this rank
        (smd_comm_get_stats): collectives run, point-to-point bytes sent and
        received across nodes and inside the node (the shared-memory arena
        moves data without messages and is not counted), the last
        collective's algorithm, and bytes by transport."""
        s = ffi.new("smd_comm_stats_t *")
        s.struct_size = ffi.sizeof("smd_comm_stats_t")
        check(lib.smd_comm_get_stats(self._live(), s))
        return {
            "collectives": s.collectives,
            "inter_node_bytes_sent": s.inter_node_bytes_sent,
            "inter_node_bytes_received": s.inter_node_bytes_received,
            "intra_node_bytes_sent": s.intra_node_bytes_sent,
            "intra_node_bytes_received": s.intra_node_bytes_received,
            "last_algorithm": ffi.string(s.last_algorithm).decode(),
            "last_predicted_us": s.last_predicted_us,
            "transports": {
                ffi.string(t.name).decode(): {"bytes_sent": t.bytes_sent,
                                              "bytes_received": t.bytes_received}
                for t in list(s.transports)[:s.transport_count]
            },
        }

    # -- lifetime ------------------------------------------------------------

    def abort(self) -> None:
        """Make every pending and future operation on this communicator fail
        with AbortedError, here and on its peers; blocked calls return
        promptly. From any thread. The communicator must still be destroyed.
        Does nothing once it is destroyed."""
        handle = self._handle
        if handle is not None:
            lib.smd_comm_abort(handle)

    # -- surviving a lost rank (docs/ELASTIC.md) ------------------------------

    def revoke(self) -> None:
        """Make every pending and future call on this communicator raise
        RevokedError, here and on every member that can be reached; from any
        thread. agree(), shrink() and destroy() still work afterwards."""
        check(lib.smd_comm_revoke(self._live()))

    def agree(self, flag: int = 1) -> Tuple[int, list[int]]:
        """Collective over the survivors: returns the bitwise AND of their
        `flag` values (unsigned 32-bit) and the ranks of this communicator
        that failed, ascending; every survivor gets the same answer, even
        when members fail during the call."""
        if not 0 <= int(flag) <= 0xFFFFFFFF:
            raise InvalidArgumentError(f"flag {flag} is not an unsigned 32-bit value")
        io = ffi.new("uint32_t *", int(flag))
        failed = ffi.new("int[]", self.size)
        nfailed = ffi.new("int *")
        check(lib.smd_comm_agree(self._live(), io, failed, self.size, nfailed))
        return int(io[0]), [int(failed[i]) for i in range(min(nfailed[0], self.size))]

    def shrink(self) -> Tuple["Comm", list[int]]:
        """Collective over the survivors: a new communicator of the members
        that have not failed, ranked in their order here, and the list
        that maps each rank here to its new rank (-1 for a failed one).
        This communicator stays as it is (revoke and destroy it)."""
        out = ffi.new("smd_comm_t **")
        old_to_new = ffi.new("int[]", self.size)
        check(lib.smd_comm_shrink(self._live(), out, old_to_new))
        return Comm(out[0], interruptible=self.interruptible), list(old_to_new)

    def grow(self, n_new: int, timeout: Optional[float] = None) -> "Comm":
        """Collective over every member: admit `n_new` new processes (which
        call :func:`smd.join`) and return the grown communicator, members
        first in their order here, joiners after. Waits up to `timeout`
        seconds for them (default SMD_TIMEOUT); TimeoutError on every
        member when fewer come. This communicator stays as it is."""
        wait_ms = 0 if timeout is None else max(1, math.ceil(timeout * 1000))
        out = ffi.new("smd_comm_t **")
        check(lib.smd_comm_grow(self._live(), int(n_new), wait_ms, out))
        return Comm(out[0], interruptible=self.interruptible)

    def destroy(self) -> None:
        """Release the communicator (local, not collective). Its pending
        requests are waited for first (interruptibly; they stay usable).
        Later calls on it raise InvalidUsageError; destroying again does
        nothing. A communicator of a Groups is destroyed with its Groups."""
        if self._handle is None:
            return
        if self._owner is not None:
            raise InvalidUsageError(f"{self!r} belongs to its Groups: destroy the Groups instead")
        try:
            settle_all(self)
        finally:
            self._destroy_now()

    def _destroy_now(self) -> None:
        self._release_side()
        handle, self._handle = self._handle, None
        if self._finalizer is not None:
            self._finalizer.detach()
        check(lib.smd_comm_destroy(handle))

    def _forget(self) -> None:
        """Its Groups released it."""
        self._release_side()
        self._handle = None

    def __repr__(self) -> str:
        state = "" if self._handle is not None else " destroyed"
        return f"<smd.Comm rank {self._rank} of {self._size}{state}>"

    def __enter__(self) -> "Comm":
        if self._owner is not None:
            raise InvalidUsageError(f"{self!r} belongs to its Groups: use the Groups as a context")
        self._live()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        self.destroy()

    # -- machinery -----------------------------------------------------------

    def _start(self, call: "_Call") -> Request:
        out = ffi.new("smd_request_t **")
        check(call.start(*call.args, out))
        request = Request(out[0], self, call.keep, call.result, p2p=call.p2p,
                          returns_count=call.returns_count)
        group_calls.track(request)
        return request

    def group(self) -> "group_calls.group":
        """``with comm.group():`` is ``with smd.group():`` (groups are per
        thread and span communicators); see :mod:`smd.group_calls`."""
        return group_calls.group()

    def _run(self, call: "_Call") -> Any:
        """A blocking call: the nonblocking form and an interruptible wait,
        or, on a communicator that is not interruptible, the blocking C
        function."""
        if group_calls.active():  # queued: it runs (and fills the result) at the group's end
            if call.returns_count:  # the count comes from its request
                self._start(call)
            else:  # the blocking form queues with no request to make and free
                check(call.blocking(*call.args))
                group_calls.track(call.keep)
            return call.result
        # The C function, where Ctrl-C interrupts the library's own wait
        # (smd._interrupt): not behind requests of this communicator, whose
        # worker the call would wait for uninterruptibly.
        if not self.interruptible or (not self._pending and _interrupt.blocking_ok()):
            if call.returns_count:  # smd_recv does not say how much arrived
                out = ffi.new("smd_request_t **")
                check(call.start(*call.args, out))
                completion = Completion(out[0], True)
                try:
                    check(lib.smd_request_wait(out[0]))
                    return completion.count()
                finally:
                    completion.free()
            check(call.blocking(*call.args))
            return call.result
        out = ffi.new("smd_request_t **")
        check(call.start(*call.args, out))
        completion = Completion(out[0], call.p2p)
        pending = self._pending
        pending.add(completion)
        try:
            result, message = run_to_completion(completion, self)
            if result != _SUCCESS:
                raise error_for(result, message)
            return completion.count() if call.returns_count else call.result
        finally:
            pending.discard(completion)
            completion.free()

    def _lean(self) -> Any:
        """The handle, when a blocking call may go straight to the C
        function (no group open, Ctrl-C noticed in its wait: see _run);
        else None (the general path decides, and raises what applies)."""
        handle = self._handle
        if handle is None or group_calls.active():
            return None
        if self.interruptible and (self._pending or not _interrupt.blocking_ok()):
            return None
        return handle

    def _output(self, out: Any, like: Buffer, count: int, shape: Tuple[int, ...],
                dtype: DatatypeLike) -> Buffer:
        """The output buffer: `out` checked against the datatype and count
        the call produces, or a new array of `shape`."""
        if out is None:
            return new_output(like, shape)
        buf = as_buffer(out, dtype=dtype, writable=True, name="out", stream=like.stream)
        if buf.datatype != like.datatype:
            raise InvalidArgumentError(f"out holds {buf.datatype.name.lower()} elements but buf "
                                       f"holds {like.datatype.name.lower()}")
        if buf.count != count:
            raise InvalidArgumentError(f"out holds {buf.count} elements; the result has {count}")
        return buf

    def _result_in(self, send: Buffer, out: Any, dtype: DatatypeLike) -> Buffer:
        """Where a collective whose result replaces its input writes: `out`
        when given, else the input itself (in place)."""
        if out is not None:
            return self._output(out, send, send.count, send.shape, dtype)
        if send.readonly:
            raise InvalidArgumentError(
                f"buf is read-only and the result is written into it{read_only_reason(send.obj)}; "
                "pass out= (a writable array) to receive it elsewhere")
        return send

    def _input(self, buf: Any, dtype: DatatypeLike, stream: Any = None) -> Buffer:
        return as_buffer(buf, dtype=dtype, name="buf", stream=stream)

    def _blocks(self, b: Buffer) -> int:
        """Elements per rank of a buffer split into `size` blocks."""
        if b.count % self._size:
            raise InvalidArgumentError(f"buf holds {b.count} elements, not a multiple of the "
                                       f"communicator's {self._size} ranks")
        return b.count // self._size

    # -- the calls, ready to start or run --------------------------------------

    def _allreduce(self, buf: ArrayLike, op: OpLike, out: Optional[ArrayLike],
                   dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        recv = self._result_in(send, out, dtype)
        return _Call(lib.smd_iallreduce, lib.smd_allreduce,
                     (send.ptr, recv.ptr, send.count, send.datatype, resolve_op(op), handle,
                      _stream(stream, send, recv)), (send, recv), recv.obj)

    def _allgather(self, buf: ArrayLike, out: Optional[ArrayLike], dtype: DatatypeLike,
                   stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        recv = self._output(out, send, send.count * self._size, (self._size, *send.shape), dtype)
        return _Call(lib.smd_iallgather, lib.smd_allgather,
                     (send.ptr, recv.ptr, send.count, send.datatype, handle,
                      _stream(stream, send, recv)),
                     (send, recv), recv.obj)

    def _reduce_scatter(self, buf: ArrayLike, op: OpLike, out: Optional[ArrayLike],
                        dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        n = self._blocks(send)
        shape = send.shape[1:] if send.shape and send.shape[0] == self._size else (n,)
        recv = self._output(out, send, n, shape, dtype)
        return _Call(lib.smd_ireduce_scatter, lib.smd_reduce_scatter,
                     (send.ptr, recv.ptr, n, send.datatype, resolve_op(op), handle,
                      _stream(stream, send, recv)), (send, recv), recv.obj)

    def _broadcast(self, buf: ArrayLike, root: int, out: Optional[ArrayLike],
                   dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        recv = self._result_in(send, out, dtype)
        sendptr = send.ptr if self._rank == root else ffi.NULL
        return _Call(lib.smd_ibroadcast, lib.smd_broadcast,
                     (sendptr, recv.ptr, send.count, send.datatype, root, handle,
                      _stream(stream, send, recv)),
                     (send, recv), recv.obj)

    def _reduce(self, buf: ArrayLike, op: OpLike, root: int, out: Optional[ArrayLike],
                dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        if self._rank == root:
            recv: Optional[Buffer] = self._result_in(send, out, dtype)
            recvptr, result = recv.ptr, recv.obj
        else:  # written on the root only
            recv, recvptr, result = None, ffi.NULL, None
        return _Call(lib.smd_ireduce, lib.smd_reduce,
                     (send.ptr, recvptr, send.count, send.datatype, resolve_op(op), root, handle,
                      _stream(stream, send, recv)), (send, recv), result)

    def _alltoall(self, buf: ArrayLike, out: Optional[ArrayLike], dtype: DatatypeLike,
                  stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        n = self._blocks(send)
        recv = self._output(out, send, send.count, send.shape, dtype)
        return _Call(lib.smd_ialltoall, lib.smd_alltoall,
                     (send.ptr, recv.ptr, n, send.datatype, handle,
                      _stream(stream, send, recv)),
                     (send, recv), recv.obj)

    def _barrier(self, stream: Any) -> "_Call":
        return _Call(lib.smd_ibarrier, lib.smd_barrier, (self._live(), _stream(stream)), ())

    def _send(self, buf: ArrayLike, dest: int, tag: int, dtype: DatatypeLike,
              stream: Any) -> "_Call":
        handle = self._live()
        b = self._input(buf, dtype, stream)
        return _Call(lib.smd_isend, lib.smd_send,
                     (b.ptr, b.count, b.datatype, dest, tag, handle, _stream(stream, b)), (b,),
                     p2p=True)

    def _recv(self, buf: ArrayLike, source: int, tag: int, dtype: DatatypeLike,
              stream: Any) -> "_Call":
        handle = self._live()
        b = as_buffer(buf, dtype=dtype, writable=True, name="buf", stream=stream)
        return _Call(lib.smd_irecv, lib.smd_recv,
                     (b.ptr, b.count, b.datatype, source, tag, handle, _stream(stream, b)), (b,),
                     p2p=True, returns_count=True)

    # -- collectives: nonblocking forms ---------------------------------------

    def iallreduce(self, buf: ArrayLike, op: OpLike = "sum", *, out: Optional[ArrayLike] = None,
                   dtype: DatatypeLike = None, stream: Any = None) -> Request:
        """Start allreduce(); ``wait()`` returns the result (`buf` or `out`)."""
        return self._start(self._allreduce(buf, op, out, dtype, stream))

    def iallgather(self, buf: ArrayLike, *, out: Optional[ArrayLike] = None,
                   dtype: DatatypeLike = None, stream: Any = None) -> Request:
        """Start allgather(); ``wait()`` returns the result array."""
        return self._start(self._allgather(buf, out, dtype, stream))

    def ireduce_scatter(self, buf: ArrayLike, op: OpLike = "sum", *,
                        out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
                        stream: Any = None) -> Request:
        """Start reduce_scatter(); ``wait()`` returns the result array."""
        return self._start(self._reduce_scatter(buf, op, out, dtype, stream))

    def ibroadcast(self, buf: ArrayLike, root: int = 0, *, out: Optional[ArrayLike] = None,
                   dtype: DatatypeLike = None, stream: Any = None) -> Request:
        """Start broadcast(); ``wait()`` returns the result (`buf` or `out`)."""
        return self._start(self._broadcast(buf, root, out, dtype, stream))

    def ireduce(self, buf: ArrayLike, op: OpLike = "sum", root: int = 0, *,
                out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
                stream: Any = None) -> Request:
        """Start reduce(); ``wait()`` returns the result array on the root,
        None elsewhere."""
        return self._start(self._reduce(buf, op, root, out, dtype, stream))

    def ialltoall(self, buf: ArrayLike, *, out: Optional[ArrayLike] = None,
                  dtype: DatatypeLike = None, stream: Any = None) -> Request:
        """Start alltoall(); ``wait()`` returns the result array."""
        return self._start(self._alltoall(buf, out, dtype, stream))

    def ibarrier(self, *, stream: Any = None) -> Request:
        """Start barrier(); ``wait()`` returns None."""
        return self._start(self._barrier(stream))

    # -- collectives: blocking forms ------------------------------------------

    def allreduce(self, buf: ArrayLike, op: OpLike = "sum", *, out: Optional[ArrayLike] = None,
                  dtype: DatatypeLike = None, stream: Any = None) -> np.ndarray:
        """Element-wise reduction over all ranks of `buf`, written into
        `buf` on every rank (in place), or into `out` when given (then
        `buf` is left untouched).

        op: "sum", "prod", "min", "max", "avg" (or smd.Op). Returns the
        object holding the result (`buf`, or `out`).
        """
        # The common case, resolved in a few lookups (the general path
        # checks and wraps the same things for any buffer and option).
        if type(buf) is np.ndarray and out is None and dtype is None and stream is None:
            datatype = _DATATYPE_VALUES.get(buf.dtype)
            op_value = _OP_VALUES.get(op)
            flags = buf.flags
            if datatype is not None and op_value is not None and flags.c_contiguous and \
                    flags.writeable:
                queued = group_calls.active()  # then the C call queues it and returns
                handle = self._handle if queued else self._lean()
                if handle is not None:
                    fast = self._fast
                    if fast is not None:
                        rc = fast.allreduce(self._address, buf, buf.size, datatype, op_value)
                    else:
                        ptr = ffi.from_buffer(buf, require_writable=True)
                        rc = lib.smd_allreduce(ptr, ptr, buf.size, datatype, op_value, handle,
                                               ffi.NULL)
                    if rc:
                        check(rc)
                    if queued:
                        group_calls.track(buf)  # read and written when the group ends
                    return buf
        return self._run(self._allreduce(buf, op, out, dtype, stream))

    def allgather(self, buf: ArrayLike, *, out: Optional[ArrayLike] = None,
                  dtype: DatatypeLike = None, stream: Any = None) -> np.ndarray:
        """Every rank's `buf`, in rank order, on every rank: shape
        ``(size, *buf.shape)``. In place: ``allgather(out[rank], out=out)``."""
        return self._run(self._allgather(buf, out, dtype, stream))

    def reduce_scatter(self, buf: ArrayLike, op: OpLike = "sum", *,
                       out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
                       stream: Any = None) -> np.ndarray:
        """Reduce `buf` (size blocks) over ranks; rank r gets block r of the
        result: ``buf.shape[1:]`` when ``buf.shape[0] == size``, else flat.
        In place: ``reduce_scatter(buf, out=buf[rank])``."""
        return self._run(self._reduce_scatter(buf, op, out, dtype, stream))

    def broadcast(self, buf: ArrayLike, root: int = 0, *, out: Optional[ArrayLike] = None,
                  dtype: DatatypeLike = None, stream: Any = None) -> np.ndarray:
        """The root's `buf` into every rank's `buf` (in place; other ranks'
        contents are overwritten), or into `out` when given. Returns the
        object holding the result (`buf`, or `out`)."""
        return self._run(self._broadcast(buf, root, out, dtype, stream))

    def reduce(self, buf: ArrayLike, op: OpLike = "sum", root: int = 0, *,
               out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
               stream: Any = None) -> Optional[np.ndarray]:
        """Like allreduce, but only the root gets the result, in its `buf`
        (or `out`), which is returned; other ranks get None and their
        `buf` is left untouched (`out` is not used)."""
        return self._run(self._reduce(buf, op, root, out, dtype, stream))

    def alltoall(self, buf: ArrayLike, *, out: Optional[ArrayLike] = None,
                 dtype: DatatypeLike = None, stream: Any = None) -> np.ndarray:
        """Block j of `buf` (size equal blocks) goes to rank j, which stores
        it as block r (the sender's rank) of the result, shaped like `buf`.
        In place: ``out=buf``."""
        return self._run(self._alltoall(buf, out, dtype, stream))

    def barrier(self, *, stream: Any = None) -> None:
        """Return once every rank has entered the barrier."""
        fast = self._fast
        if fast is not None and stream is None and self._handle is not None and \
                not self._pending:
            # What _lean() asks, answered in C (inside a group the C call
            # queues); None: only _interrupt.blocking_ok() can tell.
            rc = fast.barrier(self._address, self.interruptible)
            if rc is not None:
                if rc:
                    check(rc)
                return
        handle = self._lean() if stream is None else None
        if handle is not None:
            rc = fast.barrier(self._address, False) if fast is not None else \
                lib.smd_barrier(handle, ffi.NULL)
            if rc:
                check(rc)
        else:
            self._run(self._barrier(stream))

    # -- point-to-point ------------------------------------------------------

    def isend(self, buf: ArrayLike, dest: int, tag: int = 0, *, dtype: DatatypeLike = None,
              stream: Any = None) -> Request:
        """Start send(); ``wait()`` returns None."""
        return self._start(self._send(buf, dest, tag, dtype, stream))

    def irecv(self, buf: ArrayLike, source: int, tag: int = 0, *, dtype: DatatypeLike = None,
              stream: Any = None) -> Request:
        """Start recv(); ``wait()`` returns the element count received (also
        ``request.count``)."""
        return self._start(self._recv(buf, source, tag, dtype, stream))

    def send(self, buf: ArrayLike, dest: int, tag: int = 0, *, dtype: DatatypeLike = None,
             stream: Any = None) -> None:
        """Send `buf` to rank `dest`. Messages between two ranks with the
        same tag (0..TAG_MAX) arrive in the order sent."""
        self._run(self._send(buf, dest, tag, dtype, stream))

    def recv(self, buf: ArrayLike, source: int, tag: int = 0, *, dtype: DatatypeLike = None,
             stream: Any = None) -> int:
        """Receive a message from rank `source` into `buf` (in place) and
        return its element count: at most buf's size (a larger message
        raises TruncatedError)."""
        return self._run(self._recv(buf, source, tag, dtype, stream))

    # -- new communicators ---------------------------------------------------

    def _create(self, fn: Any, *args: Any) -> Optional["Comm"]:
        """Run a communicator-creating call interruptibly (Ctrl-C aborts
        this communicator, which ends the call) and wrap its result."""
        out = ffi.new("smd_comm_t **")
        call_interruptibly(fn, self._live(), *args, out, on_interrupt=self.abort,
                           on_abandoned=lambda: out[0] != ffi.NULL and lib.smd_comm_destroy(out[0]))
        return None if out[0] == ffi.NULL else Comm(out[0], interruptible=self.interruptible)

    def split(self, color: Optional[int], key: int = 0) -> Optional["Comm"]:
        """Collective: ranks passing the same `color` form a new
        communicator, ordered by (key, rank). color None (or UNDEFINED):
        in none; returns None."""
        return self._create(lib.smd_comm_split, UNDEFINED if color is None else color, key)

    def dup(self) -> "Comm":
        """Collective: a new communicator with the same ranks."""
        comm = self._create(lib.smd_comm_dup)
        assert comm is not None
        return comm

    def create_group(self, ranks: Iterable[int]) -> "Comm":
        """Collective over the listed ranks only (every listed rank calls it
        with the same list; the others do not call it): a communicator of
        those ranks, ranked in list order."""
        members = [int(r) for r in ranks]
        array = ffi.new("int[]", members) if members else ffi.NULL
        comm = self._create(lib.smd_comm_create_group, array, len(members))
        assert comm is not None
        return comm

    def groups(self, tp: int = 1, pp: int = 1, placement: Optional[str] = "cluster",
               sdp: int = 1) -> "Groups":
        """Collective: model-parallel rank groups (tp, pp, dp, rdp, mp, sdp,
        world) with a communicator each; sdp is the sharded data-parallel
        degree (dividing rdp); see smd.Groups."""
        return Groups._create(self, tp, pp, placement, sdp)

