"""Per-rank counts (v-collectives) and receives from any source: a part of
Comm (comm.py), which mixes it in."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Tuple

from ._call import ANY_SOURCE, ANY_TAG, ArrayLike, _Call, _stream
from ._ffi import ffi, lib
from .buffers import as_buffer
from .dtypes import DatatypeLike, OpLike, resolve_op
from .errors import InvalidArgumentError
from .request import Request, Status


class VCollectives:
    """allgatherv, reduce_scatterv, alltoallv (and i-forms), recv_status;
    see Comm for the rest."""

    # -- per-rank counts (v-collectives) and receives from any source ---------
    #
    # counts: one element count per rank; displs: where each rank's block
    # starts (elements) in the buffer holding every block, None = packed in
    # rank order. Every rank passes the same counts (else MismatchError on
    # every rank); displs are each rank's own layout.

    def _v_layout(self, counts: Iterable[int], displs: Optional[Iterable[int]],
                  names: Tuple[str, str] = ("counts", "displs")) -> Tuple[Any, Any, int, int]:
        """C arrays of counts and displs (or NULL), this rank's count and the
        extent in elements of the buffer holding every block. `names`: the
        arguments' names, for messages."""
        c = [int(n) for n in counts]
        if len(c) != self._size:
            raise InvalidArgumentError(f"{names[0]} has {len(c)} entries for {self._size} ranks")
        d = [int(x) for x in displs] if displs is not None else None
        if d is not None and len(d) != self._size:
            raise InvalidArgumentError(f"{names[1]} has {len(d)} entries for {self._size} ranks")
        starts = d if d is not None else [sum(c[:r]) for r in range(len(c))]
        extent = max((s + n for s, n in zip(starts, c) if n), default=0)
        return (ffi.new("size_t[]", c), ffi.new("size_t[]", d) if d is not None else ffi.NULL,
                c[self._rank], extent)

    def _allgatherv(self, buf: ArrayLike, counts: Iterable[int], displs: Optional[Iterable[int]],
                    out: Optional[ArrayLike], dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        carr, darr, mine, extent = self._v_layout(counts, displs)
        if send.count != mine:
            raise InvalidArgumentError(f"buf holds {send.count} elements; counts[{self._rank}] "
                                       f"is {mine}")
        # out may be longer than the blocks' extent (a gap after the last).
        if out is not None:
            extent = max(extent, as_buffer(out, dtype=dtype, name="out").count)
        recv = self._output(out, send, extent, (extent,), dtype)
        return _Call(lib.smd_iallgatherv, lib.smd_allgatherv,
                     (send.ptr, recv.ptr, carr, darr, send.datatype, handle,
                      _stream(stream, send, recv)),
                     (send, recv, carr, darr), recv.obj)

    def _reduce_scatterv(self, buf: ArrayLike, counts: Iterable[int], op: OpLike,
                         displs: Optional[Iterable[int]], out: Optional[ArrayLike],
                         dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        carr, darr, mine, extent = self._v_layout(counts, displs)
        if send.count < extent:
            raise InvalidArgumentError(f"buf holds {send.count} elements; the blocks end at {extent}")
        recv = self._output(out, send, mine, (mine,), dtype)
        return _Call(lib.smd_ireduce_scatterv, lib.smd_reduce_scatterv,
                     (send.ptr, recv.ptr, carr, darr, send.datatype, resolve_op(op), handle,
                      _stream(stream, send, recv)), (send, recv, carr, darr), recv.obj)

    def _alltoallv(self, buf: ArrayLike, sendcounts: Iterable[int], recvcounts: Iterable[int],
                   sdispls: Optional[Iterable[int]], rdispls: Optional[Iterable[int]],
                   out: Optional[ArrayLike], dtype: DatatypeLike, stream: Any) -> "_Call":
        handle = self._live()
        send = self._input(buf, dtype, stream)
        scarr, sdarr, _, sextent = self._v_layout(sendcounts, sdispls, ("sendcounts", "sdispls"))
        if send.count < sextent:
            raise InvalidArgumentError(f"buf holds {send.count} elements; its blocks end at {sextent}")
        rcarr, rdarr, _, rextent = self._v_layout(recvcounts, rdispls, ("recvcounts", "rdispls"))
        if out is not None:
            rextent = max(rextent, as_buffer(out, dtype=dtype, name="out").count)
        recv = self._output(out, send, rextent, (rextent,), dtype)
        return _Call(lib.smd_ialltoallv, lib.smd_alltoallv,
                     (send.ptr, scarr, sdarr, recv.ptr, rcarr, rdarr, send.datatype, handle,
                      _stream(stream, send, recv)),
                     (send, recv, scarr, sdarr, rcarr, rdarr), recv.obj)

    def allgatherv(self, buf: ArrayLike, counts: Iterable[int], *,
                   displs: Optional[Iterable[int]] = None, out: Optional[ArrayLike] = None,
                   dtype: DatatypeLike = None, stream: Any = None) -> Any:
        """Every rank's block (``buf``: counts[rank] elements) gathered on
        every rank: block r at displs[r] of the result, a flat array that
        ends with the last block (gaps between blocks are left as they
        are). In place: ``comm.allgatherv(out[d:d + n], counts, out=out)``
        with d, n this rank's displacement and count."""
        return self._run(self._allgatherv(buf, counts, displs, out, dtype, stream))

    def iallgatherv(self, buf: ArrayLike, counts: Iterable[int], *,
                    displs: Optional[Iterable[int]] = None, out: Optional[ArrayLike] = None,
                    dtype: DatatypeLike = None, stream: Any = None) -> Request:
        """Start allgatherv()."""
        return self._start(self._allgatherv(buf, counts, displs, out, dtype, stream))

    def reduce_scatterv(self, buf: ArrayLike, counts: Iterable[int], op: OpLike = "sum", *,
                        displs: Optional[Iterable[int]] = None, out: Optional[ArrayLike] = None,
                        dtype: DatatypeLike = None, stream: Any = None) -> Any:
        """Reduce ``buf`` (every rank's block r at displs[r], counts[r]
        elements) over ranks; returns this rank's block of the result (a
        flat array of counts[rank] elements). In place:
        ``comm.reduce_scatterv(buf, counts, out=buf[d:d + n])``."""
        return self._run(self._reduce_scatterv(buf, counts, op, displs, out, dtype, stream))

    def ireduce_scatterv(self, buf: ArrayLike, counts: Iterable[int], op: OpLike = "sum", *,
                         displs: Optional[Iterable[int]] = None,
                         out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
                         stream: Any = None) -> Request:
        """Start reduce_scatterv()."""
        return self._start(self._reduce_scatterv(buf, counts, op, displs, out, dtype, stream))

    def alltoallv(self, buf: ArrayLike, sendcounts: Iterable[int], recvcounts: Iterable[int], *,
                  sdispls: Optional[Iterable[int]] = None, rdispls: Optional[Iterable[int]] = None,
                  out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
                  stream: Any = None) -> Any:
        """Every rank sends sendcounts[j] elements (at sdispls[j] of ``buf``)
        to rank j and receives recvcounts[i] elements from rank i into
        rdispls[i] of the result, a flat array that ends with the last
        block (gaps are left as they are). displs default to packed. Each
        pair must agree: rank i's sendcounts[j] == rank j's recvcounts[i],
        else the receiving rank raises TruncatedError. Not in place:
        ``out`` must not overlap ``buf``."""
        return self._run(self._alltoallv(buf, sendcounts, recvcounts, sdispls, rdispls, out, dtype,
                                         stream))

    def ialltoallv(self, buf: ArrayLike, sendcounts: Iterable[int], recvcounts: Iterable[int], *,
                   sdispls: Optional[Iterable[int]] = None, rdispls: Optional[Iterable[int]] = None,
                   out: Optional[ArrayLike] = None, dtype: DatatypeLike = None,
                   stream: Any = None) -> Request:
        """Start alltoallv()."""
        return self._start(self._alltoallv(buf, sendcounts, recvcounts, sdispls, rdispls, out,
                                           dtype, stream))

    def recv_status(self, buf: ArrayLike, source: int = ANY_SOURCE, tag: int = ANY_TAG, *,
                    dtype: DatatypeLike = None, stream: Any = None) -> Status:
        """Receive a message into ``buf`` (by default from any rank, with
        any tag) and return its Status: the sender, tag and element count.
        ``recv(buf, source=smd.ANY_SOURCE)`` receives the same way but
        returns only the count; ``irecv(...).status`` has the status too."""
        req = self.irecv(buf, source, tag, dtype=dtype, stream=stream)
        req.wait()
        return req.status
