"""Errors the library reports: the exception classes, their codes and
messages; timeouts, mismatches."""

import builtins
import re
import time

import numpy as np
import pytest

import smd
from conftest import free_port, shared_free_port


def test_library_invalid_argument(world):
    with pytest.raises(smd.InvalidArgumentError) as info:
        world.broadcast(np.ones(2), root=world.size)
    e = info.value
    assert e.code == smd.Result.ERR_INVALID_ARGUMENT
    assert "root" in e.message and str(world.size) in e.message
    # The library names the call: its blocking form, or the nonblocking one
    # where the binding waits in slices (see Comm's interruptible).
    assert re.search(r"\bsmd_i?broadcast\b", str(e))


def test_error_classes():
    assert issubclass(smd.TimeoutError, builtins.TimeoutError)
    assert issubclass(smd.TimeoutError, smd.Error)
    assert issubclass(smd.InvalidArgumentError, ValueError)
    e = smd.errors.error_for(int(smd.Result.ERR_PEER_FAILURE), "rank 3 died")
    assert type(e) is smd.PeerFailureError and e.message == "rank 3 died"
    assert e.code is smd.Result.ERR_PEER_FAILURE
    # Every error code has its class.
    for code in smd.Result:
        if code.name.startswith("ERR_"):
            assert type(smd.errors.error_for(code, "x")) is not smd.Error, code
    # A code from a newer library still gives an smd.Error.
    assert type(smd.errors.error_for(99, "new")) is smd.Error


@pytest.fixture
def short_world(world):
    """A second world over the same ranks with a 1 s deadline (explicit
    init: rank, size, address, port and token given)."""
    port = shared_free_port(world)
    w = smd.init(rank=world.rank, size=world.size, addr="127.0.0.1", port=port,
                 token=f"pytest-short-{port}", timeout=1.0)
    assert (w.rank, w.size) == (world.rank, world.size)
    assert smd.world() is world  # the first world stays the default
    yield w
    w.destroy()
    world.barrier()


def test_timeout_in_receive(short_world):
    w = short_world
    start = time.monotonic()
    with pytest.raises(smd.TimeoutError) as info:
        w.recv(np.empty(1), source=w.rank, tag=1)  # nobody sends
    elapsed = time.monotonic() - start
    assert 0.8 < elapsed < 10
    assert info.value.code == smd.Result.ERR_TIMEOUT
    assert isinstance(info.value, builtins.TimeoutError)


def test_timeout_in_collective(short_world, pair):
    w = short_world
    if w.rank == 0:  # the others never join
        start = time.monotonic()
        with pytest.raises(smd.TimeoutError) as info:
            w.allreduce(np.ones(4))
        assert 0.8 < time.monotonic() - start < 10
        assert "1" in info.value.message  # names a rank it waited for
        # The communicator is poisoned: later collectives fail at once.
        with pytest.raises(smd.Error):
            w.barrier()


def test_mismatch(pair):
    world = pair
    with world.dup() as c:
        n = 4 if c.rank == 0 else 5
        with pytest.raises(smd.MismatchError) as info:
            c.allreduce(np.ones(n, np.float32))
        assert info.value.code == smd.Result.ERR_MISMATCH
        with pytest.raises(smd.Error):  # poisoned
            c.allreduce(np.ones(4, np.float32))
    world.barrier()


def test_mismatched_groups(pair):
    world = pair
    tp = 2 if world.rank == 0 else 1   # 2 divides every even size; sizes here are 2 and 4
    if world.size % 2:
        pytest.skip("needs an even world")
    with pytest.raises(smd.MismatchError):
        world.groups(tp=tp)
    world.barrier()


def test_bootstrap_errors(world):
    """A world that cannot form: the store is not there (BootstrapError
    within the deadline), or the options make no sense."""
    port = free_port()  # nothing listens there
    start = time.monotonic()
    with pytest.raises(smd.BootstrapError, match=str(port)):
        smd.init(rank=1, size=2, addr="127.0.0.1", port=port, token="nobody", timeout=0.5)
    assert time.monotonic() - start < 10
    with pytest.raises(smd.InvalidArgumentError, match="rank 3"):
        smd.init(rank=3, size=2)
    with pytest.raises(smd.InvalidArgumentError, match="timeout"):
        smd.init(timeout=0)
    world.barrier()
