"""smd.torch: smd as a torch.distributed backend.

::

    import torch.distributed as dist
    import smd.torch                      # registers the backend "smd"

    dist.init_process_group("smd")        # env:// (torchrun, smdrun), tcp://, file://
    dist.all_reduce(tensor)               # and every other collective, send/recv,
    model = DistributedDataParallel(net)  # new_group, async Works, DDP, ...

The backend is C++ over smd's C ABI (bindings/torch), built by meson against
the installed torch. Each process group forms its own smd world through the
store torch hands it. See bindings/torch/README.md for what it supports and how.
"""

from __future__ import annotations

import inspect
from datetime import timedelta

import torch
import torch.distributed as dist

from . import _loader, errors
from .errors import Error

_c10d, EXTENSION_PATH = _loader.load()

#: The name to pass to init_process_group / new_group.
BACKEND = "smd"

if _loader.major_minor(_c10d.TORCH_VERSION) != _loader.major_minor(torch.__version__):
    raise ImportError(f"smd.torch: {EXTENSION_PATH} was built for torch {_c10d.TORCH_VERSION} "
                      f"but this is torch {torch.__version__}; rebuild it (ninja -C build)")

ProcessGroupSmd = _c10d.ProcessGroupSmd


def _create_process_group(store, rank: int, size: int, timeout: timedelta):
    """torch.distributed calls this for every group with backend "smd"."""
    return ProcessGroupSmd(store, rank, size, timeout)


def register(name: str = BACKEND) -> None:
    """Make smd's backend available to torch.distributed under `name` too
    (smdistributed.dataparallel.torch.torch_smddp registers "smddp").
    Registering a name again does nothing."""
    if name.upper() in getattr(dist.Backend, "_plugins", {}):
        return  # already registered (this module was loaded twice)
    kwargs = {}
    # torch >= 2.1 asks which devices a backend serves; smd takes CPU
    # tensors in this release.
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kwargs["devices"] = ["cpu"]
    dist.Backend.register_backend(name, _create_process_group, **kwargs)


register()

from .sharded_data_parallel import ShardedDataParallel, smp_config  # noqa: E402

__all__ = ["BACKEND", "Error", "ProcessGroupSmd", "ShardedDataParallel", "errors", "register",
           "smp_config"]
