"""smd.ShardedParameters: a numpy MLP trained with its parameters sharded
over the ranks equals the same MLP trained whole on every rank's data; the
set's views, statistics and errors."""

import numpy as np
import pytest

import smd

SIZES = [(12, 24), (24,), (24, 3), (3,)]  # W1, b1, W2, b2
STEPS, BATCH, LR = 6, 5, 0.1


def initial(dtype):
    rng = np.random.default_rng(42)
    return [rng.standard_normal(shape).astype(dtype) / 4 for shape in SIZES]


def batch(rank, step, dtype):
    rng = np.random.default_rng(1000 * step + rank)
    return (rng.standard_normal((BATCH, 12)).astype(dtype),
            rng.standard_normal((BATCH, 3)).astype(dtype))


def forward_backward(params, x, y):
    """Loss and gradients of mean squared error through tanh."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    diff = out - y
    loss = float((diff ** 2).mean())
    g_out = 2 * diff / diff.size
    g_h = (g_out @ w2.T) * (1 - h ** 2)
    return loss, [x.T @ g_h, g_h.sum(0), h.T @ g_out, g_out.sum(0)]


def reference(size, dtype):
    """Unsharded: every rank's data on one rank, gradients averaged."""
    params = initial(dtype)
    losses = []
    for step in range(STEPS):
        results = [forward_backward(params, *batch(r, step, dtype)) for r in range(size)]
        losses.append([loss for loss, _ in results])
        for i in range(len(params)):
            params[i] = params[i] - LR * sum(g[i] for _, g in results) / size
    return losses, params


def sharded(world, dtype, **knobs):
    with smd.ShardedParameters(world, **knobs) as sp:
        ids = [sp.register(p) for p in initial(dtype)]
        losses = []
        for step in range(STEPS):
            params = sp.fetch(ids)
            loss, grads = forward_backward(params, *batch(world.rank, step, dtype))
            sp.release(ids)
            sp.reduce_grads(ids, grads)
            for pid in ids:
                sp.shard(pid)[...] -= LR * sp.grad(pid)
            losses.append(world.allgather(np.array([loss])).ravel().tolist())
        final = [np.array(a) for a in sp.fetch(ids)]
        sp.release(ids)
        return losses, final, sp.stats()


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("threshold", [0, 25])
def test_mlp_equals_unsharded(world, dtype, tol, threshold):
    """threshold 0 shards everything; 25 keeps the biases whole."""
    losses, params, stats = sharded(world, dtype, param_persistence_threshold=threshold)
    ref_losses, ref_params = reference(world.size, dtype)
    np.testing.assert_allclose(losses, ref_losses, rtol=tol, atol=tol)
    for got, want in zip(params, ref_params):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    persistent = sum(int(np.prod(s)) for s in SIZES if int(np.prod(s)) < threshold)
    assert stats["parameters"] == len(SIZES)
    assert stats["persistent_elements"] == persistent
    assert stats["peak_live_elements"] <= sum(int(np.prod(s)) for s in SIZES) - persistent


def test_max_live_bound(world):
    """A bound of the largest parameter: fetching one at a time works, the
    peak never passes it; holding two that do not fit is NoMemoryError."""
    largest = 24 * 12
    with smd.ShardedParameters(world, max_live_parameters=largest,
                               param_persistence_threshold=0) as sp:
        ids = [sp.register(p) for p in initial(np.float32)]
        for _ in range(3):
            for pid in ids:
                (full,) = sp.fetch([pid])
                assert full.shape == sp.shape(pid)
                sp.release([pid])
        sp.fetch([0])
        with pytest.raises(smd.NoMemoryError):
            sp.fetch([2])  # 288 + 72 > 288 while 0 is held
        sp.release([0])
        stats = sp.stats()
        assert 0 < stats["peak_live_elements"] <= largest
        assert stats["fetches"] >= 3 * len(ids)


def test_layout_and_views(world):
    with smd.ShardedParameters(world, param_persistence_threshold=10) as sp:
        big = np.arange(30, dtype=np.float32)
        small = np.arange(4, dtype=np.float32).reshape(2, 2)
        b, s = sp.register(big), sp.register(small)
        lay = sp.layout(b)
        assert not lay.persistent
        assert lay.count == -(-30 // world.size)
        assert lay.offset == world.rank * lay.count
        want = np.zeros(lay.count, np.float32)
        real = big[lay.offset:lay.offset + lay.count]
        want[:real.size] = real
        np.testing.assert_array_equal(sp.shard(b), want)
        assert sp.layout(s).persistent
        np.testing.assert_array_equal(sp.shard(s), small)  # whole, in its shape
        shard = sp.shard(b)
        shard[...] = world.rank + 1  # the optimizer's in-place update ...
        (full,) = sp.fetch(b)
        for r in range(world.size):  # ... is what the next fetch gathers
            piece = full[r * lay.count:(r + 1) * lay.count]
            assert (piece == r + 1).all()
        sp.release(b)
        request = sp.fetch([b], async_=True)
        (full,) = request.wait()
        assert full.shape == (30,)
        sp.release([b])
    assert shard[0] == world.rank + 1  # a shard view keeps the memory alive


def test_clip_grads_is_the_global_norm(world):
    with smd.ShardedParameters(world, param_persistence_threshold=0) as sp:
        ids = [sp.register(p) for p in initial(np.float64)]
        rng = np.random.default_rng(5)  # the same gradients on every rank
        grads = [rng.standard_normal(s) for s in SIZES]
        sp.reduce_grads(ids, grads)
        norm = np.sqrt(sum((g ** 2).sum() for g in grads))
        assert sp.clip_grads(0.0) == pytest.approx(norm, rel=1e-12)  # measure only
        assert sp.clip_grads(norm / 2) == pytest.approx(norm, rel=1e-12)
        # Scaled by max_norm / (norm + 1e-6), as torch's clip_grad_norm_ does.
        assert sp.clip_grads(0.0) == pytest.approx(norm / 2, rel=1e-6)
        assert sp.stats()["last_grad_norm"] == pytest.approx(norm / 2, rel=1e-6)


def test_errors(world):
    with smd.ShardedParameters(world, param_persistence_threshold=0) as sp:
        w = sp.register(np.ones(8, np.float32))
        with pytest.raises(smd.InvalidArgumentError, match="unknown parameter id"):
            sp.fetch([7])
        with pytest.raises(smd.InvalidArgumentError, match="gradient of parameter"):
            sp.reduce_grads([w], [np.ones(9, np.float32)])
        with pytest.raises(smd.InvalidArgumentError):
            sp.reduce_grads([w], [np.ones(8, np.float64)])
        with pytest.raises(smd.InvalidArgumentError):
            sp.register(np.ones(3, np.int32))  # not a floating type
        with pytest.raises(smd.InvalidUsageError):
            sp.full(w)  # not fetched
        sp.fetch([w])
        sp.release([w])
        with pytest.raises(smd.InvalidUsageError):
            sp.release([w])  # released twice
        with pytest.raises(smd.InvalidUsageError):
            sp.register(np.ones(4, np.float32))  # after the first fetch
    with pytest.raises(smd.InvalidUsageError, match="closed"):
        sp.fetch([w])
    with pytest.raises(smd.InvalidArgumentError, match="non-negative"):
        smd.ShardedParameters(world, max_live_parameters=-1)


def expected_shard(sp, pid, whole):
    """This rank's piece of `whole` as the set lays it out (zero-padded)."""
    lay = sp.layout(pid)
    if lay.persistent:
        return whole
    piece = np.zeros(lay.count, whole.dtype)
    real = whole.ravel()[lay.offset:lay.offset + lay.count]
    piece[:real.size] = real
    return piece


def rank_grads(rank, dtype):
    rng = np.random.default_rng(77 + rank)
    return [rng.standard_normal(s).astype(dtype) for s in SIZES]


def test_gradient_wire_dtype(world):
    """bfloat16 on the wire: the averaged gradients within bfloat16's
    precision of the exact average."""
    with smd.ShardedParameters(world, param_persistence_threshold=0,
                               gradient_wire_dtype="bfloat16") as sp:
        ids = [sp.register(p) for p in initial(np.float32)]
        sp.reduce_grads(ids, rank_grads(world.rank, np.float32))
        exact = [sum(g[i] for g in (rank_grads(r, np.float64) for r in range(world.size)))
                 / world.size for i in range(len(SIZES))]
        for pid in ids:
            np.testing.assert_allclose(sp.grad(pid), expected_shard(sp, pid, exact[pid]),
                                       rtol=2e-2, atol=2e-2)


def test_replicas(world):
    """Shard groups of 2 ranks, replicated: gradient shards are the average
    over every rank."""
    if world.size != 4:
        pytest.skip("needs 4 ranks")
    with world.split(world.rank // 2, world.rank) as shards, \
            world.split(world.rank % 2, world.rank) as replicas, \
            smd.ShardedParameters(shards, param_persistence_threshold=25,
                                  replica_comm=replicas) as sp:
        ids = [sp.register(p) for p in initial(np.float64)]
        sp.reduce_grads(ids, rank_grads(world.rank, np.float64))
        for pid in ids:
            exact = sum(rank_grads(r, np.float64)[pid] for r in range(4)) / 4
            np.testing.assert_allclose(sp.grad(pid), expected_shard(sp, pid, exact), rtol=1e-12)


def test_reduce_grads_in_parts(world):
    """Gradients reduced in parts (nonblocking, then a reduce_grads of
    nothing that ends the round) equal one reduction; a second reduction
    of a gradient in the same round is refused."""
    with smd.ShardedParameters(world, param_persistence_threshold=25) as sp:
        ids = [sp.register(p) for p in initial(np.float64)]
        grads = rank_grads(world.rank, np.float64)
        parts = [sp.reduce_grads_part([3, 2], [grads[3], grads[2]], async_=True),
                 sp.reduce_grads_part([1, 0], [grads[1], grads[0]], async_=True)]
        with pytest.raises(smd.InvalidUsageError, match="already reduced in this round"):
            sp.reduce_grads_part([2], [grads[2]])
        sp.reduce_grads([], [])
        for request in parts:
            request.wait()
        for pid in ids:
            exact = sum(rank_grads(r, np.float64)[pid] for r in range(world.size)) / world.size
            np.testing.assert_allclose(sp.grad(pid), expected_shard(sp, pid, exact), rtol=1e-12)
        sp.reduce_grads_part([2], [grads[2]])  # a new round
        sp.reduce_grads([], [])


def test_fetch_into_the_callers_buffers(world):
    """fetch_into gathers into the caller's arrays (padding zeros past the
    count), from numpy arrays or raw addresses, blocking or not, with no
    memory of the set's; a too-small or wrongly typed buffer is refused."""
    with smd.ShardedParameters(world, param_persistence_threshold=10) as sp:
        big = np.arange(30, dtype=np.float32)
        small = np.arange(4, dtype=np.float64)
        b, s = sp.register(big), sp.register(small)
        need = sp.gathered_count(b)
        assert need == -(-30 // world.size) * world.size
        assert sp.gathered_count(s) == 4
        out_b, out_s = np.full(need, -1, np.float32), np.zeros(4, np.float64)
        sp.fetch_into([b, s], [out_b, out_s])
        np.testing.assert_array_equal(out_b[:30], big)
        assert (out_b[30:] == 0).all()
        np.testing.assert_array_equal(out_s, small)
        again = np.zeros(need, np.float32)
        sp.fetch_into([b], [again], async_=True).wait()
        np.testing.assert_array_equal(again[:30], big)
        raw = np.zeros(need, np.float32)
        sp.fetch_into_addresses([b], [raw.ctypes.data], [raw.size])
        np.testing.assert_array_equal(raw[:30], big)
        assert sp.stats()["peak_live_elements"] == 0
        # Every rank passes the same wrong buffer: each is told, alike.
        with pytest.raises(smd.InvalidArgumentError, match=f"needs {need}"):
            sp.fetch_into([b], [np.zeros(need - 1, np.float32)])
        with pytest.raises(smd.InvalidArgumentError, match="float64"):
            sp.fetch_into([b], [np.zeros(need, np.float64)])
        with pytest.raises(smd.InvalidArgumentError, match="1 ids but 2"):
            sp.fetch_into([b], [out_b, out_s])
        sp.fetch_into([b], [again])  # the communicator is still in use
