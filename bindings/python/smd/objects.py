"""mpi4py's lower-case calls: any picklable Python object, through the
buffer collectives (``comm.objects.bcast(obj)``, ...).

Each object is pickled to bytes; the lengths travel first (one small
collective), then the bytes, padded to the longest where the collective
needs equal blocks. Unpickling runs code chosen by the sender: use these
calls only among the ranks of one job you trust, as with mpi4py.
"""

from __future__ import annotations

import functools
import operator
import pickle
from typing import Any, Callable, List, Optional, Protocol, Sequence, Union

import numpy as np

from .errors import InvalidArgumentError


class BufferCalls(Protocol):
    """The buffer calls of a communicator (a Comm) that the object calls
    ride on; this module sits below comm.py and does not import it."""

    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    def allgather(self, *args: Any, **kwargs: Any) -> Any: ...
    def gather(self, *args: Any, **kwargs: Any) -> Any: ...
    def scatter(self, *args: Any, **kwargs: Any) -> Any: ...
    def alltoall(self, *args: Any, **kwargs: Any) -> Any: ...
    def broadcast(self, *args: Any, **kwargs: Any) -> Any: ...
    def send(self, *args: Any, **kwargs: Any) -> Any: ...
    def recv(self, *args: Any, **kwargs: Any) -> Any: ...

#: Python reductions by name, for allreduce/reduce (or pass a callable).
OPS = {"sum": operator.add, "prod": operator.mul, "min": min, "max": max}

PyOp = Union[str, Callable[[Any, Any], Any]]


def _dumps(obj: Any) -> np.ndarray:
    # Writable: broadcast writes its result into the root's buffer too.
    return np.frombuffer(bytearray(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)), np.uint8)


def _loads(row: np.ndarray, length: int) -> Any:
    return pickle.loads(row[:length].tobytes())


def _padded(payloads: Sequence[np.ndarray], width: int) -> np.ndarray:
    rows = np.zeros((len(payloads), width), np.uint8)
    for row, payload in zip(rows, payloads):
        row[:payload.size] = payload
    return rows


def _op(op: PyOp) -> Callable[[Any, Any], Any]:
    if callable(op):
        return op
    found = OPS.get(str(op).lower())
    if found is None:
        raise InvalidArgumentError(f"unknown Python reduction {op!r}: one of {', '.join(OPS)} "
                                   "or a callable (a, b) -> c")
    return found


class Objects:
    """The object calls of one communicator (``comm.objects``). Collective
    calls must be made by every rank in the same order as the communicator's
    other collectives."""

    def __init__(self, comm: BufferCalls) -> None:
        self.comm = comm

    def _lengths(self, length: int) -> np.ndarray:
        return self.comm.allgather(np.array([length], np.int64)).reshape(-1)

    def bcast(self, obj: Any = None, root: int = 0) -> Any:
        """The root's `obj` on every rank (others' `obj` is ignored)."""
        comm = self.comm
        payload = _dumps(obj) if comm.rank == root else None
        length = np.array([0 if payload is None else payload.size], np.int64)
        comm.broadcast(length, root)
        data = payload if payload is not None else np.empty(int(length[0]), np.uint8)
        comm.broadcast(data, root)
        return _loads(data, int(length[0]))

    def allgather(self, obj: Any) -> List[Any]:
        """Every rank's `obj`, in rank order, on every rank."""
        payload = _dumps(obj)
        lengths = self._lengths(payload.size)
        rows = self.comm.allgather(_padded([payload], int(lengths.max()))[0])
        return [_loads(row, int(n)) for row, n in zip(rows, lengths)]

    def gather(self, obj: Any, root: int = 0) -> Optional[List[Any]]:
        """Every rank's `obj`, in rank order, on the root; None elsewhere."""
        payload = _dumps(obj)
        lengths = self._lengths(payload.size)
        rows = self.comm.gather(_padded([payload], int(lengths.max()))[0], root)
        return None if rows is None else [_loads(row, int(n)) for row, n in zip(rows, lengths)]

    def scatter(self, objs: Optional[Sequence[Any]] = None, root: int = 0) -> Any:
        """Item r of the root's `objs` (one per rank) to rank r."""
        comm = self.comm
        if comm.rank == root:
            if objs is None or len(objs) != comm.size:
                raise InvalidArgumentError(f"scatter: the root passes {comm.size} objects, one "
                                           f"per rank, not {None if objs is None else len(objs)}")
            payloads = [_dumps(o) for o in objs]
            lengths = np.array([p.size for p in payloads], np.int64)
        else:
            lengths = np.empty(comm.size, np.int64)
        comm.broadcast(lengths, root)
        width = int(lengths.max())
        rows = _padded(payloads, width) if comm.rank == root else None
        mine = comm.scatter(rows, root, out=np.empty(width, np.uint8))
        return _loads(mine, int(lengths[comm.rank]))

    def alltoall(self, objs: Sequence[Any]) -> List[Any]:
        """Item j of every rank's `objs` (one per rank) to rank j, which
        gets them in the senders' rank order."""
        comm = self.comm
        if len(objs) != comm.size:
            raise InvalidArgumentError(f"alltoall: pass {comm.size} objects, one per rank, "
                                       f"not {len(objs)}")
        payloads = [_dumps(o) for o in objs]
        # lengths[s, j]: what rank s sends to rank j.
        lengths = comm.allgather(np.array([p.size for p in payloads], np.int64))
        rows = comm.alltoall(_padded(payloads, int(lengths.max())))
        return [_loads(row, int(n)) for row, n in zip(rows, lengths[:, comm.rank])]

    def allreduce(self, obj: Any, op: PyOp = "sum") -> Any:
        """`op` over every rank's `obj` in rank order, on every rank: a
        name ("sum", "prod", "min", "max") or a callable (a, b) -> c."""
        return functools.reduce(_op(op), self.allgather(obj))

    def reduce(self, obj: Any, op: PyOp = "sum", root: int = 0) -> Any:
        """Like allreduce, on the root only; None elsewhere."""
        combine = _op(op)
        gathered = self.gather(obj, root)
        return None if gathered is None else functools.reduce(combine, gathered)

    def send(self, obj: Any, dest: int, tag: int = 0) -> None:
        """Send `obj` to rank `dest` (its length, then its bytes, both with
        `tag`: messages with one tag arrive in order)."""
        payload = _dumps(obj)
        self.comm.send(np.array([payload.size], np.int64), dest, tag)
        self.comm.send(payload, dest, tag)

    def recv(self, source: int, tag: int = 0) -> Any:
        """The next object `source` sent with `tag`."""
        length = np.empty(1, np.int64)
        self.comm.recv(length, source, tag)
        data = np.empty(int(length[0]), np.uint8)
        self.comm.recv(data, source, tag)
        return _loads(data, data.size)
