"""What FSDP, FSDP2 and DTensor call on torch 2.x beyond the classic
collectives: the coalesced flat collectives (all_gather_into_tensor and
reduce_scatter_tensor under _coalescing_manager), monitored_barrier, and
the backend's registration for the cpu and cuda devices."""

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import reference as ref

TORCH2 = int(torch.__version__.split(".")[0]) >= 2
torch2_only = pytest.mark.skipif(not TORCH2, reason="a torch 2.x entry point (the 1.13 suite "
                                 "runs without it)")


def values(rank, n, dtype=torch.float32, salt=0):
    return (torch.arange(n, dtype=torch.float64) * (rank + 1) + salt).to(dtype)


@torch2_only
def test_all_gather_into_tensor_coalesced(world, gloo, rank, size):
    """Pairs of several dtypes, one Work (as FSDP's all-gather does)."""
    inputs = [values(rank, 5), values(rank, 3, torch.int64, 7), values(rank, 1, torch.bfloat16)]
    outputs = [torch.empty(t.numel() * size, dtype=t.dtype) for t in inputs]
    with dist._coalescing_manager(async_ops=True) as cm:
        for out, t in zip(outputs, inputs):
            dist.all_gather_into_tensor(out, t)
    cm.wait()
    for out, t in zip(outputs, inputs):
        want = torch.empty_like(out)
        dist.all_gather_into_tensor(want, t, group=gloo)
        assert torch.equal(out, want)


@torch2_only
@pytest.mark.parametrize("op", ["SUM", "AVG"])
def test_reduce_scatter_tensor_coalesced(world, gloo, rank, size, op):
    inputs = [values(rank, 4 * size), values(rank, 2 * size, salt=1)]
    outputs = [torch.empty(t.numel() // size) for t in inputs]
    with dist._coalescing_manager(async_ops=True) as cm:
        for out, t in zip(outputs, inputs):
            dist.reduce_scatter_tensor(out, t, op=getattr(dist.ReduceOp, op))
    cm.wait()
    for out, t in zip(outputs, inputs):
        summed = ref.all_reduce(t, dist.ReduceOp.SUM, gloo)
        want = summed.chunk(size)[rank] / (size if op == "AVG" else 1)
        assert torch.allclose(out, want)


@torch2_only
def test_registered_for_cpu_and_cuda(world):
    """CUDA tensors reach smd (test_cuda.py) rather than torch's "no
    backend for device type cuda"."""
    assert dist.Backend.backend_capability["smd"] == ["cpu", "cuda"]
    assert dist.group.WORLD._get_backend(torch.device("cuda")) is \
        dist.group.WORLD._get_backend(torch.device("cpu"))


# torch 1.13's monitored_barrier refuses every backend but gloo before it
# reaches the backend.
@torch2_only
def test_monitored_barrier_passes(world):
    dist.monitored_barrier(timeout=timedelta(seconds=30))
    dist.monitored_barrier(timeout=timedelta(seconds=30), wait_all_ranks=True)


@torch2_only
@pytest.mark.parametrize("wait_all", [False, True])
def test_monitored_barrier_names_missing_ranks(world, pair, rank, size, wait_all):
    """Rank 0 names the ranks that stay away (1 and up, but rank 1 only
    without wait_all_ranks); ranks that came are told rank 0 failed."""
    group = dist.new_group(backend="smd")
    stay_away = range(1, size) if wait_all else [1]
    if wait_all and size > 2:
        stay_away = [1, 2]
    if rank == 0:
        names = ", ".join(map(str, stay_away))
        word = "Ranks" if len(stay_away) > 1 else "Rank"
        with pytest.raises(RuntimeError, match=f"{word} {names} failed to pass monitoredBarrier"):
            dist.monitored_barrier(group, timeout=timedelta(seconds=1), wait_all_ranks=wait_all)
    elif rank not in stay_away:
        with pytest.raises(RuntimeError, match="successfully reached monitoredBarrier"):
            dist.monitored_barrier(group, timeout=timedelta(seconds=10), wait_all_ranks=wait_all)
    dist.barrier()  # on the world group, which the failure left alone
    dist.destroy_process_group(group)


@torch2_only
def test_monitored_barrier_zero_timeout_is_rank_0s(world, pair, rank):
    """A timeout of 0 is a deadline already passed (gloo's reading, not the
    group's default): rank 0 says it ran out of time, naming nobody late."""
    group = dist.new_group(backend="smd")
    if rank == 0:
        with pytest.raises(RuntimeError, match="Rank 0 timed out in monitoredBarrier after 0 ms"):
            dist.monitored_barrier(group, timeout=timedelta(seconds=0))
    dist.barrier()
    dist.destroy_process_group(group)
