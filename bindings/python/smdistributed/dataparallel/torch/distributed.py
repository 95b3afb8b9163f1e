"""SMDDP's ``smdistributed.dataparallel.torch.distributed`` rank calls over
torch.distributed with smd's backend (registered as "smddp").

init_process_group() forms the default group (backend "smddp", env://)
unless one exists; the collectives are torch.distributed's own, re-exported.
Local rank and size come from the launcher's LOCAL_RANK and
LOCAL_WORLD_SIZE (torchrun, smdrun), else from Open MPI's or Slurm's
variables, else a collective over the ranks' host names.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import torch.distributed as _dist
from torch.distributed import (ReduceOp, all_gather, all_reduce, all_to_all, barrier,  # noqa: F401
                               broadcast, gather, get_rank, get_world_size, is_initialized,
                               reduce, scatter)

from smd.smp import node_ranks

from . import torch_smddp

_LOCAL_RANK = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_LOCAL_SIZE = ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")


def init_process_group(*args: Any, **kwargs: Any) -> None:
    """Form the default process group over smd (backend "smddp") unless
    one exists; arguments are init_process_group's."""
    if not _dist.is_initialized():
        kwargs.setdefault("backend", torch_smddp.BACKEND)
        _dist.init_process_group(*args, **kwargs)


def _from_env(names: tuple) -> Optional[int]:
    for name in names:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return None


def get_local_rank() -> int:
    """This process's rank among those on its node."""
    found = _from_env(_LOCAL_RANK)
    return found if found is not None else node_ranks(_dist).index(_dist.get_rank())


def get_local_size() -> int:
    """The number of processes on this node."""
    found = _from_env(_LOCAL_SIZE)
    return found if found is not None else len(node_ranks(_dist))
