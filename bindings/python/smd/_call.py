"""What every communicator call is built from: the constants of
point-to-point and splitting, one prepared operation (_Call), and the
helpers that turn buffers into its arguments. Shared by comm.py and the
calls split out of it (comm_rooted.py, comm_v.py) and by sharded.py."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import devices
from ._ffi import constants, ffi
from .buffers import Buffer

#: Pass as `color` to Comm.split() (or pass None) to be in no new communicator.
UNDEFINED: int = constants["SMD_UNDEFINED"]
#: The largest point-to-point tag.
TAG_MAX: int = constants["SMD_TAG_MAX"]
#: recv()/irecv()/recv_status() source that takes a message from any rank.
ANY_SOURCE: int = constants["SMD_ANY_SOURCE"]
#: recv()/irecv()/recv_status() tag that takes a message of any tag.
ANY_TAG: int = constants["SMD_ANY_TAG"]

ArrayLike = Any  # numpy arrays and any object the buffer layer accepts


class _Call(NamedTuple):
    """One operation, ready to go: its nonblocking and blocking C functions
    (same arguments, the former with a request out-parameter appended)."""
    start: Any
    blocking: Any
    args: Tuple[Any, ...]
    keep: Tuple[Any, ...]        # buffers in use until it finishes
    result: Any = None           # what it returns
    p2p: bool = False
    returns_count: bool = False  # a receive returns the count received


def _bytes(b: Buffer, rows: int = 0) -> np.ndarray:
    """A host buffer's bytes as a numpy view: flat, or in `rows` equal rows
    (gather and scatter move bytes, whatever dtype= made of them)."""
    assert b.array is not None
    flat = b.array.reshape(-1).view(np.uint8)
    return flat.reshape(rows, -1) if rows else flat


def _stream(stream: Any, *buffers: Optional[Buffer]) -> Any:
    """The smd_stream_t of a call: `stream` when given, else the stream of
    its device buffers (see Buffer.stream), else NULL."""
    device = next((b for b in buffers if b is not None and b.device != "cpu"), None)
    if stream is not None:
        handle = devices.stream_handle(stream)
    else:
        handle = device.stream or 0 if device is not None else 0
    if device is not None and not handle:
        devices.require_cuda_loaded(f"a {type(device.obj).__name__}")
    return ffi.cast("smd_stream_t", handle) if handle else ffi.NULL
