"""Rank groups for model parallelism (smd_groups_t).

A world of W ranks with tensor-parallel degree tp and pipeline-parallel
degree pp has reduced-data-parallel degree rdp = W / (tp * pp); the
placement ("cluster" = "DPT", "spread" = "TPD", or a permutation of D, P,
T: the right-most letter varies fastest) maps coordinates to ranks. Every
rank belongs to one group of each kind: TP, PP, RDP, DP (tp * rdp ranks),
MP (one model replica, tp * pp ranks) and WORLD; see include/smd.h.

::

    with world.groups(tp=2, pp=1) as g:
        act = g.tp.allreduce(act)            # within the tensor-parallel group
        grads = g.dp.allreduce(grads, "avg")
        print(g.ranks["tp"], g.sizes["dp"], g.members("tp"))
"""

from __future__ import annotations

import enum
import weakref
from typing import Any, Dict, Generic, Optional, Protocol, Set, Tuple, TypeVar, Union

from ._ffi import enum_values, ffi, lib
from .errors import InvalidArgumentError, InvalidUsageError, check
from .request import call_interruptibly, settle_all


class GroupComm(Protocol):
    """What Groups needs of the communicator it is made from, and of the
    ones it makes, which are of the parent's class (a Comm: this module
    sits below comm.py and does not import it)."""

    interruptible: bool
    _pending: Set[Any]

    def __init__(self, handle: Any, *, owner: Any, interruptible: bool) -> None: ...
    def _live(self) -> Any: ...
    def _forget(self) -> None: ...
    def abort(self) -> None: ...


CommT = TypeVar("CommT", bound=GroupComm)

#: smd_group_kind_t, named without the SMD_GROUP_ prefix.
GroupKind = enum.IntEnum("GroupKind", enum_values("smd_group_kind_t", "SMD_GROUP_",
                                                  skip=("SMD_GROUP_KIND_COUNT",)), module=__name__)
GroupKind.__doc__ = "smd_group_kind_t: WORLD, TP, PP, DP, RDP, MP, SDP."

KindLike = Union[GroupKind, str]


def _kind(kind: KindLike) -> GroupKind:
    if isinstance(kind, GroupKind):
        return kind
    try:
        return GroupKind[str(kind).upper()]
    except KeyError:
        raise InvalidArgumentError(f"unknown group kind {kind!r}; one of: "
                                   + ", ".join(k.name.lower() for k in GroupKind)) from None


def _config(tp: int, pp: int, placement: Optional[str], sdp: int = 1) -> Tuple[Any, Any]:
    """A filled smd_groups_config_t, and the placement string it points to."""
    config = ffi.new("smd_groups_config_t *")
    check(lib.smd_groups_config_init(config))
    config.tp = tp
    config.pp = pp
    config.sdp = sdp
    text = ffi.NULL if placement is None else ffi.new("char[]", placement.encode())
    config.placement = text
    return config, text


def _members(fn: Any, *args: Any, capacity: int) -> Tuple[int, ...]:
    ranks = ffi.new("int[]", max(capacity, 1))
    count = ffi.new("int *")
    check(fn(*args, ranks, capacity, count))
    return tuple(ranks[i] for i in range(min(count[0], capacity)))


def _destroy_handle(handle: Any) -> None:
    lib.smd_groups_destroy(handle)


def _group_comm(kind: GroupKind, doc: str) -> Any:
    """A read-only property: this rank's communicator of `kind` (Groups.comm)."""
    return property(lambda groups: groups.comm(kind), doc=doc)


class Groups(Generic[CommT]):
    """This rank's model-parallel groups, each with a communicator; made by
    :meth:`smd.Comm.groups` (collective). The communicators belong to the
    Groups: they go when it is destroyed (``destroy()``, the end of a
    ``with`` block, or garbage collection) and cannot be destroyed alone.
    """

    def __init__(self, handle: Any, parent: CommT) -> None:
        """Internal: use Comm.groups()."""
        self._handle = handle
        self._parent = parent
        self._comms: Dict[GroupKind, CommT] = {}
        self._finalizer = weakref.finalize(self, _destroy_handle, handle)

    @classmethod
    def _create(cls, parent: CommT, tp: int, pp: int, placement: Optional[str],
                sdp: int = 1) -> "Groups[CommT]":
        config, _text = _config(tp, pp, placement, sdp)
        out = ffi.new("smd_groups_t **")
        call_interruptibly(lib.smd_groups_create, parent._live(), config, out,
                           on_interrupt=parent.abort,
                           on_abandoned=lambda: lib.smd_groups_destroy(out[0]))
        return cls(out[0], parent)

    def _live(self) -> Any:
        if self._handle is None:
            raise InvalidUsageError("the groups were destroyed")
        return self._handle

    def __repr__(self) -> str:
        if self._handle is None:
            return "<smd.Groups destroyed>"
        sizes = " ".join(f"{k.name.lower()}={self.size(k)}" for k in GroupKind)
        return f"<smd.Groups {sizes}>"

    # -- queries -------------------------------------------------------------

    def rank(self, kind: KindLike) -> int:
        """This rank's rank in its group of `kind` ("tp", GroupKind.TP, ...)."""
        out = ffi.new("int *")
        check(lib.smd_groups_rank(self._live(), _kind(kind), out))
        return out[0]

    def size(self, kind: KindLike) -> int:
        """The size of this rank's group of `kind`."""
        out = ffi.new("int *")
        check(lib.smd_groups_size(self._live(), _kind(kind), out))
        return out[0]

    def members(self, kind: KindLike) -> Tuple[int, ...]:
        """The ranks (of the parent communicator) of this rank's group of
        `kind`, ascending."""
        k = _kind(kind)
        return _members(lib.smd_groups_members, self._live(), k, capacity=self.size(k))

    def comm(self, kind: KindLike) -> CommT:
        """The communicator of this rank's group of `kind` (owned by the Groups)."""
        k = _kind(kind)
        found = self._comms.get(k)
        if found is None:
            out = ffi.new("smd_comm_t **")
            check(lib.smd_groups_comm(self._live(), k, out))
            found = self._comms[k] = type(self._parent)(
                out[0], owner=self, interruptible=self._parent.interruptible)
        return found

    @property
    def ranks(self) -> Dict[str, int]:
        """This rank's rank in each group: {"world": .., "tp": .., ...}."""
        return {k.name.lower(): self.rank(k) for k in GroupKind}

    @property
    def sizes(self) -> Dict[str, int]:
        """Each group's size: {"world": W, "tp": tp, "pp": pp, ...}."""
        return {k.name.lower(): self.size(k) for k in GroupKind}

    tp = _group_comm(GroupKind.TP, "The tensor-parallel group (same rdp and pp coordinates).")
    pp = _group_comm(GroupKind.PP, "The pipeline-parallel group (same rdp and tp coordinates).")
    dp = _group_comm(GroupKind.DP, "The data-parallel group (same pp coordinate; tp * rdp ranks).")
    rdp = _group_comm(GroupKind.RDP,
                      "The reduced-data-parallel group (same pp and tp coordinates).")
    mp = _group_comm(GroupKind.MP, "The model-parallel group: one model replica (tp * pp ranks).")
    sdp = _group_comm(GroupKind.SDP,
                      "The sharded data-parallel group: a chunk of sdp consecutive members of "
                      "the rdp group (the shard group of sharded parameters).")

    @property
    def world(self) -> CommT:
        """Every rank of the communicator the groups came from."""
        return self.comm(GroupKind.WORLD)

    # -- lifetime ------------------------------------------------------------

    def destroy(self) -> None:
        """Release the groups and their communicators (local). Their pending
        requests are waited for first. Destroying again does nothing."""
        if self._handle is None:
            return
        try:
            settle_all(*self._comms.values())
        finally:
            self._destroy_now()

    def _destroy_now(self) -> None:
        for comm in self._comms.values():
            comm._forget()
        handle, self._handle = self._handle, None
        self._finalizer.detach()
        check(lib.smd_groups_destroy(handle))

    def __enter__(self) -> "Groups[CommT]":
        self._live()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            for comm in self._comms.values():
                comm.abort()
        self.destroy()


def layout(world_size: int, rank: int, kind: KindLike, *, tp: int = 1, pp: int = 1,
           placement: Optional[str] = "cluster", sdp: int = 1) -> Tuple[int, Tuple[int, ...]]:
    """The groups computed without a job (smd_groups_layout): for rank
    `rank` of a world of `world_size`, its rank within its group of `kind`
    and the group's members."""
    config, _text = _config(tp, pp, placement, sdp)
    group_rank = ffi.new("int *")
    members = _members(lambda *a: lib.smd_groups_layout(config, world_size, rank, _kind(kind),
                                                        group_rank, *a),
                       capacity=max(world_size, 0))
    return group_rank[0], members
