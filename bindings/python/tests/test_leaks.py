"""Creating and destroying many communicators and requests leaves no file
descriptors, mappings or Python memory behind; requests that nobody waits
for are freed when garbage-collected."""

import gc
import os
import tracemalloc
import weakref

import numpy as np


def census():
    """Open file descriptors and memory mappings of this process."""
    with open("/proc/self/maps") as f:
        maps = sum(1 for _ in f)
    return len(os.listdir("/proc/self/fd")), maps


def churn(world, rounds):
    x = np.ones(64, np.float32)
    for i in range(rounds):
        c = world.dup()
        c.allreduce(x)
        if i % 2:
            c.destroy()
        else:
            del c  # destroyed when collected
        sub = world.split(world.rank % 2)
        sub.iallreduce(x).wait()
        with sub:
            pass
    for _ in range(rounds * 10):
        world.iallreduce(x).wait()
        world.iallgather(x)  # dropped unfinished: freed (after finishing) when collected
    gc.collect()


def test_no_leaks(world):
    churn(world, 10)  # warm up: connections, caches, malloc arenas, thread stacks
    fds, maps = census()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    churn(world, 20)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, grown
    fds_after, maps_after = census()
    assert fds_after <= fds, (fds, fds_after)
    assert maps_after <= maps + 4, (maps, maps_after)
    world.barrier()


def test_requests_freed_when_collected(world):
    x = np.ones(16, np.float64)
    refs = []
    for _ in range(50):
        req = world.iallreduce(x)
        refs.append(weakref.ref(req))
        del req
    gc.collect()
    assert all(r() is None for r in refs)
    assert len(world._pending) == 0
    world.barrier()


def test_finished_request_holds_no_buffers(world):
    x = np.ones(8)
    req = world.iallreduce(x, out=np.empty(8))
    ref = weakref.ref(x)
    del x
    assert ref() is not None  # in use: the request keeps it
    result = req.wait()
    gc.collect()
    assert ref() is None  # finished: released
    np.testing.assert_array_equal(result, np.full(8, world.size, np.float64))
