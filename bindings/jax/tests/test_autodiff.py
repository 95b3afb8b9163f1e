"""jax.grad, jax.vjp and jax.vmap through smd.jax's collectives. A
collective's gradient is that of the sum of every rank's loss (the
data-parallel convention): its vector-Jacobian product is its transpose,
itself a collective, checked here against the values written out by hand."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import smd
import smd.jax as sj

JIT = [pytest.param(False, id="eager"), pytest.param(True, id="jit")]


def maybe_jit(f, jit):
    return jax.jit(f) if jit else f


def mine(world, shape=(4,)):
    """Each rank's input: 1..count scaled by rank + 1."""
    return jnp.arange(1, int(np.prod(shape)) + 1, dtype=jnp.float32).reshape(shape) * (world.rank + 1)


@pytest.mark.parametrize("jit", JIT)
def test_grad_of_allreduce_is_an_allreduce(world, jit):
    n = world.size
    w = jnp.arange(4, dtype=jnp.float32) + world.rank  # a weight that differs per rank
    g = maybe_jit(jax.grad(lambda x: jnp.sum(sj.allreduce(x) * w)), jit)(mine(world))
    # d/dx_r sum_s <allreduce(x), w_s> = sum_s w_s
    np.testing.assert_allclose(np.asarray(g), n * np.arange(4) + n * (n - 1) / 2)
    g = maybe_jit(jax.grad(lambda x: jnp.sum(sj.allreduce(x, op="avg") * w)), jit)(mine(world))
    np.testing.assert_allclose(np.asarray(g), np.arange(4) + (n - 1) / 2)


@pytest.mark.parametrize("jit", JIT)
def test_grad_of_allgather_is_a_reduce_scatter(world, jit):
    n = world.size
    x = mine(world, (2, 3))
    g = maybe_jit(jax.grad(lambda a: jnp.sum(sj.allgather(a) ** 2)), jit)(x)
    # Every rank's loss holds x_r squared: the sum over ranks gives 2 n x_r.
    np.testing.assert_allclose(np.asarray(g), 2 * n * np.asarray(x))


@pytest.mark.parametrize("jit", JIT)
def test_vjp_of_reduce_scatter_is_an_allgather(world, jit):
    n = world.size
    x = mine(world, (n, 3))
    y, pullback = jax.vjp(maybe_jit(sj.reduce_scatter, jit), x)
    assert y.shape == (3,)
    ct = jnp.full((3,), float(world.rank + 1), jnp.float32)
    (g,) = pullback(ct)
    # Block s of x_r reached rank s: its cotangent comes back from rank s.
    np.testing.assert_allclose(np.asarray(g), np.repeat(np.arange(1, n + 1)[:, None], 3, 1))
    (g,) = jax.vjp(lambda a: sj.reduce_scatter(a, op="avg"), x)[1](ct)
    np.testing.assert_allclose(np.asarray(g), np.repeat(np.arange(1, n + 1)[:, None], 3, 1) / n)


@pytest.mark.parametrize("jit", JIT)
def test_grad_of_broadcast_goes_to_the_root(world, jit):
    n, root = world.size, world.size - 1
    g = maybe_jit(jax.grad(lambda a: jnp.sum(sj.broadcast(a, root=root) * (world.rank + 1))),
                  jit)(mine(world))
    want = np.full(4, n * (n + 1) / 2) if world.rank == root else np.zeros(4)
    np.testing.assert_allclose(np.asarray(g), want)


@pytest.mark.parametrize("jit", JIT)
def test_vjp_of_alltoall_is_an_alltoall(world, jit):
    n = world.size
    x = mine(world, (n, 2))
    _, pullback = jax.vjp(maybe_jit(sj.alltoall, jit), x)
    ct = jnp.tile(jnp.arange(n, dtype=jnp.float32)[:, None], (1, 2)) + 10 * world.rank
    (g,) = pullback(ct)
    # Block j of x_r went to rank j as its block r: the cotangent rank j holds there.
    want = np.array([[r + 10 * j] * 2 for j, r in zip(range(n), [world.rank] * n)])
    np.testing.assert_allclose(np.asarray(g), want)


def test_training_step_under_jit_and_grad(world):
    """A jitted data-parallel step: the averaged gradient is the same on
    every rank and equals the gradient of the mean loss over all data."""
    n = world.size
    data = jnp.arange(8 * n, dtype=jnp.float32).reshape(n, 8) / 10

    @jax.jit
    def step(w, x):
        g = jax.grad(lambda w: jnp.mean((x * w - 1.0) ** 2))(w)
        return w - 0.1 * sj.allreduce(g, op="avg")

    w = step(jnp.float32(0.5), data[world.rank])
    want = 0.5 - 0.1 * jax.grad(lambda w: jnp.mean((data * w - 1.0) ** 2))(jnp.float32(0.5))
    np.testing.assert_allclose(float(w), float(want), rtol=1e-6)
    every = sj.allgather(w)
    assert np.all(np.asarray(every) == np.asarray(every)[0])


def test_nonlinear_reductions_refuse_differentiation(world):
    with pytest.raises(smd.InvalidUsageError, match="max is not differentiable"):
        jax.grad(lambda a: jnp.sum(sj.allreduce(a, op="max")))(mine(world))


def test_forward_mode_is_a_clear_error(world):
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(sj.allreduce, (mine(world),), (mine(world),))


@pytest.mark.parametrize("jit", JIT)
def test_vmap_batches_every_collective(world, jit):
    n, batch = world.size, 3
    xs = jnp.stack([mine(world, (n, 2)) + 100 * b for b in range(batch)])
    for fn in (sj.allreduce, sj.allgather, sj.reduce_scatter, sj.alltoall,
               lambda a: sj.broadcast(a, root=n - 1)):
        got = maybe_jit(jax.vmap(fn), jit)(xs)
        want = jnp.stack([fn(xs[b]) for b in range(batch)])
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # A batch along another axis.
    got = jax.vmap(sj.allgather, in_axes=1)(xs)
    want = jnp.stack([sj.allgather(xs[:, i]) for i in range(xs.shape[1])])
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
