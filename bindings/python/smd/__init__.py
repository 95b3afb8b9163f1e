"""smd: collective communication for distributed training (Python binding).

::

    import numpy as np
    import smd

    world = smd.init()                        # from the launcher's environment
    grad = np.full(4, world.rank, np.float32)
    world.allreduce(grad, op="avg")           # in place: grad holds the average
    world.broadcast(grad, root=0)             # every rank's grad = rank 0's
    req = world.iallgather(grad)              # nonblocking
    everyone = req.wait()                     # shape (world.size, 4)
    with world.split(world.rank % 2) as half:
        half.barrier()
    with smd.group():                         # many calls as one (fused)
        for g in grads:
            world.allreduce(g, out=g)
    world.destroy()

Run ranks with ``python -m smd.run -n 4 script.py`` (smdrun). Every call
raises an :class:`smd.Error` subclass on failure, with the library's
message. See :mod:`smd.comm` for the conventions of results, in-place
operation and shapes, and :mod:`smd.buffers` for what counts as a buffer.
"""

from ._ffi import header_version as HEADER_VERSION
from .buffers import Buffer, DeviceView, as_buffer, register_exporter
from .comm import ANY_SOURCE, ANY_TAG, TAG_MAX, UNDEFINED, Comm, RankInfo
from .dtypes import Datatype, Op, bfloat16, from_bfloat16, to_bfloat16
from .errors import (AbortedError, BootstrapError, Error, InternalError, InvalidArgumentError,
                     InvalidUsageError, MismatchError, NoMemoryError, NotSupportedError,
                     PeerFailureError, PluginError, Result, SystemCallError, TimeoutError,
                     TransportError, TruncatedError)
from .group_calls import group
from .groups import GroupKind, Groups, layout as group_layout
from .request import Request, Status, waitall, waitany
from .sharded import ShardedParameters
from ._world import init, is_initialized, join, version, world

#: The version of smd.h this binding was built from.
__version__ = "{}.{}.{}".format(*HEADER_VERSION)

__all__ = [
    "ANY_SOURCE", "ANY_TAG", "AbortedError", "BootstrapError", "Buffer", "Comm", "Datatype", "DeviceView", "Error",
    "GroupKind", "Groups", "HEADER_VERSION", "InternalError", "InvalidArgumentError",
    "InvalidUsageError", "MismatchError", "NoMemoryError", "NotSupportedError", "Op",
    "PeerFailureError", "PluginError", "RankInfo", "Request", "Result", "Status", "SystemCallError",
    "TAG_MAX", "TimeoutError", "TransportError", "TruncatedError", "UNDEFINED", "as_buffer",
    "bfloat16", "from_bfloat16", "group_layout", "init", "is_initialized", "join", "register_exporter",
    "to_bfloat16", "version", "waitall", "waitany", "world",
]
__all__ += ["group"]  # group calls: smd/group_calls.py
__all__ += ["ShardedParameters"]  # sharded data parallelism: smd/sharded.py
from .errors import RevokedError  # noqa: E402
__all__ += ["RevokedError"]  # surviving a lost rank: docs/ELASTIC.md
