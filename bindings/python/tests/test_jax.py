"""smd.jax: the plan of each collective (shapes, attributes) without jax,
and, where jax is importable, the wrapper inside jax.jit with a fake
handler (a host function running the same collective through smd) in place
of the XLA FFI library. The handlers themselves run on the GPU machine
(docs/GPU.md)."""

import numpy as np
import pytest

import smd
import smd.jax as sj

SUM, AVG = int(smd.Op.SUM), int(smd.Op.AVG)
F32 = int(smd.Datatype.FLOAT32)


def test_plans():
    p = sj.plan("allreduce", (2, 3), np.float32, 4, 0x10, op="avg")
    assert p == sj.Plan("smd_allreduce", (2, 3), np.dtype(np.float32),
                        (("comm", 0x10), ("datatype", F32), ("op", AVG)))
    assert sj.plan("allgather", (3,), np.int64, 4, 1).shape == (4, 3)
    assert sj.plan("reduce_scatter", (4, 5), np.float32, 4, 1).shape == (5,)
    assert sj.plan("reduce_scatter", (2, 6), np.float32, 4, 1).shape == (3,)
    b = sj.plan("broadcast", (7,), np.float64, 2, 1, root=1)
    assert b.attrs[-1] == ("root", 1) and b.shape == (7,)
    assert sj.plan("alltoall", (8,), np.uint8, 4, 1).shape == (8,)


def test_plans_refuse_what_cannot_run():
    with pytest.raises(smd.InvalidArgumentError, match="equal blocks"):
        sj.plan("reduce_scatter", (5,), np.float32, 4, 1)
    with pytest.raises(smd.InvalidArgumentError, match="equal blocks"):
        sj.plan("alltoall", (5,), np.float32, 2, 1)
    with pytest.raises(smd.InvalidArgumentError, match="root 2"):
        sj.plan("broadcast", (5,), np.float32, 2, 1, root=2)
    with pytest.raises(smd.InvalidArgumentError, match="no collective"):
        sj.plan("gather", (5,), np.float32, 2, 1)
    with pytest.raises(smd.InvalidArgumentError):
        sj.plan("allreduce", (5,), np.complex64, 2, 1)


def test_comm_address_is_the_handle(world):
    assert sj.comm_address(world) != 0
    assert sj.comm_address(world) == sj.comm_address(world)


@pytest.fixture
def jax_with_fake_handler(world):
    jax = pytest.importorskip("jax", reason="jax is not importable here: smd.jax inside "
                              "jax.jit is checked where it is (docs/GPU.md)")
    calls = []

    def fake(kind, x, spec):
        calls.append((kind, spec))
        comm = world
        if kind == "allreduce":
            op = smd.Op(dict(spec.attrs)["op"]).name.lower()
            return comm.allreduce(x.copy(), op=op)
        if kind == "allgather":
            return comm.allgather(x)
        if kind == "reduce_scatter":
            op = smd.Op(dict(spec.attrs)["op"]).name.lower()
            return comm.reduce_scatter(x.reshape(-1), op=op).reshape(spec.shape)
        if kind == "broadcast":
            return comm.broadcast(x.copy(), root=dict(spec.attrs)["root"])
        return comm.alltoall(x.reshape(comm.size, -1)).reshape(spec.shape)

    sj._fake_handler = fake
    try:
        yield jax, calls
    finally:
        sj._fake_handler = None


def test_collectives_inside_jit(world, jax_with_fake_handler):
    jax, calls = jax_with_fake_handler
    jnp = jax.numpy
    n = world.size

    @jax.jit
    def step(x):
        a = sj.allreduce(x, op="sum")
        g = sj.allgather(x)
        r = sj.reduce_scatter(jnp.ones((n, 2), jnp.float32))
        b = sj.broadcast(x + world.rank, root=0)
        t = sj.alltoall(jnp.arange(n, dtype=jnp.float32) + 10 * world.rank)
        return a, g, r, b, t

    a, g, r, b, t = step(jnp.ones(2, jnp.float32))
    np.testing.assert_array_equal(np.asarray(a), np.full(2, n))
    assert np.asarray(g).shape == (n, 2)
    np.testing.assert_array_equal(np.asarray(r), np.full(2, n))
    np.testing.assert_array_equal(np.asarray(b), np.ones(2))
    np.testing.assert_array_equal(np.asarray(t), world.rank + 10 * np.arange(n))
    # In program order, with the plans the handlers would get.
    assert [kind for kind, _ in calls] == list(sj.KINDS[:2]) + ["reduce_scatter", "broadcast",
                                                                "alltoall"]
    assert all(dict(spec.attrs)["comm"] == sj.comm_address(world) for _, spec in calls)
