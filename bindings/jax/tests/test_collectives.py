"""smd.jax's five collectives through the XLA FFI handlers on the CPU
backend, eagerly and inside jax.jit, for every dtype JAX and smd share,
checked against the values numpy computes from what each rank holds."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import smd
import smd.jax as sj

DTYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16,
          ml_dtypes.bfloat16, np.float32, np.float64]
JIT = [pytest.param(False, id="eager"), pytest.param(True, id="jit")]


def values(rank, shape, dtype):
    """Small integers exact in every dtype, different on every rank."""
    count = int(np.prod(shape))
    return ((np.arange(count) % 7) + rank + 1).reshape(shape).astype(dtype)


def expected(world, dtype):
    """Each collective's inputs on this rank and the results numpy gives."""
    n, rank, root = world.size, world.rank, world.size - 1
    wide = lambda arrays: [a.astype(np.float64) for a in arrays]  # noqa: E731
    square = [values(r, (3, 5), dtype) for r in range(n)]
    blocks = [values(r, (n, 4), dtype) for r in range(n)]
    flat = [values(r, (2 * n,), dtype) for r in range(n)]
    gather = [values(r, (2, 3), dtype) for r in range(n)]
    line = [values(r, (5,), dtype) for r in range(n)]
    swap = [values(r, (n, 3), dtype) for r in range(n)]
    inputs = (square[rank], blocks[rank], flat[rank], gather[rank], line[rank], swap[rank])
    want = {
        "allreduce sum": np.sum(wide(square), axis=0).astype(dtype),
        "allreduce max": np.max(square, axis=0),
        "reduce_scatter sum": np.sum(wide(blocks), axis=0).astype(dtype)[rank],
        "reduce_scatter min (flat)": np.min(flat, axis=0)[2 * rank:2 * rank + 2],
        "allgather": np.stack(gather),
        "broadcast": line[root],
        "alltoall": np.stack([swap[src][rank] for src in range(n)]),
    }
    return inputs, want


def every_collective(square, blocks, flat, gather, line, swap, root):
    return {
        "allreduce sum": sj.allreduce(square),
        "allreduce max": sj.allreduce(square, op="max"),
        "reduce_scatter sum": sj.reduce_scatter(blocks),
        "reduce_scatter min (flat)": sj.reduce_scatter(flat, op="min"),
        "allgather": sj.allgather(gather),
        "broadcast": sj.broadcast(line, root=root),
        "alltoall": sj.alltoall(swap),
    }


@pytest.mark.parametrize("jit", JIT)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_collective_every_dtype(world, dtype, jit):
    """The five collectives (seven calls) in one program per dtype: one
    compilation each, not one per collective."""
    inputs, want = expected(world, dtype)
    f = lambda *a: every_collective(*a, root=world.size - 1)  # noqa: E731
    got = (jax.jit(f) if jit else f)(*[jnp.asarray(a) for a in inputs])
    for name, value in want.items():
        assert got[name].dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(np.asarray(got[name]), value, err_msg=name)


def test_average_and_empty(world):
    x = jnp.full((4,), float(world.rank), jnp.float32)
    got = jax.jit(lambda a: sj.allreduce(a, op="avg"))(x)
    np.testing.assert_allclose(np.asarray(got), np.full(4, (world.size - 1) / 2))
    empty = sj.allreduce(jnp.zeros((0,), jnp.float32))
    assert empty.shape == (0,)


def test_many_collectives_in_one_program(world):
    """Independent collectives in one jitted program, several times over:
    each rank runs them in program order (a reordering on one rank is a
    mismatch on every rank)."""
    n = world.size

    @jax.jit
    def step(a, b):
        s = sj.allreduce(a)
        g = sj.allgather(b)
        r = sj.reduce_scatter(jnp.ones((n, 3), jnp.float32))
        t = sj.alltoall(jnp.arange(n, dtype=jnp.int32) + 10 * world.rank)
        c = sj.broadcast(b + world.rank, root=0)
        return s, g, r, t, c

    for i in range(5):
        s, g, r, t, c = step(jnp.full(7, i, jnp.float64), jnp.arange(2, dtype=jnp.int64))
        np.testing.assert_array_equal(np.asarray(s), np.full(7, i * n))
        assert g.shape == (n, 2)
        np.testing.assert_array_equal(np.asarray(r), np.full(3, n))
        np.testing.assert_array_equal(np.asarray(t), world.rank + 10 * np.arange(n))
        np.testing.assert_array_equal(np.asarray(c), np.arange(2))


def test_tokens_chain_the_custom_calls(world):
    """The lowered program threads one token through every collective, the
    order jax gives them, so XLA cannot reorder them."""
    def f(a, b):
        return sj.allreduce(a), sj.allreduce(b), sj.allgather(a)

    text = jax.jit(f).lower(jnp.ones(3), jnp.ones(4)).as_text()
    calls = [line for line in text.splitlines() if "stablehlo.custom_call @smd_" in line]
    assert len(calls) == 3, text
    for earlier, later in zip(calls, calls[1:]):
        token_out = earlier.split("=")[0].strip().split(":")[0]
        assert f"({token_out}#0" in later.replace(" ", "") or f"{token_out}#0" in later, text


def test_a_communicator_other_than_the_world(world):
    sub = world.split(world.rank % 2, key=world.rank)
    try:
        got = jax.jit(lambda a: sj.allreduce(a, comm=sub))(jnp.ones(3, jnp.int32))
        np.testing.assert_array_equal(np.asarray(got), np.full(3, sub.size))
    finally:
        sub.destroy()


def test_bad_input_is_refused_before_tracing(world):
    with pytest.raises(smd.InvalidArgumentError, match="no smd datatype"):
        sj.allreduce(jnp.ones(3, jnp.complex64))
    with pytest.raises(smd.InvalidArgumentError, match="root"):
        sj.broadcast(jnp.ones(3), root=world.size)
    if world.size > 1:
        with pytest.raises(smd.InvalidArgumentError, match="equal blocks"):
            sj.alltoall(jnp.ones(world.size + 1))


def test_allreduce_runs_in_place_with_no_copy_per_round(world):
    """XLA's compiled program: the allreduce's result takes its operand's
    buffer, so a fori_loop of allreduces copies nothing per round (only the
    caller's argument, once, on entry), and a donated argument is not
    copied at all; the results stay right (docs/PERFORMANCE.md, JAX)."""
    x = jnp.arange(1024, dtype=jnp.float32)

    def loop(a):
        return jax.lax.fori_loop(0, 3, lambda i, y: sj.allreduce(y), a)

    def copies(text):
        return [line for line in text.splitlines() if " copy(" in line and "f32[1024]" in line]

    looped = jax.jit(loop).lower(x).compile().as_text()
    assert "output_to_operand_aliasing" in looped, looped
    assert len(copies(looped)) == 1, copies(looped)  # the entry's copy of the argument
    donated = jax.jit(sj.allreduce, donate_argnums=0).lower(x).compile().as_text()
    assert copies(donated) == [], copies(donated)

    n = world.size
    np.testing.assert_array_equal(np.asarray(jax.jit(loop)(x)), np.arange(1024) * n ** 3)
    got = jax.jit(sj.allreduce, donate_argnums=0)(jnp.arange(1024, dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(got), np.arange(1024) * n)
