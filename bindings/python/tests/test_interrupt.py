"""Ctrl-C (SIGINT) interrupts every kind of blocking call within a second,
and leaves nothing running."""

import time

import numpy as np
import pytest

import smd
from conftest import free_port, sigint_after

DELAY = 0.3  # when the SIGINT comes
PROMPT = 1.0  # how soon after it KeyboardInterrupt must be raised


def test_sigint_interrupts_collective(pair):
    """Rank 0 blocks in a collective the others never join."""
    world = pair
    c = world.dup()
    if world.rank == 0:
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt), sigint_after(DELAY):
            c.allreduce(np.ones(1024, np.float32))
        assert time.monotonic() - start < DELAY + PROMPT
        # The half-done collective aborted the communicator.
        with pytest.raises(smd.AbortedError):
            c.barrier()
        c.destroy()
        world.barrier()
    else:
        world.barrier()  # rank 0 comes once interrupted
        with pytest.raises(smd.AbortedError):  # rank 0 told us
            c.barrier()
        c.destroy()


def test_sigint_interrupts_receive(world):
    """Every rank blocks receiving a message nobody sends, on a
    communicator of its own (so aborts do not cross)."""
    alone = world.split(world.rank)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt), sigint_after(DELAY):
        alone.recv(np.empty(4), source=0, tag=11)
    assert time.monotonic() - start < DELAY + PROMPT
    alone.destroy()
    world.barrier()


def test_sigint_in_request_wait_keeps_request(world):
    """KeyboardInterrupt in Request.wait() leaves the request usable."""
    alone = world.split(world.rank)
    got = np.zeros(2)
    req = alone.irecv(got, source=0, tag=12)
    with pytest.raises(KeyboardInterrupt), sigint_after(DELAY):
        req.wait()
    assert not req.done
    alone.send(np.full(2, 5.0), 0, tag=12)
    assert req.wait(timeout=30) == 2
    np.testing.assert_array_equal(got, [5.0, 5.0])
    alone.destroy()


def test_sigint_interrupts_init(world):
    """Forming a world that one rank never joins: Ctrl-C returns at once."""
    port = free_port()  # a world of its own for each rank
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt), sigint_after(DELAY):
        # Rank 1 of 2 never comes (rank 0 serves the store and waits for it).
        smd.init(rank=0, size=2, addr="127.0.0.1", port=port, token=f"pytest-int-{port}",
                 timeout=3.0)
    assert time.monotonic() - start < DELAY + PROMPT
    world.barrier()



def test_sigint_interrupts_communicator_creation(pair):
    """Rank 0 alone calls dup() (collective): Ctrl-C aborts the parent,
    which ends the call."""
    world = pair
    c = world.dup()
    if world.rank == 0:
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt), sigint_after(DELAY):
            c.dup()
        assert time.monotonic() - start < DELAY + PROMPT
    world.barrier()
    c.destroy()


def test_sigint_between_calls_leaves_next_wait_alone(pair):
    """A Ctrl-C handled while no call waits must not interrupt a later
    call's wait (its byte on the wakeup pipe is spent)."""
    world = pair
    c = world.dup()
    if world.rank == 0:
        with pytest.raises(KeyboardInterrupt), sigint_after(0.1):
            c.barrier()  # with rank 1
            time.sleep(5)  # interrupted here, in Python
        with sigint_after(60):  # Python's handler; this SIGINT never comes
            c.barrier()  # waits ~0.3 s for rank 1: long past spinning
    else:
        c.barrier()
        time.sleep(0.4)
        c.barrier()
    c.barrier()
    c.destroy()


def test_blocking_calls_run_the_c_function(world, monkeypatch):
    """The default (interruptible) blocking call is the library's blocking
    function where SIGINT has Python's handler: no wait in slices."""
    sliced = []
    monkeypatch.setattr(smd.comm, "run_to_completion", lambda *a: sliced.append(a))
    with sigint_after(60):
        world.allreduce(np.ones(2))
        world.barrier()
    assert world.interruptible and sliced == []


def test_interrupt_fd_refuses_a_negative_fd():
    """smd_set_interrupt_fd takes an fd or -1 (off), nothing below."""
    from smd._ffi import lib

    assert lib.smd_set_interrupt_fd(-2) == smd.Result.ERR_INVALID_ARGUMENT
