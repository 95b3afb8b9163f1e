"""smd collectives inside JAX programs, ``jax.jit`` and ``jax.grad`` included.

::

    import jax, jax.numpy as jnp, smd, smd.jax

    smd.jax.initialize()                # rank and size from the launcher

    @jax.jit
    def step(grads):
        return smd.jax.allreduce(grads, op="avg")   # comm defaults to smd.world()

Each call is an XLA custom call into ``libsmd_jax.so`` (bindings/jax: XLA FFI
handlers built against the installed jaxlib's headers), which runs the smd
collective on the call's buffers: host buffers (the CPU backend)
host-synchronously; device buffers on the stream XLA gives the call (the
CUDA handlers have not run yet, docs/GPU.md). Every collective carries JAX's
ordered-effect token, so the collectives of a program run in program order
on every rank (which smd requires) and are never removed as dead code.

Functions: :func:`allreduce`, :func:`allgather` (result ``(size, *x.shape)``),
:func:`reduce_scatter` (``x.shape[1:]`` when ``x.shape[0] == size``, else a
flat ``x.size // size``), :func:`broadcast`, :func:`alltoall` (``x`` split
into ``size`` equal blocks along its flat order).

Differentiation (``jax.grad``, ``jax.vjp``): each collective's vector-Jacobian
product is its transpose, itself a collective: sum-allreduce is its own
transpose (avg too), allgather and sum-reduce_scatter are each other's,
alltoall is its own, broadcast's is a sum to the root. Reductions by max,
min and prod raise :class:`~smd.InvalidUsageError` when differentiated.
``jax.vmap`` batches every collective (one collective for the whole batch).

Errors: a handler that fails (a mismatch between ranks, a dead peer, a
timeout) makes JAX raise on that rank, with smd's message (the call, the
code, the rank and peer); smd reports a disagreement on every rank.

Ordered effects (tokens threaded through the program) have no public JAX
API: this uses the internals JAX's own ordered callbacks use
(``jax._src.effects``, the lowering context's tokens).
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from pathlib import Path
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _ffi
from ._world import init, world
from .dtypes import Datatype, Op, datatype_of, resolve_op
from .errors import InvalidArgumentError, InvalidUsageError

KINDS = ("allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall")
LIBRARY_NAME = "libsmd_jax.so"
_PLATFORMS = {"cpu": "cpu", "CUDA": "cuda"}  # jax's platform name -> the handler suffix


class Plan(NamedTuple):
    """One collective as a custom call: its FFI target, result shape and
    dtype, and the handler's attributes."""
    target: str
    shape: Tuple[int, ...]
    dtype: np.dtype
    attrs: Tuple[Tuple[str, int], ...]


def comm_address(comm: Any) -> int:
    """The smd_comm_t address the handlers receive (the communicator must
    live as long as compiled programs that use it run)."""
    return int(_ffi.ffi.cast("uintptr_t", comm._live()))


def plan(kind: str, shape: Tuple[int, ...], dtype: Any, size: int, comm: int, *,
         op: Any = "sum", root: int = 0) -> Plan:
    """The custom call for collective `kind` on an array of `shape` and
    `dtype` over a communicator of `size` ranks at address `comm`."""
    if kind not in KINDS:
        raise InvalidArgumentError(f"smd.jax: no collective {kind!r} (one of {', '.join(KINDS)})")
    shape = tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    datatype: Datatype = datatype_of(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    attrs = [("comm", comm), ("datatype", int(datatype))]
    out = shape
    if kind == "allreduce":
        attrs.append(("op", int(resolve_op(op))))
    elif kind == "reduce_scatter":
        attrs.append(("op", int(resolve_op(op))))
        if shape and shape[0] == size:
            out = shape[1:]
        elif count % size == 0:
            out = (count // size,)
        else:
            raise InvalidArgumentError(f"smd.jax.reduce_scatter: {count} elements are not "
                                       f"{size} equal blocks")
    elif kind == "allgather":
        out = (size, *shape)
    elif kind == "broadcast":
        if not 0 <= root < size:
            raise InvalidArgumentError(f"smd.jax.broadcast: root {root} is not a rank of "
                                       f"{size}")
        attrs.append(("root", int(root)))
    elif kind == "alltoall" and count % size:
        raise InvalidArgumentError(f"smd.jax.alltoall: {count} elements are not {size} "
                                   "equal blocks")
    return Plan(f"smd_{kind}", out, dtype, tuple(attrs))


def initialize(coordinator_address: Optional[str] = None, num_processes: Optional[int] = None,
               process_id: Optional[int] = None, **options: Any) -> Any:
    """Form smd's world with ``jax.distributed.initialize``'s arguments
    (``"host:port"``, the number of processes, this process's index); with
    none, from the launcher's environment (smdrun, torchrun, ...), as
    :func:`smd.init`. Returns the world."""
    if coordinator_address is not None:
        host, sep, port = coordinator_address.rpartition(":")
        if not sep or not port.isdigit():
            raise InvalidArgumentError(f"smd.jax.initialize: coordinator_address "
                                       f"{coordinator_address!r} is not host:port")
        options.setdefault("addr", host)
        options.setdefault("port", int(port))
    if num_processes is not None:
        options.setdefault("size", int(num_processes))
    if process_id is not None:
        options.setdefault("rank", int(process_id))
    return init(**options)


# ---- the handler library ------------------------------------------------------

_lock = threading.Lock()
_registered: Optional[str] = None


def library_candidates() -> list:
    """Where libsmd_jax.so is looked for: ``$SMD_JAX_LIBRARY`` (no fallback
    when set), the source tree's build directory, then next to the package
    (meson install and the wheel put it there)."""
    if os.environ.get("SMD_JAX_LIBRARY"):
        return [Path(os.environ["SMD_JAX_LIBRARY"])]
    found = []
    if _ffi._in_source_tree():
        found.append(_ffi.SOURCE_ROOT / "build" / "bindings" / "jax" / LIBRARY_NAME)
    found.append(_ffi.PACKAGE_DIR / LIBRARY_NAME)
    return [p for p in found if p.is_file()]


def load_library(path: Optional[str] = None) -> str:
    """Register the handlers of libsmd_jax.so with JAX (once per process;
    the collectives do it on first use). Returns the library's path."""
    global _registered
    import jax

    with _lock:
        if _registered is not None:
            return _registered
        paths = [Path(path)] if path else library_candidates()
        if not paths:
            raise InvalidUsageError(f"smd.jax: {LIBRARY_NAME} not found (build smd with jaxlib "
                                    "installed: meson -Djax=enabled; or pass its path to "
                                    "smd.jax.load_library)")
        _ffi.lib  # libsmd first, so that the handlers bind to the library smd uses
        library = ctypes.CDLL(str(paths[0]))
        for kind in KINDS:
            for platform, suffix in _PLATFORMS.items():
                handler = getattr(library, f"smd_jax_{kind}_{suffix}")
                jax.ffi.register_ffi_target(f"smd_{kind}", jax.ffi.pycapsule(handler),
                                            platform=platform)
        _registered = str(paths[0])
        return _registered


# ---- the primitive: one custom call with JAX's ordered-effect token ------------

class _Params(NamedTuple):
    """What a collective is besides its operand: hashable, so it is a
    primitive parameter."""
    kind: str
    size: int
    rank: int
    comm: int
    op: int
    root: int

    def plan_for(self, shape: Tuple[int, ...], dtype: Any) -> Plan:
        return plan(self.kind, shape, dtype, self.size, self.comm, op=self.op, root=self.root)


_primitive: Any = None


def _make_primitive() -> Any:
    from jax._src import core, dispatch, effects
    from jax._src.interpreters import batching, mlir
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo

    class SmdEffect(effects.Effect):
        def __str__(self) -> str:
            return "smd"

    effect = SmdEffect()
    for allowed in (effects.ordered_effects, effects.lowerable_effects,
                    effects.control_flow_allowed_effects,
                    effects.custom_derivatives_allowed_effects, effects.remat_allowed_effects):
        allowed.add_type(SmdEffect)

    p = core.Primitive("smd_collective")
    p.def_impl(lambda x, **params: dispatch.apply_primitive(p, x, **params))

    def abstract(x, *, params: _Params):
        spec = params.plan_for(x.shape, x.dtype)
        return core.ShapedArray(spec.shape, spec.dtype), {effect}

    p.def_effectful_abstract_eval(abstract)

    def lowering(ctx, x, *, params: _Params):
        spec = params.plan_for(ctx.avals_in[0].shape, ctx.avals_in[0].dtype)
        token = ctx.tokens_in.get(effect)
        out_type = mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0])
        i64, i32 = ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(32)
        config = {name: ir.IntegerAttr.get(i64 if name == "comm" else i32, value)
                  for name, value in spec.attrs}
        row_major = lambda ndim: tuple(reversed(range(ndim)))  # noqa: E731 (XLA's minor-to-major)
        # allreduce and broadcast run in place (smd: the same pointer for
        # both): the result may take x's buffer, which XLA copies first
        # only where x is still needed.
        in_place = {1: 1} if params.kind in ("allreduce", "broadcast") else None
        call = mlir.custom_call(spec.target, result_types=[hlo.TokenType.get(), out_type],
                                operands=[token, x], backend_config=config,
                                has_side_effect=True, api_version=4,
                                operand_output_aliases=in_place,
                                operand_layouts=[(), row_major(ctx.avals_in[0].ndim)],
                                result_layouts=[(), row_major(ctx.avals_out[0].ndim)])
        ctx.set_tokens_out(mlir.TokenSet({effect: call.results[0]}))
        return [call.results[1]]

    mlir.register_lowering(p, lowering)
    batching.primitive_batchers[p] = _batch_rule
    return p


def _bind(x: Any, params: _Params) -> Any:
    global _primitive
    load_library()
    with _lock:
        if _primitive is None:
            _primitive = _make_primitive()
    return _primitive.bind(x, params=params)


def _batch_rule(args, dims, *, params: _Params):
    """vmap: one collective over the whole batch. Elementwise collectives
    take the batch as it is; the blocked ones (allgather, reduce_scatter,
    alltoall) move the batch inside each rank's block."""
    import jax.numpy as jnp

    (x,), (bdim,) = args, dims
    x = jnp.moveaxis(x, bdim, 0) if isinstance(bdim, int) else x[None]  # never unmapped: vmap binds a batched x
    batch, item = x.shape[0], x.shape[1:]
    n, kind = params.size, params.kind
    if kind in ("allreduce", "broadcast"):
        return _bind(x, params), 0
    if kind == "allgather":
        return _bind(x, params), 1  # (size, batch, *item)
    # reduce_scatter, alltoall: each item is `size` blocks; blocks first, then the batch.
    out_item = params.plan_for(item, x.dtype).shape
    blocks = jnp.moveaxis(x.reshape(batch, n, -1), 1, 0)   # (size, batch, block)
    y = _bind(blocks, params)
    if kind == "reduce_scatter":
        return y.reshape((batch, *out_item)), 0           # y: (batch, block)
    return jnp.moveaxis(y, 0, 1).reshape((batch, *out_item)), 0


# ---- differentiable collectives ------------------------------------------------

_LINEAR_OPS = (int(Op.SUM), int(Op.AVG))


@functools.lru_cache(maxsize=None)
def _collective(params: _Params, shape: Tuple[int, ...], dtype: str) -> Any:
    """The collective of `params` on arrays of `shape` and `dtype` as a
    jax function with its VJP."""
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def run(x):
        return _bind(x, params)

    def forward(x):
        return _bind(x, params), None

    def backward(_, ct):
        if params.kind in ("allreduce", "reduce_scatter") and params.op not in _LINEAR_OPS:
            raise InvalidUsageError(f"smd.jax.{params.kind} with op {Op(params.op).name.lower()} "
                                    "is not differentiable (sum and avg are)")
        ct = ct.astype(dtype)
        if params.kind == "allreduce":
            grad = _apply(params, ct)
        elif params.kind == "allgather":
            grad = _apply(params._replace(kind="reduce_scatter", op=int(Op.SUM)), ct)
        elif params.kind == "reduce_scatter":
            grad = _apply(params._replace(kind="allgather"), ct)
            if params.op == int(Op.AVG):
                grad = grad / jnp.asarray(params.size, grad.dtype)
        elif params.kind == "broadcast":
            total = _apply(params._replace(kind="allreduce", op=int(Op.SUM)), ct)
            grad = total if params.rank == params.root else jnp.zeros_like(total)
        else:
            grad = _apply(params, ct)  # alltoall is its own transpose
        return (grad.reshape(shape),)

    run.defvjp(forward, backward)
    return run


def _apply(params: _Params, x: Any) -> Any:
    params.plan_for(x.shape, x.dtype)  # bad input raises here, before tracing
    return _collective(params, tuple(x.shape), str(x.dtype))(x)


def _run(kind: str, x: Any, comm: Any, *, op: Any = "sum", root: int = 0) -> Any:
    import jax.numpy as jnp

    comm = world() if comm is None else comm
    x = jnp.asarray(x)
    params = _Params(kind, comm.size, comm.rank, comm_address(comm), int(resolve_op(op)),
                     int(root))
    return _apply(params, x)


def allreduce(x: Any, op: Any = "sum", *, comm: Any = None) -> Any:
    """Elementwise `op` (sum, prod, min, max, avg) of `x` over the ranks."""
    return _run("allreduce", x, comm, op=op)


def allgather(x: Any, *, comm: Any = None) -> Any:
    """Every rank's `x`, stacked: shape ``(size, *x.shape)``."""
    return _run("allgather", x, comm)


def reduce_scatter(x: Any, op: Any = "sum", *, comm: Any = None) -> Any:
    """Block `rank` of the elementwise `op` of `x` over the ranks."""
    return _run("reduce_scatter", x, comm, op=op)


def broadcast(x: Any, root: int = 0, *, comm: Any = None) -> Any:
    """`root`'s `x` on every rank."""
    return _run("broadcast", x, comm, root=root)


def alltoall(x: Any, *, comm: Any = None) -> Any:
    """Block j of `x` (``size`` equal blocks in flat order) to rank j;
    block i of the result from rank i."""
    return _run("alltoall", x, comm)
