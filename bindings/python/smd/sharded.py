"""Sharded parameter sets (smd_sharded_t): SMP's sharded data parallelism
(ZeRO stage 3) for numpy arrays.

::

    import numpy as np
    import smd

    world = smd.init()
    with smd.ShardedParameters(world, param_persistence_threshold=0) as sp:
        w = sp.register(np.random.default_rng(0).standard_normal((256, 64), np.float32))
        (full,) = sp.fetch([w])            # every rank: the whole (256, 64) array
        y = x @ full
        sp.release([w])                    # its memory may be reused from here on
        ...
        sp.reduce_grads([w], [grad_w])     # full gradients in, averaged shards out
        norm = sp.clip_grads(1.0)
        sp.shard(w)[:] -= lr * sp.grad(w)  # the optimizer updates this rank's shard

Every parameter is registered with its initial values (the same on every
rank) and split into one equal shard per rank of the communicator; a rank
keeps only its shard (``shard(id)``, a flat view of the set's memory that
an optimizer updates in place) and gathers whole parameters when it needs
them (``fetch``), handing them back with ``release``. Parameters with fewer
elements than ``param_persistence_threshold`` stay whole on every rank
("persistent"): ``shard(id)`` is then the whole parameter, in its shape.

The knobs are SMP's ``sdp_*`` configuration keys without the prefix
(docs/SHARDING.md): max_live_parameters bounds the elements gathered at
once, reduce_bucket_size the elements of one gradient reduce-scatter.

Fetch, release, reduce_grads and clip_grads are collective over the
communicator: every rank makes the same calls with the same ids in the same
order. Views returned by :meth:`fetch`/:meth:`full` are valid until the
parameter is released (the memory is then reused: copy what must outlive
it); views from :meth:`shard` and :meth:`grad` stay valid as long as they
exist (they keep the set's memory alive, even past :meth:`close`).
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ._ffi import constants, ffi, lib
from .buffers import as_buffer, require_host
from .comm import Comm, _Call
from .dtypes import NUMPY_DTYPES, Datatype, DatatypeLike, resolve_datatype
from .errors import InvalidArgumentError, InvalidUsageError, check
from .request import Request, call_interruptibly

IdsLike = Union[int, Iterable[int]]

__all__ = ["ShardedParameters", "ShardLayout"]


class ShardLayout(NamedTuple):
    """Where this rank's shard of a parameter lies in the whole parameter."""
    count: int        # elements of the shard (padding of the last shards included)
    offset: int       # index of its first element in the flattened parameter
    persistent: bool  # kept whole on every rank (count = the parameter's size)


class _Param(NamedTuple):
    shape: Tuple[int, ...]
    dtype: np.dtype
    datatype: Datatype
    count: int


class _Owner:
    """The C set, freed when the last holder is gone: the ShardedParameters
    until close(), and every shard/grad view (so a view never outlives the
    memory under it). Holds the communicator, which must outlive the set."""

    __slots__ = ("handle", "comms", "_finalizer", "__weakref__")

    def __init__(self, handle: Any, *comms: Optional[Comm]) -> None:
        self.handle = handle
        self.comms = comms
        self._finalizer = weakref.finalize(self, lib.smd_sharded_destroy, handle)


def _id_array(ids: IdsLike) -> Tuple[List[int], Any]:
    """The ids as a list and as a C int32 array (NULL when empty)."""
    if isinstance(ids, (int, np.integer)):
        listed = [int(ids)]
    else:
        listed = [int(i) for i in ids]
    return listed, (ffi.new("int32_t[]", listed) if listed else ffi.NULL)


def _uint(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or value < 0 \
            or int(value) != value or value >= 2 ** 64:
        raise InvalidArgumentError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


class ShardedParameters:
    """A sharded parameter set over `comm` (default: smd's world).

    Collective to create (every rank passes the same knobs). Knobs, by
    SMP's names without ``sdp_``:

    - max_live_parameters: elements gathered at once, at most. Released
      parameters stay gathered (a later fetch costs nothing) until room is
      needed, the least recently released first; a fetch that cannot fit
      beside the parameters still held raises NoMemoryError.
    - param_persistence_threshold: parameters with fewer elements are kept
      whole on every rank (never fetched; gradients allreduced).
    - reduce_bucket_size: elements per gradient reduce-scatter.
    - hierarchical_allgather: gather within each node first when the
      communicator spans nodes.
    - prefetch_depth: parameters gathered ahead along the order of use the
      first step recorded.
    - average_gradients: gradients averaged over the ranks (else summed).
    - gradient_wire_dtype: "float16" or "bfloat16" to send float32
      gradients at half the bytes; None: as they are.
    - replica_comm: the communicator of the data-parallel replicas of this
      shard group (ranks holding the same shard), over which gradient
      shards are also averaged.
    """

    def __init__(self, comm: Optional[Comm] = None, max_live_parameters: int = int(1e9),
                 param_persistence_threshold: int = int(1e6),
                 reduce_bucket_size: int = int(5e8), hierarchical_allgather: bool = True,
                 prefetch_depth: int = 2, average_gradients: bool = True,
                 gradient_wire_dtype: DatatypeLike = None,
                 replica_comm: Optional[Comm] = None) -> None:
        if comm is None:
            from ._world import world
            comm = world()
        config = ffi.new("smd_sharded_config_t *")
        check(lib.smd_sharded_config_init(config))
        config.max_live_parameters = _uint("max_live_parameters", max_live_parameters)
        config.param_persistence_threshold = _uint("param_persistence_threshold",
                                                   param_persistence_threshold)
        config.reduce_bucket_size = _uint("reduce_bucket_size", reduce_bucket_size)
        config.hierarchical_allgather = 1 if hierarchical_allgather else 0
        if _uint("prefetch_depth", prefetch_depth) >= 2 ** 31:
            raise InvalidArgumentError(f"prefetch_depth {prefetch_depth} is too large")
        config.prefetch_depth = int(prefetch_depth)
        config.average_gradients = 1 if average_gradients else 0
        config.gradient_wire_dtype = -1 if gradient_wire_dtype is None else \
            int(resolve_datatype(gradient_wire_dtype))
        config.replica_comm = ffi.NULL if replica_comm is None else replica_comm._live()
        out = ffi.new("smd_sharded_t **")
        call_interruptibly(lib.smd_sharded_create, comm._live(), config, out,
                           on_interrupt=comm.abort,
                           on_abandoned=lambda: lib.smd_sharded_destroy(out[0]))
        self._owner: Optional[_Owner] = _Owner(out[0], comm, replica_comm)
        self._comm = comm
        self._params: List[_Param] = []

    # -- lifetime ------------------------------------------------------------

    def _live(self) -> Any:
        if self._owner is None:
            raise InvalidUsageError(f"{self!r} was closed")
        return self._owner.handle

    def close(self) -> None:
        """Done with the set (local). Its memory is freed once the shard
        and gradient views still referenced are gone too. Closing again
        does nothing."""
        self._owner = None

    def __enter__(self) -> "ShardedParameters":
        self._live()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "" if self._owner is not None else " closed"
        return f"<smd.ShardedParameters {len(self._params)} parameters over {self._comm!r}{state}>"

    @property
    def comm(self) -> Comm:
        """The shard group."""
        return self._comm

    def __len__(self) -> int:
        return len(self._params)

    # -- registration and layout --------------------------------------------

    def register(self, init: Any, *, dtype: DatatypeLike = None) -> int:
        """Add a parameter with the initial values `init` (an array of a
        floating type, the same on every rank; ``dtype="bfloat16"`` for
        bfloat16 bits in a uint16 array); returns its id (0, 1, ... in
        order). Local; only before the first fetch."""
        b = as_buffer(init, dtype=dtype, name="init")
        require_host(b)
        np_dtype = NUMPY_DTYPES.get(b.datatype)
        if np_dtype is None:
            raise InvalidArgumentError(f"{b.datatype.name.lower()} has no numpy dtype")
        out = ffi.new("int32_t *")
        check(lib.smd_sharded_register(self._live(), b.count, int(b.datatype),
                                       b.ptr if b.count else ffi.NULL, out))
        if out[0] != len(self._params):
            raise InvalidUsageError(f"register: the set gave id {out[0]}, expected "
                                    f"{len(self._params)} (was it used outside this object?)")
        self._params.append(_Param(tuple(b.shape), np_dtype, b.datatype, b.count))
        return out[0]

    def _param(self, pid: int) -> _Param:
        if isinstance(pid, bool) or not isinstance(pid, (int, np.integer)) \
                or not 0 <= pid < len(self._params):
            raise InvalidArgumentError(f"unknown parameter id {pid!r} (registered: "
                                       f"{len(self._params)})")
        return self._params[int(pid)]

    def shape(self, pid: int) -> Tuple[int, ...]:
        """The registered shape of parameter `pid`."""
        return self._param(pid).shape

    def _shard_of(self, pid: int) -> Tuple[Any, ShardLayout]:
        """smd_sharded_shard: the shard's address and layout."""
        self._param(pid)
        data, count, offset = ffi.new("void **"), ffi.new("size_t *"), ffi.new("size_t *")
        persistent = ffi.new("int *")
        check(lib.smd_sharded_shard(self._live(), int(pid), data, count, offset, persistent))
        return data[0], ShardLayout(count[0], offset[0], bool(persistent[0]))

    def layout(self, pid: int) -> ShardLayout:
        """Where this rank's shard of parameter `pid` lies."""
        return self._shard_of(pid)[1]

    def _view(self, ptr: Any, count: int, param: _Param, shaped: bool) -> np.ndarray:
        """A numpy view of `count` elements at `ptr` in the set's memory,
        which keeps the set alive while it exists."""
        if count == 0 or ptr == ffi.NULL:
            return np.empty(param.shape if shaped else (0,), param.dtype)
        owner = self._owner
        # The destructor closes over the owner: the view holds the buffer,
        # the buffer this cdata, the cdata the destructor, that the owner.
        keep = ffi.gc(ffi.cast("char *", ptr), lambda _cdata, _owner=owner: None)
        array = np.frombuffer(ffi.buffer(keep, count * param.dtype.itemsize), param.dtype, count)
        return array.reshape(param.shape) if shaped else array

    def shard(self, pid: int) -> np.ndarray:
        """This rank's shard of parameter `pid`, a writable view of the
        set's memory (what an optimizer updates): flat, or the whole
        parameter in its shape when it is persistent. Fetches see writes
        to it after the next reduce_grads (which ends the round: gathered
        copies are dropped); ``reduce_grads([], [])`` ends one by itself."""
        ptr, lay = self._shard_of(pid)
        return self._view(ptr, lay.count, self._params[int(pid)], lay.persistent)

    def grad(self, pid: int) -> np.ndarray:
        """The gradient shard of parameter `pid` (laid out as its shard),
        written by :meth:`reduce_grads`."""
        param = self._param(pid)
        data, count = ffi.new("void **"), ffi.new("size_t *")
        check(lib.smd_sharded_grad(self._live(), int(pid), data, count))
        return self._view(data[0], count[0], param, self.layout(pid).persistent)

    # -- after a shrink (docs/ELASTIC.md) -------------------------------------

    def rebuild(self, comm: Comm, old_to_new: Sequence[int],
                lost_shards: Mapping[int, Sequence[Any]], **knobs: Any) -> "ShardedParameters":
        """After ``self.comm.shrink()`` gave `comm` and `old_to_new`: a new
        set over `comm` with the same parameters, in the same order, holding
        their current values: the survivors' shards (gathered over `comm`;
        this set's communicator is not used) and, for each lost rank j of
        the old communicator, ``lost_shards[j][pid]``: that rank's
        ``shard(pid)`` from a checkpoint (persistent parameters are whole on
        every survivor and need none). `knobs` are the constructor's.
        Collective over `comm`; this set stays as it is (close it)."""
        old_size = len(old_to_new)
        lost = [j for j, n in enumerate(old_to_new) if n < 0]
        if sorted(lost_shards) != lost:
            raise InvalidArgumentError(f"lost_shards has ranks {sorted(lost_shards)}; the lost "
                                       f"ranks are {lost}")
        fulls = []
        for pid, param in enumerate(self._params):
            shard = self.shard(pid)
            if self.layout(pid).persistent:
                fulls.append(shard.copy())
                continue
            gathered = comm.allgather(shard, dtype=param.datatype)
            pieces = []
            for j in range(old_size):
                piece = gathered[old_to_new[j]] if old_to_new[j] >= 0 else \
                    np.asarray(lost_shards[j][pid]).reshape(-1).view(param.dtype)
                if piece.size != shard.size:
                    raise InvalidArgumentError(f"the checkpointed shard of rank {j} for parameter "
                                               f"{pid} has {piece.size} elements, not {shard.size}")
                pieces.append(piece)
            fulls.append(np.concatenate(pieces)[:param.count].reshape(param.shape))
        out = ShardedParameters(comm, **knobs)
        for param, values in zip(self._params, fulls):
            out.register(values, dtype=param.datatype)
        return out

    # -- gathering -----------------------------------------------------------

    def full(self, pid: int) -> np.ndarray:
        """The whole of fetched parameter `pid`, in its shape: valid until
        it is released (writes are lost at release)."""
        param = self._param(pid)
        data = ffi.new("void **")
        check(lib.smd_sharded_full(self._live(), int(pid), data))
        if param.count == 0 or data[0] == ffi.NULL:
            return np.empty(param.shape, param.dtype)
        return np.frombuffer(ffi.buffer(data[0], param.count * param.dtype.itemsize),
                             param.dtype, param.count).reshape(param.shape)

    def fetch(self, ids: IdsLike, *, async_: bool = False) -> Any:
        """Gather parameters `ids` (collective). Blocking: returns their
        whole arrays (:meth:`full` of each), valid until released. With
        ``async_=True``: returns a :class:`FetchRequest` whose ``wait()``
        returns them."""
        listed, array = _id_array(ids)
        for pid in listed:
            self._param(pid)
        handle = self._live()
        call = _Call(start=lib.smd_sharded_fetch,
                     blocking=lambda *args: lib.smd_sharded_fetch(*args, ffi.NULL),
                     args=(handle, array, len(listed), ffi.NULL), keep=(array,))
        if async_:
            return FetchRequest(self, listed, self._comm._start(call))
        self._comm._run(call)
        return [self.full(pid) for pid in listed]

    def gathered_count(self, pid: int) -> int:
        """Elements a buffer of :meth:`fetch_into` needs for parameter
        `pid`: its shard's count times the group size (the parameter's
        count, padded), or its count when persistent."""
        self._param(pid)
        out = ffi.new("size_t *")
        check(lib.smd_sharded_gathered_count(self._live(), int(pid), out))
        return int(out[0])

    def fetch_into(self, ids: IdsLike, outs: Sequence[Any], *,
                   async_: bool = False) -> Optional[Request]:
        """Gather parameters `ids` straight into the caller's writable
        host buffers ``outs[i]`` (flat, the parameter's dtype, at least
        :meth:`gathered_count` elements; the first ``count`` receive the
        parameter), using none of the set's memory: nothing to release,
        nothing cached (collective). With ``async_=True``: returns a
        Request; the buffers must stay untouched until it finishes."""
        listed, array = _id_array(ids)
        buffers = self._host_buffers("fetch_into", listed, outs, "buffer", writable=True)
        return self._fetch_into(listed, array, [b.datatype for b in buffers], [b.ptr for b in buffers],
                                [b.count for b in buffers], (tuple(b.obj for b in buffers),), async_)

    def fetch_into_addresses(self, ids: IdsLike, addresses: Sequence[int], counts: Sequence[int],
                             *, async_: bool = False) -> Optional[Request]:
        """:meth:`fetch_into` for raw host addresses (``tensor.data_ptr()``:
        no numpy view is made, so a torch storage stays resizable), each of
        `counts[i]` elements of the parameter's own dtype, kept alive and
        untouched by the caller until the call (or its Request) is done."""
        listed, array = _id_array(ids)
        addresses, counts = list(addresses), list(counts)
        if not len(addresses) == len(counts) == len(listed):
            raise InvalidArgumentError(f"fetch_into_addresses: {len(listed)} ids, {len(addresses)} "
                                       f"addresses and {len(counts)} counts")
        types = [self._param(pid).datatype for pid in listed]
        pointers = [ffi.cast("void *", int(a)) for a in addresses]
        return self._fetch_into(listed, array, types, pointers, [int(c) for c in counts], (), async_)

    def _fetch_into(self, listed: List[int], array: Any, datatypes: List[Datatype], ptrs: List[Any],
                    counts: List[int], owners: Tuple[Any, ...], async_: bool) -> Optional[Request]:
        n = len(listed)
        types = ffi.new("smd_datatype_t[]", [int(t) for t in datatypes]) if n else ffi.NULL
        pointers = ffi.new("void *[]", ptrs) if n else ffi.NULL
        capacities = ffi.new("size_t[]", counts) if n else ffi.NULL
        keep = (array, types, pointers, capacities, owners, tuple(ptrs))
        start = lib.smd_sharded_fetch_into
        call = _Call(start=start, blocking=lambda *args: start(*args, ffi.NULL),
                     args=(self._live(), array, n, types, pointers, capacities, ffi.NULL), keep=keep)
        if async_:
            return self._comm._start(call)
        self._comm._run(call)
        return None

    def release(self, ids: IdsLike) -> None:
        """Hand the whole arrays of `ids` back (their views become invalid)."""
        listed, array = _id_array(ids)
        check(lib.smd_sharded_release(self._live(), array, len(listed)))

    # -- gradients -----------------------------------------------------------

    def reduce_grads(self, ids: IdsLike, grads: Sequence[Any], *,
                     async_: bool = False) -> Optional[Request]:
        """Reduce-scatter the whole gradients ``grads[i]`` of parameters
        ``ids[i]`` into the gradient shards (:meth:`grad`), averaged over
        the ranks unless average_gradients=False, and end the round
        (collective). With ``async_=True``: returns a Request (the
        gradients must stay untouched until it finishes)."""
        return self._reduce(lib.smd_sharded_reduce_grads, ids, grads, async_)

    def reduce_grads_part(self, ids: IdsLike, grads: Sequence[Any], *,
                          async_: bool = False) -> Optional[Request]:
        """:meth:`reduce_grads` for a part of the parameters (a unit's, as
        its backward finishes) without ending the round; a later
        :meth:`reduce_grads` (``reduce_grads([], [])`` when nothing is
        left) ends it. Each gradient is reduced once per round."""
        return self._reduce(lib.smd_sharded_reduce_grads_part, ids, grads, async_)

    def _host_buffers(self, what: str, listed: List[int], objs: Sequence[Any], kind: str,
                      writable: bool) -> List[Any]:
        """One host buffer per parameter of `listed` (bfloat16 ones read as
        such)."""
        objs = list(objs)
        if len(objs) != len(listed):
            raise InvalidArgumentError(f"{what}: {len(listed)} ids but {len(objs)} {kind}s")
        buffers = []
        for pid, obj in zip(listed, objs):
            param = self._param(pid)
            b = as_buffer(obj, dtype=param.datatype if param.datatype is Datatype.BFLOAT16 else None,
                          writable=writable, name=f"{kind} of parameter {pid}")
            require_host(b)
            buffers.append(b)
        return buffers

    def _reduce(self, fn: Any, ids: IdsLike, grads: Sequence[Any], async_: bool) -> Optional[Request]:
        listed, array = _id_array(ids)
        buffers = self._host_buffers("reduce_grads", listed, grads, "gradient", writable=False)
        for pid, b in zip(listed, buffers):
            param = self._param(pid)
            if b.datatype != param.datatype or b.count != param.count:
                raise InvalidArgumentError(
                    f"the gradient of parameter {pid} holds {b.count} {b.datatype.name.lower()} "
                    f"elements; the parameter has {param.count} {param.datatype.name.lower()}")
        pointers = ffi.new("void *[]", [b.ptr for b in buffers]) if buffers else ffi.NULL
        keep = (array, pointers, tuple(b.obj for b in buffers), tuple(b.ptr for b in buffers))
        call = _Call(start=fn, blocking=lambda *args: fn(*args, ffi.NULL),
                     args=(self._live(), array, len(listed), pointers, ffi.NULL), keep=keep)
        if async_:
            return self._comm._start(call)
        self._comm._run(call)
        return None

    def clip_grads(self, max_norm: float = 0.0) -> float:
        """The global L2 norm of the gradients (collective); when max_norm
        > 0 and the norm is larger, every gradient shard is scaled down to
        it. Returns the norm before scaling."""
        norm = ffi.new("double *")
        call_interruptibly(lib.smd_sharded_clip_grads, self._live(), float(max_norm), norm,
                           on_interrupt=self._comm.abort)
        return float(norm[0])

    # -- statistics ------------------------------------------------------------

    def stats(self) -> Dict[str, Any]:
        """This rank's statistics (smd_sharded_get_stats): live and peak
        gathered elements and bytes, bytes fetched, fetches, prefetches,
        fetch stalls (fetches that waited for a gather), cache hits,
        evictions, the last gradient norm (-1 before any clip_grads)."""
        s = ffi.new("smd_sharded_stats_t *")
        s.struct_size = ffi.sizeof("smd_sharded_stats_t")
        s.version = constants["SMD_SHARDED_STATS_VERSION"]
        check(lib.smd_sharded_get_stats(self._live(), s))
        names = ("parameters", "persistent_elements", "owned_elements", "live_elements",
                 "peak_live_elements", "live_bytes", "peak_live_bytes", "bytes_fetched",
                 "fetches", "prefetches", "fetch_stalls", "cache_hits", "evictions")
        out: Dict[str, Any] = {name: int(getattr(s, name)) for name in names}
        out["last_grad_norm"] = float(s.last_grad_norm)
        return out


class FetchRequest:
    """A nonblocking fetch: ``wait()`` returns the whole arrays, as the
    blocking :meth:`ShardedParameters.fetch` does."""

    __slots__ = ("_set", "_ids", "_request")

    def __init__(self, sharded: ShardedParameters, ids: List[int], request: Request) -> None:
        self._set = sharded
        self._ids = ids
        self._request = request

    def __repr__(self) -> str:
        return f"<smd.sharded.FetchRequest of {self._ids}>"

    @property
    def done(self) -> bool:
        return self._request.done

    def test(self) -> bool:
        return self._request.test()

    def wait(self, timeout: Optional[float] = None) -> List[np.ndarray]:
        self._request.wait(timeout)
        return [self._set.full(pid) for pid in self._ids]
