"""Point-to-point: send/recv in a ring, nonblocking forms, counts, tags,
truncation."""

import numpy as np
import pytest

import smd
from values import DATATYPES, dtype_arg, make


@pytest.mark.parametrize("dtype", DATATYPES)
def test_ring(world, dtype):
    """Every rank sends to the next and receives from the previous
    (nonblocking, so a one-rank ring sends to itself)."""
    p, r = world.size, world.rank
    kw = {"dtype": dtype_arg(dtype)}
    mine = make(dtype, r, 11)
    got = np.empty_like(mine)
    recv = world.irecv(got, (r - 1) % p, tag=7, **kw)
    send = world.isend(mine, (r + 1) % p, tag=7, **kw)
    assert recv.wait() == 11
    assert recv.count == 11
    assert send.wait() is None
    np.testing.assert_array_equal(got, make(dtype, (r - 1) % p, 11))


def test_blocking_pairs(pair):
    world = pair
    r = world.rank
    if r < 2:
        peer = 1 - r
        data = np.arange(1000, dtype=np.float64) * (r + 1)
        got = np.zeros(1000)
        if r == 0:
            world.send(data, peer, tag=1)
            assert world.recv(got, peer, tag=2) == 1000
        else:
            assert world.recv(got, peer, tag=1) == 1000
            world.send(data, peer, tag=2)
        np.testing.assert_array_equal(got, np.arange(1000, dtype=np.float64) * (peer + 1))
    world.barrier()


def test_shorter_message_and_order(world):
    """A receive takes fewer elements than its buffer; messages with one
    tag arrive in the order sent."""
    p, r = world.size, world.rank
    to, frm = (r + 1) % p, (r - 1) % p
    sends = [world.isend(np.full(k, k, np.int32), to, tag=3) for k in (1, 2, 3)]
    for k in (1, 2, 3):
        buf = np.full(8, -1, np.int32)
        assert world.recv(buf, frm, tag=3) == k
        np.testing.assert_array_equal(buf[:k], np.full(k, k, np.int32))
        assert (buf[k:] == -1).all()
    for s in sends:
        s.wait()


def test_truncation(world):
    p, r = world.size, world.rank
    send = world.isend(np.ones(10, np.float32), (r + 1) % p, tag=9)
    with pytest.raises(smd.TruncatedError) as info:
        world.recv(np.empty(4, np.float32), (r - 1) % p, tag=9)
    assert info.value.code == smd.Result.ERR_TRUNCATED
    try:
        send.wait()
    except smd.Error:
        pass  # the sender may or may not learn of it


def test_bytes_objects(world):
    """Any buffer-protocol object: bytes to send, bytearray to receive."""
    p, r = world.size, world.rank
    got = bytearray(5)
    recv = world.irecv(got, (r - 1) % p, tag=4)
    world.isend(b"hello", (r + 1) % p, tag=4).wait()
    assert recv.wait() == 5
    assert bytes(got) == b"hello"


def test_tags(world):
    with pytest.raises(smd.InvalidArgumentError, match="tag"):
        world.isend(np.ones(1), world.rank, tag=smd.TAG_MAX + 1)
    with pytest.raises(smd.InvalidArgumentError, match="peer"):
        world.isend(np.ones(1), world.size, tag=0)
    # The largest tag works.
    got = np.zeros(1)
    recv = world.irecv(got, world.rank, tag=smd.TAG_MAX)
    world.send(np.ones(1), world.rank, tag=smd.TAG_MAX)
    assert recv.wait() == 1 and got[0] == 1
