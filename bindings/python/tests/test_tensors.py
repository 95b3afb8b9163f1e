"""torch CPU tensors through the plain binding: the result goes into the
caller's tensor where it replaces the input, out= may be a tensor, new
results are tensors for tensor inputs, bfloat16 works, and a tensor that
requires grad gets a clear smd.Error."""

import numpy as np
import pytest

import smd

torch = pytest.importorskip("torch")


def test_in_place_collectives(world):
    p, r = world.size, world.rank
    t = torch.full((2, 3), float(r + 1))
    assert world.allreduce(t) is t
    assert torch.equal(t, torch.full((2, 3), float(p * (p + 1) // 2)))

    b = torch.full((4,), float(r))
    assert world.broadcast(b, root=p - 1) is b
    assert torch.equal(b, torch.full((4,), float(p - 1)))

    x = torch.full((3,), float(r + 1))
    got = world.reduce(x, "max", root=0)
    if r == 0:
        assert got is x and torch.equal(x, torch.full((3,), float(p)))
    else:
        assert got is None and torch.equal(x, torch.full((3,), float(r + 1)))

    assert world.iallreduce(t, "min").wait() is t


def test_new_results_are_tensors(world):
    p, r = world.size, world.rank
    rows = world.allgather(torch.full((2,), float(r)))
    assert isinstance(rows, torch.Tensor) and rows.shape == (p, 2)
    assert torch.equal(rows[:, 0], torch.arange(p, dtype=torch.float32))
    block = world.reduce_scatter(torch.ones(p, 3, dtype=torch.int64))
    assert isinstance(block, torch.Tensor) and block.dtype == torch.int64
    assert torch.equal(block, torch.full((3,), p, dtype=torch.int64))
    swapped = world.alltoall(torch.arange(p, dtype=torch.int32) + 10 * r)
    assert isinstance(swapped, torch.Tensor)
    assert torch.equal(swapped, torch.arange(p, dtype=torch.int32) * 10 + r)
    # numpy in, numpy out.
    assert isinstance(world.allgather(np.ones(2)), np.ndarray)


def test_tensor_outputs(world):
    p = world.size
    out = torch.empty(p, 3)
    assert world.allgather(np.ones(3, np.float32), out=out) is out
    assert torch.equal(out, torch.ones(p, 3))
    out = torch.empty(3, dtype=torch.float64)
    src = torch.ones(3, dtype=torch.float64)
    assert world.allreduce(src, out=out) is out
    assert torch.equal(out, torch.full((3,), float(p), dtype=torch.float64))
    assert torch.equal(src, torch.ones(3, dtype=torch.float64))  # left alone


def test_bfloat16_tensors(world):
    t = torch.full((5,), 1.5, dtype=torch.bfloat16)
    assert world.allreduce(t) is t
    assert t.dtype == torch.bfloat16
    assert torch.equal(t, torch.full((5,), 1.5 * world.size, dtype=torch.bfloat16))
    rows = world.allgather(torch.ones(2, dtype=torch.bfloat16))
    assert rows.dtype == torch.bfloat16 and rows.shape == (world.size, 2)


def test_requires_grad_is_a_clear_error(world):
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(smd.InvalidArgumentError, match="requires grad.*detach"):
        world.allreduce(w)
    with pytest.raises(smd.InvalidArgumentError, match="requires grad"):
        world.allgather(torch.ones(3), out=torch.empty(world.size, 3, requires_grad=True))
    # Read, it is fine: the result goes elsewhere.
    out = world.allreduce(w, out=torch.empty(3))
    assert torch.equal(out, torch.full((3,), float(world.size)))
    with torch.no_grad():
        assert world.allreduce(w.detach()) is not None
