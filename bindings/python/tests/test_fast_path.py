"""smd._fastcall (smd/_fast.py): where the build made it, the blocking
allreduce and barrier go through it; its results and errors are those of
the cffi/ctypes path."""

import os

import numpy as np
import pytest

import smd
from smd import _fast

BUILT = os.environ.get("SMD_PY_FASTCALL", "") not in ("", "0")


def test_fast_path_runs_where_built(world):
    if BUILT:
        assert world._fast is not None and world._fast is _fast.get()
    elif "SMD_PY_FASTCALL" in os.environ:
        assert world._fast is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_fast_allreduce_results(world, dtype, op):
    x = (np.arange(7) % 3 + world.rank).astype(dtype)
    every = np.stack([(np.arange(7) % 3 + r).astype(dtype) for r in range(world.size)])
    want = {"sum": every.sum(0, dtype=dtype), "max": every.max(0), "min": every.min(0)}[op]
    got = world.allreduce(x, op)
    assert got is x
    assert np.array_equal(x, want)


def test_fast_allreduce_error_raises(pair):
    """A code the C call returns becomes the package's exception: ranks
    that disagree on the count all get MismatchError."""
    c = pair.dup()
    with pytest.raises(smd.MismatchError):
        c.allreduce(np.ones(3 + pair.rank, np.float32))
    c.destroy()


def test_fast_barrier_after_destroy_refuses(world):
    c = world.dup()
    c.barrier()
    c.destroy()
    with pytest.raises(smd.Error):
        c.barrier()


def test_fast_allreduce_queued_in_a_group(world):
    """Inside a group the call queues and returns; the array (kept alive by
    the group even when the caller drops it) holds the sum once it ends."""
    kept = []
    with smd.group():
        for k in range(5):
            kept.append(world.allreduce(np.full(4, float(k))))
            world.allreduce(np.full(3, 1.0))  # dropped at once: the group holds it
    for k, a in enumerate(kept):
        assert np.array_equal(a, np.full(4, float(k * world.size)))


@pytest.mark.skipif(not BUILT, reason="smd._fastcall was not built")
def test_fast_barrier_asks_python_where_c_cannot_tell(world, monkeypatch):
    """The compiled barrier answers smd._interrupt.blocking_ok() in C: on
    the main thread it calls the C function under Python's default SIGINT
    handler (the pipe armed) or SIGINT ignored, and returns None (not
    called) under a handler of the program's, where the wait in slices
    runs, which lets that handler run during the call."""
    import signal
    import threading

    from conftest import sigint_after
    from smd import _interrupt

    fast, address = world._fast, world._address
    with sigint_after(60):  # Python's default handler
        world.barrier()  # arms the pipe
        assert _interrupt.armed[0] == 1
        assert fast.barrier(address, True) == 0
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert fast.barrier(address, True) == 0
    finally:
        signal.signal(signal.SIGINT, previous)

    def own_handler(signum, frame):
        pass

    previous = signal.signal(signal.SIGINT, own_handler)
    sliced = []
    real = smd.comm.run_to_completion
    monkeypatch.setattr(smd.comm, "run_to_completion",
                        lambda *a: sliced.append(1) or real(*a))
    try:
        assert fast.barrier(address, True) is None
        assert fast.barrier(address, False) == 0  # not interruptible: always the C function
        world.barrier()
        assert sliced == [1]
        # Another thread: Python raises KeyboardInterrupt in the main thread only.
        results = []
        other = threading.Thread(target=lambda: results.append(fast.barrier(address, True)))
        other.start()
        other.join()
        assert results == [0]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_barrier_lets_other_threads_run(pair):
    """A rank waiting in a barrier holds no GIL: rank 1 enters the barrier
    only once a message from another thread of rank 0 arrived, which that
    thread sends while rank 0's main thread waits in the barrier (a barrier
    that kept the GIL would wait for it until SMD_TIMEOUT)."""
    import threading

    world = pair
    c, messages = world.dup(), world.dup()
    if world.rank == 0:
        go = threading.Event()

        def send_when_told():
            go.wait()
            messages.send(np.full(1, 7.0), dest=1, tag=5)

        sender = threading.Thread(target=send_when_told)
        sender.start()
        go.set()
        c.barrier()
        sender.join()
    elif world.rank == 1:
        got = np.zeros(1)
        messages.recv(got, source=0, tag=5)
        assert got[0] == 7.0
        c.barrier()
    else:
        c.barrier()
    messages.destroy()
    c.destroy()
