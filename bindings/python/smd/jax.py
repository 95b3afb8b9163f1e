"""smd collectives inside JAX programs, ``jax.jit`` included.

::

    import jax, jax.numpy as jnp, smd, smd.jax

    world = smd.init()                  # rank and size from the launcher

    @jax.jit
    def step(grads):
        return smd.jax.allreduce(grads, op="avg")   # comm defaults to smd.world()

Each call is an XLA custom call into ``libsmd_jax.so`` (bindings/jax: XLA FFI
handlers built against the installed jaxlib's headers), which runs the smd
collective on the call's buffers: device buffers on the stream XLA gives the
call, host buffers (the CPU backend) host-synchronously. Every collective
carries JAX's ordered-effect token, so the collectives of a program run in
program order on every rank (which smd requires) and are never removed as
dead code.

Functions: :func:`allreduce`, :func:`allgather` (result ``(size, *x.shape)``),
:func:`reduce_scatter` (``x.shape[1:]`` when ``x.shape[0] == size``, else a
flat ``x.size // size``), :func:`broadcast`, :func:`alltoall` (``x`` split
into ``size`` equal blocks along its flat order). They are not
differentiable (no JVP rule). :func:`plan` is the shape and attribute logic
alone, usable without jax.

Status: written against JAX's documented FFI (``jax.ffi``) and, for ordered
effects, JAX internals (``jax._src.effects``, the lowering context's
tokens), which have no public API; none of it has run yet (docs/GPU.md says
what to run on a GPU machine).
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional, Tuple

import numpy as np

from . import _ffi
from .dtypes import Datatype, datatype_of, resolve_op
from .errors import InvalidArgumentError, InvalidUsageError

KINDS = ("allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall")
LIBRARY_NAME = "libsmd_jax.so"
_PLATFORMS = {"CUDA": "cuda", "cpu": "cpu"}  # jax's platform name -> the handler suffix


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


# ---- the handler library ------------------------------------------------------

_lock = threading.Lock()
_registered: Optional[str] = None


def library_candidates() -> list:
    """Where libsmd_jax.so is looked for: the source tree's build
    directory, then next to the package (meson install puts it there)."""
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
        library = ctypes.CDLL(str(paths[0]))
        for kind in KINDS:
            for platform, suffix in _PLATFORMS.items():
                handler = getattr(library, f"smd_jax_{kind}_{suffix}")
                jax.ffi.register_ffi_target(f"smd_{kind}", jax.ffi.pycapsule(handler),
                                            platform=platform)
        _registered = str(paths[0])
        return _registered


# ---- the primitive: one custom call with JAX's ordered-effect token ------------

_primitive: Any = None
#: Tests replace the custom call with a host function: fake(kind, x, plan) -> array.
_fake_handler: Optional[Callable[[str, np.ndarray, Plan], np.ndarray]] = None


def _make_primitive() -> Any:
    """The ``smd_collective`` primitive. Ordered effects (tokens threaded
    through the program) have no public JAX API: this uses the internals
    JAX's own ordered callbacks use."""
    from jax._src import core, dispatch, effects
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo

    class SmdEffect(effects.Effect):
        def __str__(self) -> str:
            return "smd"

    effect = SmdEffect()
    effects.ordered_effects.add_type(SmdEffect)
    effects.lowerable_effects.add_type(SmdEffect)
    effects.control_flow_allowed_effects.add_type(SmdEffect)

    p = core.Primitive("smd_collective")
    p.def_impl(lambda x, **params: dispatch.apply_primitive(p, x, **params))

    def abstract(x, *, plan: Plan):
        return core.ShapedArray(plan.shape, plan.dtype), {effect}

    p.def_effectful_abstract_eval(abstract)

    def lowering(ctx, x, *, plan: Plan):
        token = ctx.tokens_in.get(effect)
        out_type = mlir.aval_to_ir_type(ctx.avals_out[0])
        i64, i32 = ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(32)
        config = {name: ir.IntegerAttr.get(i64 if name == "comm" else i32, value)
                  for name, value in plan.attrs}
        call = mlir.custom_call(plan.target, result_types=[hlo.TokenType.get(), out_type],
                                operands=[token, x], backend_config=config,
                                has_side_effect=True, api_version=4)
        ctx.set_tokens_out(mlir.TokenSet({effect: call.results[0]}))
        return [call.results[1]]

    mlir.register_lowering(p, lowering)
    return p


def _run(kind: str, x: Any, comm: Any, **kw: Any) -> Any:
    global _primitive
    import jax
    import jax.numpy as jnp
    from jax.experimental import io_callback

    from ._world import world

    comm = world() if comm is None else comm
    x = jnp.asarray(x)
    spec = plan(kind, x.shape, x.dtype, comm.size, comm_address(comm), **kw)
    fake = _fake_handler
    if fake is not None:
        result = jax.ShapeDtypeStruct(spec.shape, spec.dtype)
        return io_callback(lambda a: fake(kind, np.asarray(a), spec), result,
                                            x, ordered=True)
    load_library()
    with _lock:
        if _primitive is None:
            _primitive = _make_primitive()
    return _primitive.bind(x, plan=spec)


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
