"""SageMaker model parallelism's rank API (``smdistributed.modelparallel.torch``)
over smd: ranks, degrees and torch process groups, nothing else of SMP.

::

    import smd.smp as smp                  # or: import smdistributed.modelparallel.torch as smp

    smp.init({"tensor_parallel_degree": 2, "pipeline_parallel_degree": 2,
              "placement_strategy": "cluster", "ddp": True})
    print(smp.rank(), smp.tp_rank(), smp.pp_rank(), smp.rdp_rank(), smp.dp_rank())
    dist.all_reduce(grad, group=smp.get_dp_process_group())

:func:`init` forms torch.distributed's default group with backend "smd"
when nothing formed it yet (env://: torchrun, smdrun, ...), then computes
the layout with smd's groups library (``smd_groups_layout``: SMP's
placement rules, docs/GROUPS.md) and makes one torch process group per
group of each kind, in the same order on every rank, as torch requires.

Everything else of SMP (DistributedModel, DistributedOptimizer, step,
partition, checkpoints, smp.nn, ...) raises NotImplementedError naming it.
"""

from __future__ import annotations

import os
import socket
from typing import Any, Dict, List, Optional, Tuple

from .errors import InvalidArgumentError, InvalidUsageError
from .groups import layout

#: The group kinds SMP names (smd's GroupKind of the same names).
KINDS = ("tp", "pp", "dp", "rdp", "mp")

__all__ = ["init", "is_initialized", "config", "rank", "size", "local_rank", "local_size"] + [
    f"{kind}_{what}" for kind in KINDS for what in ("rank", "size")] + [
    f"get_{kind}_{what}" for kind in KINDS for what in ("group", "process_group")] + [
    "get_world_process_group"]

#: SMP's configuration keys that this module reads, and their defaults.
DEFAULTS: Dict[str, Any] = {
    "tensor_parallel_degree": 1,
    "pipeline_parallel_degree": 1,  # "partitions" is its older name
    "placement_strategy": "cluster",
    "ddp": False,
    "sharded_data_parallel_degree": 1,
}

# What SMP has beyond ranks and groups; reaching for them says so.
_NOT_IMPLEMENTED = {
    "DistributedModel": "model partitioning and pipelining",
    "DistributedOptimizer": "the partitioned optimizer",
    "step": "pipelined step functions",
    "partition": "manual partitioning",
    "set_partition": "manual partitioning",
    "save": "partitioned checkpoints",
    "load": "partitioned checkpoints",
    "save_checkpoint": "partitioned checkpoints",
    "resume_from_checkpoint": "partitioned checkpoints",
    "nn": "SMP's distributed modules",
    "amp": "SMP's mixed precision",
    "tensor_parallelism": "tensor-parallel module replacement",
    "delay_param_initialization": "delayed parameter initialization",
    "model_creation": "distributed model creation",
    "set_activation_checkpointing": "activation checkpointing",
    "state": "SMP's internal state",
}


class _Layout:
    """What init() computed: this rank's place and its process groups."""

    def __init__(self, config: Dict[str, Any], rank: int, size: int, local: Tuple[int, int],
                 ranks: Dict[str, Tuple[int, Tuple[int, ...]]], groups: Dict[str, Any]) -> None:
        self.config = config
        self.rank = rank
        self.size = size
        self.local_rank, self.local_size = local
        self.ranks = ranks        # kind -> (rank in the group, the group's world ranks)
        self.groups = groups      # kind -> torch process group


_state: Optional[_Layout] = None


def _positive(config: Dict[str, Any], key: str) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgumentError(f"smp config {key!r} must be a positive integer, got {value!r}")
    return value


def _resolve(config: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """SMP's configuration with defaults filled in, "partitions" read as
    pipeline_parallel_degree; every other key is kept as given."""
    given = dict(config or {})
    if "partitions" in given:
        partitions = given.pop("partitions")
        if given.setdefault("pipeline_parallel_degree", partitions) != partitions:
            raise InvalidArgumentError(
                f"smp config gives partitions={partitions!r} and pipeline_parallel_degree="
                f"{given['pipeline_parallel_degree']!r}: they name the same degree")
    resolved = {**DEFAULTS, **given}
    for key in ("tensor_parallel_degree", "pipeline_parallel_degree",
                "sharded_data_parallel_degree"):
        _positive(resolved, key)
    if not isinstance(resolved["placement_strategy"], str):
        raise InvalidArgumentError("smp config 'placement_strategy' must be a string "
                                   "(cluster, spread, or a permutation of D, P, T)")
    return resolved


def node_ranks(dist: Any) -> List[int]:
    """Collective over torch's default group: the ranks on this rank's
    node, ascending. A node is a host (or SMD_NODE_ID, as smd takes it)."""
    node = os.environ.get("SMD_NODE_ID") or socket.gethostname()
    nodes: List[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(nodes, node)
    return [r for r, n in enumerate(nodes) if n == node]


def _process_groups(dist: Any, size: int, tp: int, pp: int, placement: str,
                    rank: int) -> Dict[str, Any]:
    """One torch process group per group of each kind. Every rank calls
    new_group for every group, in the same order (kind, then the group's
    lowest rank), as torch requires; a rank keeps its own."""
    mine = {}
    for kind in KINDS:
        seen = set()
        for r in range(size):
            members = layout(size, r, kind, tp=tp, pp=pp, placement=placement)[1]
            if members in seen:
                continue
            seen.add(members)
            group = dist.new_group(list(members), backend="smd")
            if rank in members:
                mine[kind] = group
    return mine


def init(config: Optional[Dict[str, Any]] = None) -> None:
    """Collective over every rank: read SMP's configuration (a dict with
    SMP's keys: tensor_parallel_degree, pipeline_parallel_degree or
    partitions, placement_strategy, ddp, sharded_data_parallel_degree; other
    keys are kept and available from :func:`config`), form torch's default
    process group with backend "smd" if none exists, and make the groups.

    Raises InvalidArgumentError for a bad configuration (a degree that does
    not divide the world, an unknown placement), InvalidUsageError when
    called twice.
    """
    global _state
    if _state is not None:
        raise InvalidUsageError("smp.init() was already called")
    import torch.distributed as dist

    import smd.torch  # noqa: F401  (registers the backend "smd")

    resolved = _resolve(config)
    if not dist.is_initialized():
        dist.init_process_group("smd")
    rank, size = dist.get_rank(), dist.get_world_size()
    tp, pp = resolved["tensor_parallel_degree"], resolved["pipeline_parallel_degree"]
    placement = resolved["placement_strategy"]
    # Validated by the library on every rank alike, before any group is made.
    ranks = {kind: layout(size, rank, kind, tp=tp, pp=pp, placement=placement) for kind in KINDS}
    on_node = node_ranks(dist)
    local = (on_node.index(rank), len(on_node))
    groups = _process_groups(dist, size, tp, pp, placement, rank)
    _state = _Layout(resolved, rank, size, local, ranks, groups)


def is_initialized() -> bool:
    return _state is not None


def _layout() -> _Layout:
    if _state is None:
        raise InvalidUsageError("call smp.init(config) first")
    return _state


def config() -> Dict[str, Any]:
    """The configuration init() was given, with defaults filled in."""
    return dict(_layout().config)


def rank() -> int:
    """This process's rank in the job."""
    return _layout().rank


def size() -> int:
    """The number of processes in the job."""
    return _layout().size


def local_rank() -> int:
    """This process's rank among those on its node."""
    return _layout().local_rank


def local_size() -> int:
    """The number of processes on this node."""
    return _layout().local_size


def _rank_in(kind: str) -> int:
    return _layout().ranks[kind][0]


def _size_of(kind: str) -> int:
    return len(_layout().ranks[kind][1])


def _ranks_of(kind: str) -> List[int]:
    return list(_layout().ranks[kind][1])


def _group_of(kind: str) -> Any:
    return _layout().groups[kind]


def tp_rank() -> int: return _rank_in("tp")          # noqa: E704
def tp_size() -> int: return _size_of("tp")          # noqa: E704
def pp_rank() -> int: return _rank_in("pp")          # noqa: E704
def pp_size() -> int: return _size_of("pp")          # noqa: E704
def dp_rank() -> int: return _rank_in("dp")          # noqa: E704
def dp_size() -> int: return _size_of("dp")          # noqa: E704
def rdp_rank() -> int: return _rank_in("rdp")        # noqa: E704
def rdp_size() -> int: return _size_of("rdp")        # noqa: E704
def mp_rank() -> int: return _rank_in("mp")          # noqa: E704
def mp_size() -> int: return _size_of("mp")          # noqa: E704


def get_tp_group() -> List[int]: return _ranks_of("tp")     # noqa: E704
def get_pp_group() -> List[int]: return _ranks_of("pp")     # noqa: E704
def get_dp_group() -> List[int]: return _ranks_of("dp")     # noqa: E704
def get_rdp_group() -> List[int]: return _ranks_of("rdp")   # noqa: E704
def get_mp_group() -> List[int]: return _ranks_of("mp")     # noqa: E704


def get_tp_process_group() -> Any: return _group_of("tp")    # noqa: E704
def get_pp_process_group() -> Any: return _group_of("pp")    # noqa: E704
def get_dp_process_group() -> Any: return _group_of("dp")    # noqa: E704
def get_rdp_process_group() -> Any: return _group_of("rdp")  # noqa: E704
def get_mp_process_group() -> Any: return _group_of("mp")    # noqa: E704


def get_world_process_group() -> Any:
    """torch's default process group (every rank)."""
    _layout()
    import torch.distributed as dist

    return dist.group.WORLD


def __getattr__(name: str) -> Any:
    what = _NOT_IMPLEMENTED.get(name)
    if what is not None:
        raise NotImplementedError(f"smp.{name} ({what}) is not implemented by smd, which provides "
                                  "SMP's rank and process-group API only")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
