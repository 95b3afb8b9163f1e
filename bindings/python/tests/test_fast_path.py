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
