"""Group calls: many operations run as one (``smd_group_start``/``smd_group_end``).

::

    with smd.group():                 # or: with world.group():
        for g in grads:
            world.allreduce(g, out=g)  # queued; small ones fuse into one buffer
        req = world.iallgather(shard)  # completes when the group ends
    # here every call of the group has run

Calls made on this thread inside the block are checked and queued, and run
together when the outermost block exits; allreduces of one communicator
with the same dtype and op are packed into fusion buffers (SMD_FUSION_BYTES)
and reduced at once. Blocking calls return at once (their result arrays are
filled when the group ends); nonblocking calls return requests that
complete then. Buffers must be left alone until the block exits. A call
refused inside the block raises at once, and the group then runs nothing:
its exit raises the same error naming the call ("call 3 (smd_allreduce)").
Blocks nest; an empty block is fine. See smd.h, "Group calls".
"""

from __future__ import annotations

import threading
from typing import Any, List

from ._ffi import lib
from .errors import check

_local = threading.local()
# Group blocks open on any thread: while none is, active() answers without
# reading the thread-local (the common case of every blocking call).
_open_anywhere = 0
_open_lock = threading.Lock()


def active() -> bool:
    """True while this thread is inside a group block."""
    return _open_anywhere > 0 and getattr(_local, "depth", 0) > 0


def track(request: Any) -> None:
    """Keep a request of this thread's open group (and so its buffers) alive
    until the group ends: freeing it earlier would wait for a group that
    has not run. Also the buffers of a queued blocking call."""
    if active():
        _local.requests.append(request)


class group:
    """Context manager around smd_group_start/smd_group_end (per thread,
    nestable). If the block raises, the calls it queued still run (peers
    expect them) and the block's exception propagates."""

    def __enter__(self) -> "group":
        global _open_anywhere
        check(lib.smd_group_start())
        if not active():
            _local.requests = []
        _local.depth = getattr(_local, "depth", 0) + 1
        with _open_lock:
            _open_anywhere += 1
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        global _open_anywhere
        with _open_lock:
            _open_anywhere -= 1
        _local.depth -= 1
        held: List[Any] = []
        if _local.depth == 0:
            held, _local.requests = _local.requests, []
        result = lib.smd_group_end()
        del held  # the requests are complete now; the caller may still hold them
        if exc_type is None:
            check(result)
        return False
