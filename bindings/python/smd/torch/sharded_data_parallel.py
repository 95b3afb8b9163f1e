"""ShardedDataParallel: SMP's sharded data parallelism (ZeRO stage 3) for
torch modules, over smd's sharded parameter sets (smd.ShardedParameters).

::

    import smd.torch
    from smd.torch import ShardedDataParallel

    model = ShardedDataParallel(net, max_live_parameters=int(2e7))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)   # this rank's shards
    for x, y in data:
        loss = loss_fn(model(x), y)
        loss.backward()          # gradients land, averaged, in the shards
        opt.step()
        opt.zero_grad()
    full = model.state_dict()    # gathered: the unwrapped module's keys

At wrap time every parameter of the module is registered, with rank 0's
values (as DDP does), with a set over the process group's ranks: a
parameter of at least param_persistence_threshold elements keeps only this
rank's shard (the shard, a flat view of the set's memory, is an
nn.Parameter of this wrapper; the module's parameter keeps its shape over
an empty storage while not gathered); a smaller one stays whole
("persistent"), its ``.data`` a view of the set's memory. When nothing
reaches the threshold, rank 0 warns once with the sizes.

Gathering is per unit: a module of a `units` class (default:
nn.MultiheadAttention and the transformer layers, whose forwards read
their children's weights directly) gathers its whole subtree, any other
module its own sharded parameters. Before a unit's forward its parameters
are gathered straight into their gather buffers (smd_sharded_fetch_into:
no copy of the set's is held beside them) and become views of them, with
the units that follow along the order the first step recorded gathered
ahead (up to prefetch_depth parameters, within max_live_parameters);
after it, they hold nothing again and their buffers' pages go back to the
system. A parameter's gather buffer (gather_buffer.GatherBuffer) is a
memory mapping of its own, at the same address for the wrapper's life, so
views an operation saved for its backward (a transposed weight, a slice of
a packed projection) see the values again when the unit is gathered for
its backward, and its memory is the system's between gathers, not a block
the C library's heap keeps (which made the peak grow past the memory in
use: docs/SHARDING.md). The unit's outputs pass
through an identity autograd function whose backward gathers them again
before the unit's backward, and its inputs through one whose backward frees
them after it. As soon as every gradient of a unit has been accumulated (a
hook on each parameter's gradient accumulator), the unit's gradients are
reduce-scattered into the gradient shards (``shard.grad``) without waiting,
while the backward of the units before it goes on (the persistent
parameters' gradients, small, wait for the end of the backward and share
one allreduce); once a reduction is
done, the unit's whole gradients are dropped (at most _MAX_REDUCING units'
reductions in flight, so the whole gradients held stay bounded). When the
backward pass ends, the rest is reduced, everything waited for, and the
shards clipped to gradient_clipping when given. Then (release_heap, off
by default, glibc only) the memory the C library's heap keeps from the
freed gradients and buffers goes back to the system (malloc_trim).

A step cut short by an exception (a loss or hook raising in the forward
or backward) leaves parameters gathered, reductions in flight and the end
of the backward never run: the next forward of the wrapper undoes that
first (waits for the reductions, frees the gathered parameters, drops the
cut step's gradients, ends the set's round), so training goes on as if the
cut step had not been taken, provided every rank raised alike.

Limits of this release: CPU tensors of float32 or float64; one backward
per optimizer step (the gradient shards are overwritten by each); a
parameter must be used only inside the forward of a unit that holds it
(a freed parameter holds no memory).
"""

from __future__ import annotations

import ctypes
import warnings
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from .. import _world
from ..comm import Comm
from ..errors import InvalidArgumentError, InvalidUsageError, NoMemoryError
from ..sharded import ShardedParameters
from .gather_buffer import GatherBuffer

__all__ = ["ShardedDataParallel", "smp_config"]

#: SMP's configuration keys of sharded data parallelism -> this module's
#: keyword arguments (SMP's defaults, where they differ from ours, first).
SMP_KEYS = {
    "sdp_max_live_parameters": "max_live_parameters",
    "sdp_param_persistence_threshold": "param_persistence_threshold",
    "sdp_reduce_bucket_size": "reduce_bucket_size",
    "sdp_hierarchical_allgather": "hierarchical_allgather",
    "sdp_gradient_clipping": "gradient_clipping",
}
SMP_DEFAULTS = {"sharded_data_parallel_degree": 1, "sdp_gradient_clipping": 1.0}

_SUPPORTED = (torch.float32, torch.float64)

#: A param_persistence_threshold no parameter reaches: plain data
#: parallelism, on purpose (no warning that nothing is sharded).
NO_SHARDING = 2 ** 63

#: Modules whose forward uses their children's parameters without calling
#: the children's forward (MultiheadAttention reads out_proj.weight; the
#: transformer layers' inference fast path reads every weight of the
#: layer): each is gathered as one unit, its whole subtree at once.
_UNITS = (nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)

#: Units whose gradient reductions may be in flight at once: queuing one
#: more first waits for the oldest (whose whole gradients are then
#: dropped), so at most this many units' whole gradients wait for their
#: reduction while the backward goes on.
_MAX_REDUCING = 2


def _heap_trimmer() -> Any:
    """glibc's malloc_trim, or None where the C library has none (musl,
    macOS): it hands the free memory of the heap back to the system."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _heap_trimmer()


def _units(module: nn.Module, whole: Tuple[type, ...]) -> List[Tuple[nn.Module, List[nn.Parameter]]]:
    """The modules to hook and the parameters each gathers: a module of a
    `whole` class gathers its subtree's, any other its own (and its
    children are visited)."""
    out: List[Tuple[nn.Module, List[nn.Parameter]]] = []

    def visit(sub: nn.Module) -> None:
        if isinstance(sub, whole):
            out.append((sub, list(sub.parameters())))
            return
        out.append((sub, list(sub.parameters(recurse=False))))
        for child in sub.children():
            visit(child)

    visit(module)
    return out


def shard_group(process_group: Any) -> Comm:
    """The smd communicator the set runs over: smd's world for None (or
    torch's default group), an smd.Comm as it is, else a communicator of
    the process group's ranks (smd's world ranks are torch's global ranks
    under one launcher: smdrun, torchrun)."""
    if isinstance(process_group, Comm):
        return process_group
    world = _world.world() if _world.is_initialized() else _world.init()
    if dist.is_available() and dist.is_initialized():
        if (world.size, world.rank) != (dist.get_world_size(), dist.get_rank()):
            raise InvalidUsageError(
                f"smd's world (rank {world.rank} of {world.size}) is not torch's (rank "
                f"{dist.get_rank()} of {dist.get_world_size()}): launch both from one launcher")
        if process_group is not None and process_group is not dist.group.WORLD:
            return world.create_group(dist.get_process_group_ranks(process_group))
    elif process_group is not None:
        raise InvalidUsageError("a process_group was given but torch.distributed is not initialized")
    return world


def smp_config(config: Dict[str, Any]) -> Dict[str, Any]:
    """ShardedDataParallel's keyword arguments from SMP's configuration
    (the dict given to smp.init): sharded_data_parallel_degree and the
    sdp_* keys (others are ignored). Collective over smd's world when the
    degree is below the world size (it makes the groups): ranks
    [k*degree, (k+1)*degree) form shard group k, and the ranks at the same
    place of every shard group form a replica group, as SMP places them.
    Degree 1 (SMP's default) means no sharding: plain data parallelism,
    returned as one group of every rank with a persistence threshold no
    parameter reaches (every parameter whole, gradients allreduced)."""
    given = {**SMP_DEFAULTS, **config}
    degree = given["sharded_data_parallel_degree"]
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
        raise InvalidArgumentError(f"sharded_data_parallel_degree must be a positive integer, "
                                   f"got {degree!r}")
    kwargs: Dict[str, Any] = {ours: given[key] for key, ours in SMP_KEYS.items() if key in given}
    world = _world.world() if _world.is_initialized() else _world.init()
    if world.size % degree:
        raise InvalidArgumentError(f"sharded_data_parallel_degree {degree} does not divide the "
                                   f"{world.size} ranks")
    if degree == world.size:
        kwargs["process_group"] = world
    elif degree == 1:
        kwargs["process_group"] = world
        kwargs["param_persistence_threshold"] = NO_SHARDING
    else:
        kwargs["process_group"] = world.split(world.rank // degree, world.rank)
        kwargs["replica_group"] = world.split(world.rank % degree, world.rank)
    return kwargs


def _holding_nothing(like: torch.Tensor) -> torch.Tensor:
    """A tensor of `like`'s shape and type over an empty storage (what a
    parameter is while not gathered: using it is an error, not zeros)."""
    tensor = torch.empty(like.shape, dtype=like.dtype)
    if hasattr(tensor, "untyped_storage"):  # torch >= 2.0
        tensor.untyped_storage().resize_(0)
    else:
        tensor.storage().resize_(0)
    return tensor


class _Identity(torch.autograd.Function):
    """Passes tensors through; its backward runs `on_backward` first (when
    the gradients reach this point of the graph)."""

    @staticmethod
    def forward(ctx: Any, on_backward: Any, *tensors: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        ctx.on_backward = on_backward
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Tuple[Any, ...]:
        ctx.on_backward()
        return (None, *grads)


def _through(on_backward: Any, value: Any) -> Any:
    """`value` (a tensor, or a tuple/list/dict holding some) with its tensors
    that require grad passed through one _Identity calling `on_backward`."""
    found: List[torch.Tensor] = []

    def collect(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            if v.requires_grad:
                found.append(v)
        elif isinstance(v, (tuple, list)):
            for item in v:
                collect(item)
        elif isinstance(v, dict):
            for item in v.values():
                collect(item)

    collect(value)
    if not found:
        return value
    passed = _Identity.apply(on_backward, *found)
    if isinstance(passed, torch.Tensor):  # one output comes back bare
        passed = (passed,)
    replaced = dict(zip(map(id, found), passed))

    def rebuild(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return replaced.get(id(v), v)
        if isinstance(v, tuple) and hasattr(v, "_fields"):  # named tuple
            return type(v)(*(rebuild(item) for item in v))
        if isinstance(v, (tuple, list)):
            return type(v)(rebuild(item) for item in v)
        if isinstance(v, dict):
            return type(v)((k, rebuild(item)) for k, item in v.items())
        return v

    return rebuild(value)


class _Entry:
    """One registered parameter: the module's Parameter, its id in the set
    and what the optimizer sees (the shard, or the parameter itself when
    persistent)."""

    __slots__ = ("name", "param", "pid", "persistent", "shard", "holds", "numel", "group",
                 "arrived", "reduced", "buffer", "gathered", "freed", "prefetch",
                 "grad_view", "grad_tensor")

    def __init__(self, name: str, param: nn.Parameter, pid: int) -> None:
        self.name = name
        self.param = param
        self.pid = pid
        self.persistent = False
        self.shard: Optional[nn.Parameter] = None
        self.holds = 0  # gathers not yet let go (a module may run twice)
        self.numel = param.numel()
        self.group: Optional["_ReduceGroup"] = None  # whose reduction carries its gradient
        self.arrived = False  # its gradient was accumulated in this backward
        self.reduced = False  # and its reduction queued
        # The memory the whole parameter is gathered into, flat, padded to
        # the set's gathered count: gathers land in it directly, and its
        # pages go back to the system when it is freed.
        self.buffer: Optional[GatherBuffer] = None
        # What the parameter's .data is while gathered (a view of the
        # buffer's start, in its shape) and while freed (its shape over an
        # empty storage of its own).
        self.gathered: Optional[torch.Tensor] = None
        self.freed: Optional[torch.Tensor] = None
        self.prefetch: Any = None  # the request of a gather started ahead, until used
        # Its gradient shard in the set's memory (allocated at registration,
        # at one address for the set's life), as numpy and torch views made
        # once: the gradient the optimizer sees after each reduction.
        self.grad_view: Optional[np.ndarray] = None
        self.grad_tensor: Optional[torch.Tensor] = None


class _ReduceGroup:
    """The parameters of one unit (each parameter in the first unit that
    lists it) whose gradients are reduced together, once all arrived: the
    sharded ones then; the persistent ones (small: a bias, a norm) wait
    for the end of the backward, where all of them share one allreduce
    instead of one more collective per unit."""

    __slots__ = ("entries", "sharded", "waiting")

    def __init__(self, entries: List[_Entry]) -> None:
        self.entries = entries
        self.sharded = [e for e in entries if not e.persistent]
        self.waiting = len(entries)  # gradients still to arrive in this backward


class _Reduction:
    """A unit's reduction in flight: its request and the whole gradients it
    reads (dropped once it is done)."""

    __slots__ = ("request", "targets")

    def __init__(self, request: Any, targets: List[_Entry]) -> None:
        self.request = request
        self.targets = targets


class ShardedDataParallel(nn.Module):
    """Wraps `module` (CPU, float32/float64 parameters) for sharded data
    parallelism over `process_group` (None: every rank; an smd.Comm is
    taken as it is). Collective: every rank of the group wraps the same
    module with the same values and knobs.

    Knobs, by SMP's names without ``sdp_`` (docs/SHARDING.md):
    max_live_parameters, param_persistence_threshold, reduce_bucket_size,
    hierarchical_allgather as smd.ShardedParameters takes them;
    gradient_clipping: the global gradient norm is clipped to it after
    each backward (None: not clipped); prefetch_depth: parameters gathered
    ahead; replica_group: the data-parallel replicas of this shard group
    (the ranks holding the same shard, as an smd.Comm or a process group),
    over which gradient shards are averaged too (None: no replicas);
    units: module classes gathered whole, their subtree at once (None:
    nn.MultiheadAttention, nn.TransformerEncoderLayer,
    nn.TransformerDecoderLayer); release_heap: after each backward, hand
    the free memory of the C library's heap back to the system
    (malloc_trim(0), glibc only; the whole process's heap, so it costs the
    page faults of touching that memory again; off by default: a library
    does not trim its user's heap unasked).

    ``parameters()`` yields what this rank owns (the shards and the
    persistent parameters): give those to the optimizer. ``state_dict()``
    gathers the whole module's, under the module's own keys.
    """

    def __init__(self, module: nn.Module, process_group: Any = None,
                 max_live_parameters: int = int(1e9),
                 param_persistence_threshold: int = int(1e6),
                 reduce_bucket_size: int = int(5e8), hierarchical_allgather: bool = True,
                 gradient_clipping: Optional[float] = None, prefetch_depth: int = 2,
                 replica_group: Any = None, units: Optional[Iterable[type]] = None,
                 release_heap: bool = False) -> None:
        super().__init__()
        if gradient_clipping is not None and not gradient_clipping > 0:
            raise InvalidArgumentError(f"gradient_clipping must be > 0 or None, got "
                                       f"{gradient_clipping!r}")
        # Not a registered submodule: parameters() yields the shards only.
        object.__setattr__(self, "module", module)
        self.gradient_clipping = gradient_clipping
        self.last_grad_norm: Optional[float] = None
        self._set = ShardedParameters(
            shard_group(process_group), max_live_parameters=max_live_parameters,
            param_persistence_threshold=param_persistence_threshold,
            reduce_bucket_size=reduce_bucket_size, hierarchical_allgather=hierarchical_allgather,
            prefetch_depth=prefetch_depth,
            replica_comm=None if replica_group is None else shard_group(replica_group))
        self._entries: List[_Entry] = []
        self._by_param: Dict[int, _Entry] = {}
        for name, param in module.named_parameters():
            if param.device.type != "cpu" or param.dtype not in _SUPPORTED:
                raise InvalidArgumentError(
                    f"parameter {name} is a {param.device.type} {param.dtype} tensor: "
                    "ShardedDataParallel takes CPU float32/float64 parameters in this release")
            values = param.detach().contiguous().numpy()
            # As DDP does: every rank starts from rank 0's values.
            self._set.comm.broadcast(values, root=0)
            pid = self._set.register(values)
            entry = _Entry(name, param, pid)
            self._entries.append(entry)
            self._by_param[id(param)] = entry
        # The gradient accumulator of each parameter, taken while its
        # storage is whole (a view of a freed one cannot be made); setting
        # .data to a tensor of the same type keeps it. Kept referenced, or
        # autograd would make a new one without the hook it gets below.
        accumulators = [e.param.expand_as(e.param).grad_fn.next_functions[0][0]
                        if e.param.requires_grad else None for e in self._entries]
        owned = []
        for entry in self._entries:
            layout = self._set.layout(entry.pid)
            entry.persistent = layout.persistent
            entry.grad_view = self._set.grad(entry.pid)
            entry.grad_tensor = torch.from_numpy(entry.grad_view)
            if entry.persistent:
                entry.param.data = torch.from_numpy(self._set.shard(entry.pid))
                entry.shard = entry.param
            else:
                entry.shard = nn.Parameter(torch.from_numpy(self._set.shard(entry.pid)),
                                           requires_grad=entry.param.requires_grad)
                # Gathered, the parameter is a view of a buffer mapped for
                # it alone, whose address stays (so views saved for a
                # backward, a transposed weight or a slice of a packed one,
                # read the values again once it is gathered again) and
                # whose pages go back to the system when it is freed
                # (heap blocks would stay in glibc's heap: docs/SHARDING.md).
                # Freed, the parameter keeps its shape over an empty storage.
                entry.buffer = GatherBuffer(self._set.gathered_count(entry.pid), entry.param.dtype)
                entry.gathered = entry.buffer.tensor[:entry.numel].view(entry.param.shape)
                entry.freed = _holding_nothing(entry.param)
                entry.param.data = entry.freed
            owned.append(entry.shard)
        self.shards = nn.ParameterList(owned)
        self._gathered_elements = 0
        self._max_live = max_live_parameters
        self._peak_gathered_elements = 0
        self._hooks = []
        self._backward_queued = False
        self._prefetch_depth = prefetch_depth
        self._release_heap = bool(release_heap)
        # The units' gathers of the first step, in order (each unit by its
        # index in _units), and where the current step is along it: the
        # gathers of the units that follow are started ahead.
        self._order: List[int] = []
        self._recording = True
        self._cursor = 0
        self._unit_entries: List[List[_Entry]] = []
        whole = _UNITS if units is None else tuple(units)
        if not all(isinstance(u, type) and issubclass(u, nn.Module) for u in whole):
            raise InvalidArgumentError(f"units must be nn.Module classes, got {units!r}")
        found = _units(module, whole)
        self._groups: List[_ReduceGroup] = []
        for _, params in found:
            members = [self._by_param[id(p)] for p in params]
            members = [e for e in members if e.group is None and e.param.requires_grad]
            if members:
                group = _ReduceGroup(members)
                self._groups.append(group)
                for e in members:
                    e.group = group
        self._reducing: List[_Reduction] = []
        self._full_grad_elements = 0
        self._peak_full_grad_elements = 0
        # A hook on each parameter's gradient accumulator (torch 1.13 has no
        # post-accumulate-grad hooks).
        self._accumulators = [a for a in accumulators if a is not None]
        for e, accumulator in zip(self._entries, accumulators):
            if e.group is not None:
                accumulator.register_hook(self._grad_arrived_hook(e))
        for sub, params in found:
            mine = [self._by_param[id(p)] for p in params]
            mine = [e for e in mine if not e.persistent]
            if not mine:
                continue
            unit = len(self._unit_entries)
            self._unit_entries.append(mine)
            self._hooks.append(sub.register_forward_pre_hook(self._pre_forward_hook(unit)))
            self._hooks.append(sub.register_forward_hook(self._post_forward_hook(unit)))
        if self._set.comm.rank == 0 and self._entries and param_persistence_threshold < NO_SHARDING \
                and all(e.persistent for e in self._entries):
            largest = max(e.numel for e in self._entries)
            warnings.warn(
                f"ShardedDataParallel shards nothing: none of the {len(self._entries)} "
                f"parameters ({sum(e.numel for e in self._entries)} elements, the largest "
                f"{largest}) reaches param_persistence_threshold={param_persistence_threshold} "
                f"elements, so every rank keeps all of them whole, as DDP does; set "
                f"param_persistence_threshold to at most {largest} to shard", stacklevel=2)

    # -- gathering -------------------------------------------------------------

    def _gather(self, unit: int) -> None:
        entries = self._unit_entries[unit]
        self._advance(unit)
        missing = [e for e in entries if e.holds == 0]
        for e in entries:
            e.holds += 1
        fetch = [e for e in missing if e.prefetch is None]
        adding = sum(e.numel for e in fetch)
        if fetch and self._gathered_elements + adding > self._max_live:
            # Every rank holds the same units: every rank raises here.
            for e in entries:
                e.holds -= 1
            raise NoMemoryError(
                f"gathering {adding} more elements beside the {self._gathered_elements} "
                f"gathered would pass max_live_parameters={self._max_live}: raise it to at "
                f"least the largest unit's sharded elements")
        if fetch:
            self._fetch_into(fetch, async_=False)
        for e in missing:
            if e.prefetch is not None:
                request, e.prefetch = e.prefetch, None
                request.wait()
        self._prefetch_after()

    def _fetch_into(self, entries: List[_Entry], async_: bool) -> Any:
        """Gather entries straight into their parameters' buffers (their
        views, saved for a backward, see them again)."""
        for e in entries:
            e.param.data = e.gathered
        self._gathered_elements += sum(e.numel for e in entries)
        self._peak_gathered_elements = max(self._peak_gathered_elements, self._gathered_elements)
        try:
            return self._set.fetch_into_addresses(
                [e.pid for e in entries], [e.buffer.tensor.data_ptr() for e in entries],
                [e.buffer.tensor.numel() for e in entries], async_=async_)
        except BaseException:
            self._free(entries)
            raise

    def _free(self, entries: List[_Entry]) -> None:
        for e in entries:
            e.param.data = e.freed
            e.buffer.release()
            self._gathered_elements -= e.numel

    def _advance(self, unit: int) -> None:
        """Follow the first step's order of gathers (record it in the first
        step): the same calls on every rank, so the same gathers ahead."""
        if self._recording:
            self._order.append(unit)
            return
        try:
            self._cursor = self._order.index(unit, self._cursor) + 1
        except ValueError:
            pass  # off the recorded order: nothing gathered ahead this time

    def _prefetch_after(self) -> None:
        """Start the gathers of the units that follow along the recorded
        order, up to prefetch_depth parameters, while max_live_parameters
        leaves room."""
        if self._recording or not self._prefetch_depth:
            return
        started = 0
        for unit in self._order[self._cursor:]:
            ahead = [e for e in self._unit_entries[unit] if e.holds == 0 and e.prefetch is None]
            if not ahead:
                continue
            if started + len(ahead) > self._prefetch_depth or \
                    self._gathered_elements + sum(e.numel for e in ahead) > self._max_live:
                return
            request = self._fetch_into(ahead, async_=True)
            for e in ahead:
                e.prefetch = request
            started += len(ahead)

    def _drop_prefetched(self) -> None:
        """Free what was gathered ahead and not used (after waiting: the
        gathers write into it)."""
        for e in self._entries:
            if e.prefetch is not None:
                request, e.prefetch = e.prefetch, None
                try:
                    request.wait()
                finally:
                    if e.holds == 0:
                        self._free([e])

    def _let_go(self, entries: List[_Entry]) -> None:
        for e in entries:
            if e.holds > 0:
                e.holds -= 1
                if e.holds == 0:
                    self._free([e])

    def _pre_forward_hook(self, unit: int) -> Any:
        entries = self._unit_entries[unit]

        def hook(module: nn.Module, inputs: Any) -> Any:
            self._gather(unit)
            if torch.is_grad_enabled():
                # Backward reaches the inputs after the module's own backward.
                return _through(lambda: self._let_go(entries), inputs)
            return None
        return hook

    def _post_forward_hook(self, unit: int) -> Any:
        entries = self._unit_entries[unit]

        def hook(module: nn.Module, inputs: Any, output: Any) -> Any:
            self._let_go(entries)
            if torch.is_grad_enabled():
                return _through(lambda: self._before_backward(unit), output)
            return None
        return hook

    def _queue_after_backward(self) -> None:
        if not self._backward_queued:
            self._backward_queued = True
            torch.autograd.Variable._execution_engine.queue_callback(self._after_backward)

    def _before_backward(self, unit: int) -> None:
        self._queue_after_backward()
        self._gather(unit)

    # -- gradients ---------------------------------------------------------------

    def _grad_arrived_hook(self, entry: _Entry) -> Any:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            self._queue_after_backward()
            if entry.arrived or entry.param.grad is None:
                return
            entry.arrived = True
            if not entry.persistent:
                self._full_grad_elements += entry.numel
                self._peak_full_grad_elements = max(self._peak_full_grad_elements,
                                                    self._full_grad_elements)
            group = entry.group
            group.waiting -= 1
            if group.waiting == 0:
                self._reduce_part(group.sharded)
        return hook

    def _after_backward(self) -> None:
        """End of the backward pass: release what is still held, reduce the
        gradients not reduced yet, wait for every reduction, clip."""
        self._backward_queued = False
        self._drop_prefetched()
        held = [e for e in self._entries if e.holds > 0]
        for e in held:
            e.holds = 1
        self._let_go(held)
        self.reduce_gradients()
        if self._release_heap and _MALLOC_TRIM is not None:
            # glibc keeps freed blocks below its (risen) mmap threshold in
            # the heap: the whole gradients of this backward and the
            # collectives' buffers, freed in an order that leaves holes the
            # next step allocates around (docs/SHARDING.md).
            _MALLOC_TRIM(0)

    def _targets(self, entries: List[_Entry]) -> Tuple[List[int], List[np.ndarray], List[_Entry]]:
        """The ids and whole gradients of the entries that hold a gradient
        not reduced yet in this round, and those entries."""
        ids, grads, targets = [], [], []
        for e in entries:
            g = e.param.grad
            if g is None or e.reduced:
                continue
            if g.data_ptr() == e.grad_tensor.data_ptr():
                g = g.clone()  # the previous step's reduced gradient, accumulated into
            e.reduced = True
            ids.append(e.pid)
            grads.append(g.detach().contiguous().numpy())
            targets.append(e)
        return ids, grads, targets

    def _reduce_part(self, entries: List[_Entry]) -> None:
        """Queue the reduction of a unit's gradients (collective: every rank
        completes its units in the same order), first finishing the oldest
        while _MAX_REDUCING are in flight."""
        ids, grads, targets = self._targets(entries)
        if not ids:
            return
        while len(self._reducing) >= _MAX_REDUCING:
            self._finish(self._reducing.pop(0))
        request = self._set.reduce_grads_part(ids, grads, async_=True)
        self._reducing.append(_Reduction(request, targets))
        while self._reducing and self._reducing[0].request.done:
            self._finish(self._reducing.pop(0))

    def _finish(self, reduction: _Reduction) -> None:
        """Wait for a reduction and adopt its gradient shards."""
        reduction.request.wait()
        self._adopt(reduction.targets)

    def _adopt(self, targets: List[_Entry]) -> None:
        """Reduced: the gradient shards become the gradients the optimizer
        sees, and the whole gradients are dropped."""
        for e in targets:
            if e.persistent:
                e.param.grad = e.grad_tensor
                continue
            if e.arrived:
                self._full_grad_elements -= e.numel
            e.param.grad = None
            e.shard.grad = e.grad_tensor

    def reduce_gradients(self) -> None:
        """Reduce-scatter the module parameters' gradients not reduced yet
        into the shards' .grad, wait for the reductions in flight, end the
        set's round and clip (runs by itself at the end of every backward
        that reached the module's parameters; call it when a backward did
        not). Collective."""
        try:
            parts = any(e.reduced for e in self._entries)
            ids, grads, targets = self._targets(self._entries)
            while self._reducing:
                self._finish(self._reducing.pop(0))
            if not ids and not parts:
                return
            self._set.reduce_grads(ids, grads)
            self._adopt(targets)
        finally:
            self._clear_round()
            # The first round's gathers are the order the next ones follow.
            self._recording = False
        if self.gradient_clipping is not None:
            self.last_grad_norm = self._set.clip_grads(self.gradient_clipping)

    def _clear_round(self) -> None:
        self._reducing.clear()
        for group in self._groups:
            group.waiting = len(group.entries)
        for e in self._entries:
            e.arrived = e.reduced = False
        self._full_grad_elements = 0
        self._cursor = 0

    def _start_step(self) -> None:
        """Before a forward outside a backward: what a step cut short left
        (a forward or backward that raised: parameters still gathered,
        reductions in flight, gradients of half a backward, the end of the
        backward never run) is undone, so this step starts as after a
        complete one. The same on every rank when every rank raised alike,
        as a loss or a hook does. The gradients of the cut backward are
        dropped (the parameters' and shards' .grad it set become None)."""
        self._drop_prefetched()
        self._cursor = 0
        held = [e for e in self._entries if e.holds > 0]
        parts = any(e.reduced for e in self._entries)
        if not (self._backward_queued or self._reducing or held or parts
                or any(e.arrived for e in self._entries)):
            return
        self._backward_queued = False
        try:
            for reduction in self._reducing:
                reduction.request.wait()  # queued on every rank: it completes
            for e in held:
                e.holds = 0
                self._free([e])
            for e in self._entries:
                # Half a backward's gradients, and (a persistent parameter's
                # .grad is the set's gradient memory) what the reductions
                # just waited for wrote, maybe after a zero_grad.
                if e.arrived or e.reduced:
                    e.param.grad = None
                if e.reduced and not e.persistent:
                    e.shard.grad = None
            if parts:
                # Ends the set's round, whose reduced gradients would
                # otherwise refuse their reduction in this step.
                self._set.reduce_grads([], [])
        finally:
            self._clear_round()
            if self._recording:
                self._order.clear()  # record the order again, from a whole step

    def clip_grad_norm_(self, max_norm: float) -> float:
        """Clip the global norm of the gradient shards to max_norm and
        return the norm (collective), like torch.nn.utils.clip_grad_norm_
        over the whole model."""
        self.last_grad_norm = self._set.clip_grads(max_norm)
        return self.last_grad_norm

    # -- module interface ---------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self._start_step()
        return self.module(*args, **kwargs)

    def train(self, mode: bool = True) -> "ShardedDataParallel":
        super().train(mode)
        self.module.train(mode)
        return self

    def state_dict(self, *args: Any, **kwargs: Any) -> "OrderedDict[str, torch.Tensor]":
        """The whole module's state (collective: parameters are gathered one
        at a time, within max_live_parameters), under the module's own
        keys, as copies."""
        out: "OrderedDict[str, torch.Tensor]" = OrderedDict()
        # keep_vars: the Parameter objects themselves (tied ones under each name).
        for name, value in self.module.state_dict(keep_vars=True).items():
            e = self._by_param.get(id(value))
            if e is None or e.persistent or e.holds > 0:
                out[name] = value.detach().clone()
            else:
                (full,) = self._set.fetch([e.pid])
                out[name] = torch.from_numpy(np.array(full))
                self._set.release([e.pid])
        return out

    def load_state_dict(self, state_dict: Dict[str, torch.Tensor], strict: bool = True) -> Any:
        """Load a whole module's state (the module's own keys, as state_dict()
        gives them): every rank copies its shards' pieces from it. Collective
        (every rank passes the same state) once parameters were fetched."""
        own = self.module.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise InvalidArgumentError(f"load_state_dict: missing keys {missing}, "
                                       f"unexpected keys {unexpected}")
        with torch.no_grad():
            for name, value in own.items():
                if name not in state_dict:
                    continue
                given = state_dict[name].detach()
                e = self._by_param.get(id(value))
                if e is None or e.persistent:
                    value.copy_(given)
                    continue
                if given.numel() != int(np.prod(self._set.shape(e.pid))):
                    raise InvalidArgumentError(f"load_state_dict: {name} has {given.numel()} "
                                               f"elements, the parameter "
                                               f"{int(np.prod(self._set.shape(e.pid)))}")
                lay = self._set.layout(e.pid)
                piece = given.reshape(-1)[lay.offset:lay.offset + lay.count]
                e.shard.zero_()
                e.shard[:piece.numel()].copy_(piece)
        if self._set.stats()["fetches"]:
            # Ends the set's round, as an optimizer step does: gathered
            # copies of the old values are dropped. (Before any fetch there
            # are none, and the order of use is still to be recorded.)
            self._set.reduce_grads([], [])
        return nn.modules.module._IncompatibleKeys(missing, unexpected)

    def stats(self) -> Dict[str, Any]:
        """The set's statistics on this rank (smd.ShardedParameters.stats)
        and this wrapper's: the bytes of the shards and persistent
        parameters (owned_bytes) and the elements of the module's sharded
        parameters gathered now and at most so far
        (gathered_elements, peak_gathered_elements; the set's own
        gathered copies are its live/peak_live elements), and the elements
        of the sharded parameters' whole gradients held while their
        reduction waits, now and at most so far (full_grad_elements,
        peak_full_grad_elements)."""
        s = self._set.stats()
        s["owned_bytes"] = sum(e.shard.numel() * e.shard.element_size() for e in self._entries)
        s["gathered_elements"] = self._gathered_elements
        s["peak_gathered_elements"] = self._peak_gathered_elements
        s["full_grad_elements"] = self._full_grad_elements
        s["peak_full_grad_elements"] = self._peak_full_grad_elements
        return s

    @property
    def sharded_parameters(self) -> ShardedParameters:
        """The set underneath."""
        return self._set
