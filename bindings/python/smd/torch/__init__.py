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

import atexit
import functools
import inspect
from datetime import timedelta

import torch
import torch.distributed as dist

from . import _loader, errors, launcher_env
from .errors import Error

_c10d, EXTENSION_PATH = _loader.load()

#: The name to pass to init_process_group / new_group.
BACKEND = "smd"

if _loader.major_minor(_c10d.TORCH_VERSION) != _loader.major_minor(torch.__version__):
    raise ImportError(f"smd.torch: {EXTENSION_PATH} was built for torch {_c10d.TORCH_VERSION} "
                      f"but this is torch {torch.__version__}; rebuild it (ninja -C build)")

ProcessGroupSmd = _c10d.ProcessGroupSmd

# A backend thread may still be releasing a finished operation's tensors
# when the script ends; the interpreter must not finalize under it.
atexit.register(_c10d._wait_for_releases)


def _creator(name: str):
    """What torch.distributed calls for every group with backend `name`:
    the group titles its profiler events "<name>:all_reduce", ..."""

    def create_process_group(store, rank: int, size: int, timeout: timedelta):
        return ProcessGroupSmd(store, rank, size, timeout, name.lower())

    return create_process_group


#: Every name register() gave smd's backend (lower case).
_NAMES = set()


def register(name: str = BACKEND) -> None:
    """Make smd's backend available to torch.distributed under `name` too
    (smdistributed.dataparallel.torch.torch_smddp registers "smddp").
    Registering a name again does nothing."""
    _NAMES.add(name.lower())
    if name.upper() in getattr(dist.Backend, "_plugins", {}):
        return  # already registered (this module was loaded twice)
    kwargs = {}
    # torch >= 2.1 asks which devices a backend serves: "cuda" too, so a
    # CUDA tensor reaches smd (which takes it in some operations when built
    # against a CUDA torch, and otherwise refuses it saying why) instead
    # of torch's "no backend type associated with device type cuda".
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kwargs["devices"] = ["cpu", "cuda"]
    dist.Backend.register_backend(name, _creator(name), **kwargs)


register()


def _is_smd(backend) -> bool:
    """True for "smd", "smddp", "cpu:smd", "cpu:smd,cuda:smd", ..."""
    if backend is None:
        return False
    names = {part.split(":")[-1].strip().lower() for part in str(backend).split(",")}
    return bool(names) and names <= _NAMES


_torch_init_process_group = dist.init_process_group


@functools.wraps(_torch_init_process_group)
def init_process_group(backend=None, init_method=None, *args, **kwargs):
    """torch's init_process_group; for smd's backends under mpirun or srun
    (no RANK/WORLD_SIZE), torch's env:// variables come first from the
    launcher's environment (smd.torch.launcher_env)."""
    if (_is_smd(backend) and init_method in (None, "env://") and "store" not in kwargs
            and not args and launcher_env.missing() and launcher_env.launched()):
        launcher_env.fill()
    return _torch_init_process_group(backend, init_method, *args, **kwargs)


# SMDDP scripts call torch.distributed.init_process_group("smddp") directly,
# so the function torch.distributed exports is the one replaced.
dist.init_process_group = init_process_group
dist.distributed_c10d.init_process_group = init_process_group

from .sharded_data_parallel import ShardedDataParallel, smp_config  # noqa: E402

__all__ = ["BACKEND", "Error", "ProcessGroupSmd", "ShardedDataParallel", "errors", "register",
           "smp_config"]
