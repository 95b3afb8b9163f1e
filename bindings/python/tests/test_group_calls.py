"""Group calls: ``with smd.group():`` / ``comm.group()`` give the same results
as the calls one by one, fuse many small allreduces, nest, and report a
refused call at the block's exit."""

import numpy as np
import pytest

import smd


def test_grouped_equals_ungrouped(world):
    p, r = world.size, world.rank
    sizes = [1, 7, 100, 4096, 3, 65536]
    tensors = [np.arange(n, dtype=np.float32) + r for n in sizes]
    want = [world.allreduce(t.copy()) for t in tensors]  # in place: on copies
    gathered_want = world.allgather(np.full(5, r, np.int32))
    with smd.group():
        got = [world.allreduce(t) for t in tensors]
        req = world.iallgather(np.full(5, r, np.int32))
        inplace = tensors[2].copy()
        world.allreduce(inplace, out=inplace)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(req.wait(), gathered_want)
    np.testing.assert_array_equal(inplace, want[2])
    assert want[0][0] == sum(range(p))


def test_comm_group_and_nesting(world):
    a = np.ones(300, np.float32)
    b = np.ones(300, np.float32)  # its own buffer: allreduce works in place
    with world.group():
        with world.group():
            out = world.allreduce(a)
        req = world.iallreduce(b)
        assert not req.test()  # nothing runs before the outermost exit
    np.testing.assert_array_equal(out, np.full(300, world.size, np.float32))
    np.testing.assert_array_equal(req.wait(), np.full(300, world.size, np.float32))


def test_empty_group(world):
    with smd.group():
        pass


def test_refused_call_fails_the_group(world):
    a = np.ones(10, np.float32)
    out = np.zeros(10, np.float32)
    with pytest.raises(smd.InvalidArgumentError, match=r"call 2 \(smd_i?broadcast\)"):
        with smd.group():
            world.allreduce(a, out=out)
            with pytest.raises(smd.InvalidArgumentError):
                world.broadcast(a, root=world.size)  # no such rank
    assert out[0] == 0  # nothing of the group ran
    np.testing.assert_array_equal(world.allreduce(a), np.full(10, world.size, np.float32))
