"""Async Work objects: wait, is_completed, exception, result, Futures,
their profiling titles and the group's sequence numbers."""

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import smd.torch
from reference import values


def exception_of(work):
    """work.exception(); torch 1.13's binding of it cannot return its
    std::exception_ptr to Python for any backend (gloo alike): None is
    assumed there when the Work succeeded."""
    try:
        return work.exception()
    except TypeError:
        assert torch.__version__ < "2", "Work.exception() should work on torch 2"
        return None if work.is_success() else "an exception"


def test_async_all_reduce(world, rank, size):
    t = torch.ones(1000)
    work = dist.all_reduce(t, async_op=True)
    assert work.wait()
    assert work.is_completed() and work.is_success()
    assert exception_of(work) is None
    assert torch.equal(t, torch.full((1000,), float(size)))
    assert torch.equal(work.result()[0], t)


def test_many_in_flight(world, rank, size):
    """Twenty operations started before any is waited for complete in
    order, each with its own result."""
    tensors = [torch.full((257,), float(i + rank)) for i in range(20)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    for i, (t, w) in enumerate(zip(tensors, works)):
        w.wait()
        assert torch.equal(t, torch.full((257,), float(i * size + size * (size - 1) // 2)))


def test_future_value_and_then(world, rank, size):
    t = torch.ones(8)
    fut = dist.all_reduce(t, async_op=True).get_future()
    doubled = fut.then(lambda f: f.value()[0] * 2)
    assert torch.equal(doubled.wait(), torch.full((8,), 2.0 * size))
    assert torch.equal(fut.value()[0], t)


def test_wait_with_timeout_on_pending_recv(world, pair, rank):
    """A receive nobody has sent yet: wait(timeout) gives up with smd's
    TimeoutError (also a RuntimeError) and the operation goes on; the send
    that comes later completes it."""
    if rank == 0:
        t = torch.zeros(3)
        work = dist.irecv(t, 1, tag=5)
        with pytest.raises(smd.torch.errors.TimeoutError, match="ran out"):
            work.wait(timeout=timedelta(milliseconds=200))
        assert not work.is_completed()
        dist.barrier()
        work.wait()
        assert t.tolist() == [7.0] * 3
    else:
        dist.barrier()
        if rank == 1:
            dist.send(torch.full((3,), 7.0), 0, tag=5)


def test_profiling_titles(world):
    """Each operation shows in torch's profiler under smd's name for it."""
    t = torch.ones(4)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        dist.barrier()
    names = {e.name for e in prof.events()}
    for title in ("smd:all_reduce", "smd:broadcast", "smd:barrier"):
        assert title in names, sorted(n for n in names if "smd" in n or "all" in n)


def test_profiling_titles_under_another_name(world):
    """A group made under another name smd registered ("smddp", as SMDDP's
    scripts use) titles its events with that name, torch's convention."""
    smd.torch.register("smddp")
    group = dist.new_group(backend="smddp")
    t = torch.ones(4)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        dist.all_reduce(t, group=group)
    names = {e.name for e in prof.events()}
    assert "smddp:all_reduce" in names, sorted(n for n in names if "all" in n)
    dist.destroy_process_group(group)


def test_sequence_numbers(world, gloo, rank, size):
    """Every collective counts once, alike on every rank."""
    pg = dist.distributed_c10d._get_default_group()
    before = pg._get_sequence_number_for_group()
    dist.all_reduce(torch.ones(1))
    dist.broadcast(torch.ones(1), 0)
    dist.all_gather([torch.zeros(1) for _ in range(size)], torch.ones(1))
    assert pg._get_sequence_number_for_group() == before + 3
    everyone = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(everyone, torch.tensor([before], dtype=torch.int64), group=gloo)
    assert all(int(e) == before for e in everyone)


def test_works_of_many_dtypes_at_once(world, rank, size):
    tensors = [values(rank, (33,), dt) for dt in (torch.float16, torch.bfloat16, torch.int8)]
    want = [sum(values(r, (33,), torch.float64) for r in range(size)) for _ in tensors]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    for t, w, expected in zip(tensors, works, want):
        w.wait()
        assert torch.equal(t.double(), expected)
