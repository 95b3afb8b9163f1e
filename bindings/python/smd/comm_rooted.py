"""Rooted block collectives and combined point-to-point of a communicator:
gather and scatter (point-to-point messages on a side communicator),
sendrecv, and mpi4py's object calls. A part of Comm (comm.py), which
mixes it in."""
from __future__ import annotations

from typing import Any, Optional, Tuple

from ._call import TAG_MAX, ArrayLike, _bytes
from .buffers import as_buffer, require_host
from .dtypes import DatatypeLike
from .errors import InvalidArgumentError
from .objects import Objects
from .request import waitall


class RootedCalls:
    """gather, scatter, sendrecv and objects; see Comm for the rest."""

    def _release_side(self) -> None:
        side, self._side = self._side, None
        if side is not None and not side.destroyed:
            side.destroy()

    def _side_tag(self) -> Tuple["RootedCalls", int]:
        """The side communicator (made at the first call: collective, like
        the call itself) and the tag of this call, the same on every rank."""
        if self._side is None:
            self._side = self.dup()
        self._side_calls += 1
        return self._side, self._side_calls % (TAG_MAX + 1)

    def _finish_side(self, side: "RootedCalls", requests: list) -> None:
        """Wait for a gather's or scatter's messages; Ctrl-C aborts (the
        other ranks would wait for messages that never come)."""
        try:
            waitall(requests)
        except KeyboardInterrupt:
            side.abort()
            self.abort()
            raise

    def gather(self, buf: ArrayLike, root: int = 0, *, out: Optional[ArrayLike] = None,
               dtype: DatatypeLike = None) -> Optional[Any]:
        """Every rank's `buf` (same count and datatype everywhere), in rank
        order, on the root only: ``out`` or a new array of shape
        ``(size, *buf.shape)`` (the input's kind) on the root, None
        elsewhere. Blocking only; the blocks travel as point-to-point
        messages (size - 1 of them into the root)."""
        send = self._input(buf, dtype)
        require_host(send, what="gather")
        self._check_root(root)
        side, tag = self._side_tag()
        if self._rank != root:
            self._finish_side(side, [side.isend(_bytes(send), root, tag)])
            return None
        recv = self._output(out, send, send.count * self._size, (self._size, *send.shape), dtype)
        require_host(recv, what="gather")
        rows = _bytes(recv, self._size)
        rows[root] = _bytes(send)
        self._finish_side(side, [side.irecv(rows[r], r, tag) for r in range(self._size)
                                 if r != root])
        return recv.obj

    def scatter(self, buf: Optional[ArrayLike], root: int = 0, *,
                out: Optional[ArrayLike] = None, dtype: DatatypeLike = None) -> Any:
        """Block r of the root's `buf` (``size`` equal blocks, e.g. shaped
        ``(size, ...)``) to rank r, written into ``out`` or a new array of
        one block's shape (the input's kind). Other ranks' `buf` gives only
        the shape and datatype (may be None when ``out`` is given).
        Blocking only; point-to-point messages from the root."""
        self._check_root(root)
        if buf is None and out is None:
            raise InvalidArgumentError("scatter: pass out= (or a buf shaped like the root's) "
                                       "so that this rank knows what it receives")
        if buf is None:
            recv = as_buffer(out, dtype=dtype, writable=True, name="out")
            send = None
        else:
            send = self._input(buf, dtype)
            require_host(send, what="scatter")
            n = self._blocks(send)
            shape = send.shape[1:] if send.shape and send.shape[0] == self._size else (n,)
            recv = self._output(out, send, n, shape, dtype)
        require_host(recv, what="scatter")
        side, tag = self._side_tag()
        if self._rank != root:
            self._finish_side(side, [side.irecv(_bytes(recv), root, tag)])
            return recv.obj
        assert send is not None, "the root passes buf"
        if recv.count * self._size != send.count:
            raise InvalidArgumentError(f"scatter: buf holds {send.count} elements, not "
                                       f"{self._size} blocks of out's {recv.count}")
        rows = _bytes(send, self._size)
        _bytes(recv)[...] = rows[root]
        self._finish_side(side, [side.isend(rows[r], r, tag) for r in range(self._size)
                                 if r != root])
        return recv.obj

    def _check_root(self, root: int) -> None:
        if not 0 <= root < self._size:
            raise InvalidArgumentError(f"root {root} is not a rank of {self!r}")

    def sendrecv(self, sendbuf: ArrayLike, dest: int, recvbuf: ArrayLike, source: int,
                 sendtag: int = 0, recvtag: Optional[int] = None, *,
                 dtype: DatatypeLike = None) -> int:
        """Send `sendbuf` to `dest` and receive from `source` into `recvbuf`
        at once (no deadlock when every rank does it, e.g. around a ring);
        recvtag defaults to sendtag. Returns the element count received."""
        receive = self.irecv(recvbuf, source, sendtag if recvtag is None else recvtag, dtype=dtype)
        send = self.isend(sendbuf, dest, sendtag, dtype=dtype)
        return waitall([receive, send])[0]

    @property
    def objects(self) -> Objects:
        """mpi4py's lower-case object calls (pickle) on this communicator:
        ``comm.objects.bcast(obj)``, ``allgather``, ``gather``, ``scatter``,
        ``alltoall``, ``allreduce``, ``reduce``, ``send``, ``recv``."""
        return Objects(self)
