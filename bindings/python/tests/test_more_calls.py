"""gather, scatter, sendrecv, waitall/waitany, and mpi4py's object calls
(comm.objects: pickle)."""

import numpy as np
import pytest

import smd


@pytest.mark.parametrize("root", ["first", "last"])
def test_gather(world, root):
    p, r = world.size, world.rank
    root = 0 if root == "first" else p - 1
    got = world.gather(np.full((2, 3), r, np.int32), root)
    if r == root:
        assert got.shape == (p, 2, 3)
        for s in range(p):
            np.testing.assert_array_equal(got[s], np.full((2, 3), s, np.int32))
    else:
        assert got is None
    out = np.empty((p, 4)) if r == root else None
    got = world.gather(np.full(4, r + 0.5), root, out=out)
    if r == root:
        assert got is out
        np.testing.assert_array_equal(out[:, 0], np.arange(p) + 0.5)


def test_gather_bfloat16_bits(world):
    bits = smd.to_bfloat16(np.full(3, world.rank, np.float32))
    got = world.gather(bits, 0, dtype="bfloat16")
    if world.rank == 0:
        assert got.dtype == np.uint16
        np.testing.assert_array_equal(smd.from_bfloat16(got)[:, 0], np.arange(world.size))


@pytest.mark.parametrize("root", ["first", "last"])
def test_scatter(world, root):
    p, r = world.size, world.rank
    root = 0 if root == "first" else p - 1
    data = np.arange(p * 3, dtype=np.float32).reshape(p, 3) if r == root else None
    got = world.scatter(data, root, out=np.empty(3, np.float32))
    np.testing.assert_array_equal(got, np.arange(3, dtype=np.float32) + 3 * r)
    # Without out=, every rank passes a buf shaped like the root's.
    template = np.full((p, 2), -1, np.int64) if r != root else np.arange(2 * p).reshape(p, 2)
    got = world.scatter(template, root)
    assert got.shape == (2,)
    np.testing.assert_array_equal(got, [2 * r, 2 * r + 1])
    with pytest.raises(smd.InvalidArgumentError, match="out="):
        world.scatter(None, root)


def test_scatter_torch(world):
    torch = pytest.importorskip("torch")
    p = world.size
    src = torch.arange(p * 2, dtype=torch.float64).reshape(p, 2)
    got = world.scatter(src, 0)
    assert isinstance(got, torch.Tensor)
    assert got.tolist() == [2.0 * world.rank, 2.0 * world.rank + 1]


def test_sendrecv_ring(world):
    p, r = world.size, world.rank
    got = np.empty(4, np.int64)
    n = world.sendrecv(np.full(4, r, np.int64), (r + 1) % p, got, (r - 1) % p, sendtag=7)
    assert n == 4
    np.testing.assert_array_equal(got, np.full(4, (r - 1) % p))


def test_waitall_and_waitany(world):
    p, r = world.size, world.rank
    bufs = [np.empty(2) for _ in range(p)]
    receives = [world.irecv(bufs[s], s, tag=11) for s in range(p)]
    sends = [world.isend(np.full(2, float(r)), d, tag=11) for d in range(p)]
    pending = list(receives)
    seen = set()
    while pending:
        i, count = smd.waitany(pending)
        assert count == 2
        seen.add(receives.index(pending.pop(i)))
    assert seen == set(range(p))
    assert smd.waitall(sends) == [None] * p  # what a send's wait() returns
    for s in range(p):
        np.testing.assert_array_equal(bufs[s], np.full(2, float(s)))
    results = smd.waitall([world.iallreduce(np.ones(3)), world.ibarrier()])
    np.testing.assert_array_equal(results[0], np.full(3, float(p)))
    assert results[1] is None
    with pytest.raises(smd.InvalidArgumentError):
        smd.waitany([])


class Point:
    def __init__(self, x):
        self.x = x

    def __add__(self, other):
        return Point(self.x + other.x)


def test_object_collectives(world):
    p, r = world.size, world.rank
    o = world.objects
    assert o.bcast({"step": 5, "name": "x" * 1000} if r == 0 else None) == {"step": 5,
                                                                          "name": "x" * 1000}
    assert o.allgather(("rank", r, [0] * r)) == [("rank", s, [0] * s) for s in range(p)]
    got = o.gather({r: str(r)}, root=p - 1)
    assert got == ([{s: str(s)} for s in range(p)] if r == p - 1 else None)
    assert o.scatter([f"for {s}" * (s + 1) for s in range(p)] if r == 0 else None) == \
        f"for {r}" * (r + 1)
    assert o.alltoall([(r, d) for d in range(p)]) == [(s, r) for s in range(p)]
    assert o.allreduce(r + 1) == p * (p + 1) // 2
    assert o.allreduce([r], op=lambda a, b: a + b) == list(range(p))
    assert o.allreduce(Point(r)).x == sum(range(p))
    assert o.allreduce(r, op="max") == p - 1
    assert o.reduce(r, "min", root=0) == (0 if r == 0 else None)
    with pytest.raises(smd.InvalidArgumentError, match="unknown Python reduction"):
        o.allreduce(1, op="mean")


def test_object_send_recv(world):
    p, r = world.size, world.rank
    o = world.objects
    o.send({"from": r, "data": list(range(r + 3))}, (r + 1) % p, tag=5)
    o.send("second", (r + 1) % p, tag=5)
    src = (r - 1) % p
    assert o.recv(src, tag=5) == {"from": src, "data": list(range(src + 3))}
    assert o.recv(src, tag=5) == "second"
