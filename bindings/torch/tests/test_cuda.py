"""CUDA tensors through the c10d backend (a build against a CUDA torch,
SMD_TORCH_CUDA): allreduce, broadcast, all_gather (lists) and
all_gather_into_tensor, reduce_scatter_tensor (and both coalesced),
all_to_all_single and send/recv, stream-ordered on
torch's current stream as with NCCL, against values computed here; and the
refusals (mixed CPU and CUDA tensors, a CUDA tensor in an operation that
takes CPU tensors only).

Skips without a GPU (torch.cuda.is_available() is False), and where the
backend was built without CUDA torch. On one GPU every rank uses it (ranks
sharing a GPU, which smd supports). Run alone at 2 ranks: meson test
--suite torch-cuda (scripts/device_check.sh's torch-cuda stage), with
test_cuda_training.py (DDP and FSDP on CUDA). The `dev` fixture is
conftest.py's."""

import pytest
import torch
import torch.distributed as dist

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA device: torch.cuda.is_available() is False (run on a GPU machine: "
    "scripts/device_check.sh run, stage torch-cuda)")


def values(rank, n, dev, dtype=torch.float32, salt=0):
    return ((torch.arange(n, dtype=torch.float64) * (rank + 1) + salt).to(dtype)).to(dev)


def summed(size, n, dtype=torch.float32, salt=0):
    return sum(values(r, n, "cpu", torch.float64, salt) for r in range(size)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
def test_all_reduce_sum(dev, rank, size, dtype):
    n = 8 if dtype == torch.bfloat16 else 1000  # sums exact in bfloat16
    t = values(rank, n, dev, dtype)
    dist.all_reduce(t)
    assert t.device == dev
    assert torch.equal(t.cpu(), summed(size, n, dtype))


@pytest.mark.parametrize("op", ["AVG", "MAX", "MIN", "PRODUCT"])
def test_all_reduce_ops(dev, rank, size, op):
    t = values(rank, 64, dev, salt=1)
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    each = torch.stack([values(r, 64, "cpu", salt=1) for r in range(size)])
    want = {"AVG": each.mean(0), "MAX": each.max(0).values, "MIN": each.min(0).values,
            "PRODUCT": each.prod(0)}[op]
    assert torch.allclose(t.cpu(), want)


def test_all_reduce_premul_sum(dev, rank, size):
    t = values(rank, 32, dev)
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.5))
    assert torch.allclose(t.cpu(), summed(size, 32) * 0.5)


def test_all_reduce_strided(dev, rank, size):
    """A non-contiguous tensor: staged in a contiguous buffer and copied
    back on the stream."""
    base = values(rank, 200, dev).view(20, 10)
    t = base.t()
    dist.all_reduce(t)
    assert torch.equal(base.cpu(), summed(size, 200).view(20, 10))


def test_async_wait_and_future(dev, rank, size):
    """NCCL's Work: wait() orders the current stream; the Future holds the
    outputs once enqueued, and work queued after on the stream sees them."""
    a = values(rank, 4096, dev)
    work = dist.all_reduce(a, async_op=True)
    work.wait()
    doubled = a * 2  # queued on the same stream after the wait
    assert torch.equal(doubled.cpu(), summed(size, 4096) * 2)
    b = values(rank, 16, dev)
    fut = dist.all_reduce(b, async_op=True).get_future()
    (out,) = fut.wait()
    assert torch.equal(out.cpu(), summed(size, 16))
    # A side stream that waits on the Work sees the result too.
    c = values(rank, 16, dev)
    work = dist.all_reduce(c, async_op=True)
    side = torch.cuda.Stream(device=dev)
    with torch.cuda.stream(side):
        work.wait()
        seen = c + 0
    torch.cuda.current_stream(dev).wait_stream(side)
    assert torch.equal(seen.cpu(), summed(size, 16))
    work.wait()  # done once the requests end; no error reported
    torch.cuda.synchronize(dev)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.complex64])
def test_broadcast(dev, rank, size, dtype):
    root = size - 1
    t = values(rank, 100, dev, dtype)
    dist.broadcast(t, src=root)
    assert torch.equal(t.cpu(), values(root, 100, "cpu", dtype))


def test_all_gather_lists(dev, rank, size):
    """The list form (DDP checks its parameters with it): even, then
    uneven (output r takes rank r's 5 + r elements, smd's allgatherv)."""
    t = values(rank, 40, dev)
    outs = [torch.empty(40, device=dev) for _ in range(size)]
    dist.all_gather(outs, t)
    for r, o in enumerate(outs):
        assert o.device == dev and torch.equal(o.cpu(), values(r, 40, "cpu"))
    mine = values(rank, 5 + rank, dev, torch.int64)
    outs = [torch.empty(5 + r, device=dev, dtype=torch.int64) for r in range(size)]
    dist.all_gather(outs, mine)
    for r, o in enumerate(outs):
        assert torch.equal(o.cpu(), values(r, 5 + r, "cpu", torch.int64))


def test_all_gather_into_tensor(dev, rank, size):
    t = values(rank, 33, dev)
    out = torch.empty(33 * size, device=dev)
    dist.all_gather_into_tensor(out, t)
    want = torch.cat([values(r, 33, "cpu") for r in range(size)])
    assert torch.equal(out.cpu(), want)


@pytest.mark.parametrize("op", ["SUM", "AVG"])
def test_reduce_scatter_tensor(dev, rank, size, op):
    t = values(rank, 8 * size, dev)
    out = torch.empty(8, device=dev)
    dist.reduce_scatter_tensor(out, t, op=getattr(dist.ReduceOp, op))
    want = summed(size, 8 * size).chunk(size)[rank] / (size if op == "AVG" else 1)
    assert torch.allclose(out.cpu(), want)
    # The caller's input stays as it was.
    assert torch.equal(t.cpu(), values(rank, 8 * size, "cpu"))


def test_coalesced_gathers_and_reductions(dev, rank, size):
    """Several all_gather_into_tensor and reduce_scatter_tensor calls under
    one _coalescing_manager (FSDP's and DTensor's form): one Work each."""
    inputs = [values(rank, 5, dev), values(rank, 3, dev, torch.int64, 7),
              values(rank, 2, dev, torch.bfloat16)]
    outputs = [torch.empty(t.numel() * size, dtype=t.dtype, device=dev) for t in inputs]
    with dist._coalescing_manager(device=dev, async_ops=True) as cm:
        for out, t in zip(outputs, inputs):
            dist.all_gather_into_tensor(out, t)
    cm.wait()
    for out, t in zip(outputs, inputs):
        want = torch.cat([values(r, t.numel(), "cpu", t.dtype, 7 if t.dtype == torch.int64 else 0)
                          for r in range(size)])
        assert torch.equal(out.cpu(), want)
    inputs = [values(rank, 4 * size, dev), values(rank, 2 * size, dev, salt=1)]
    outputs = [torch.empty(t.numel() // size, device=dev) for t in inputs]
    with dist._coalescing_manager(device=dev, async_ops=True) as cm:
        for out, t in zip(outputs, inputs):
            dist.reduce_scatter_tensor(out, t, op=dist.ReduceOp.AVG)
    cm.wait()
    for out, t, salt in zip(outputs, inputs, (0, 1)):
        want = summed(size, t.numel(), salt=salt).chunk(size)[rank] / size
        assert torch.allclose(out.cpu(), want)


def test_all_to_all_single_even(dev, rank, size):
    t = torch.arange(4 * size, device=dev, dtype=torch.float32) + 100 * rank
    out = torch.empty_like(t)
    dist.all_to_all_single(out, t)
    want = torch.cat([torch.arange(4 * rank, 4 * rank + 4, dtype=torch.float32) + 100 * r
                      for r in range(size)])
    assert torch.equal(out.cpu(), want)


def test_all_to_all_single_uneven(dev, rank, size):
    """Rank r sends r + j + 1 rows of 3 to rank j (smd_ialltoallv)."""
    in_splits = [rank + j + 1 for j in range(size)]
    out_splits = [j + rank + 1 for j in range(size)]
    t = torch.cat([torch.full((n, 3), 10.0 * rank + j) for j, n in enumerate(in_splits)]).to(dev)
    out = torch.empty(sum(out_splits), 3, device=dev)
    dist.all_to_all_single(out, t, out_splits, in_splits)
    want = torch.cat([torch.full((n, 3), 10.0 * j + rank) for j, n in enumerate(out_splits)])
    assert torch.equal(out.cpu(), want)


def test_send_recv(dev, rank, size, pair):
    """Rank 0 to 1, then back (ordered: stream-ordered sends complete with
    their receives, as NCCL's)."""
    t = values(rank, 50, dev)
    if rank == 0:
        dist.send(t, dst=1)
        back = torch.empty(50, device=dev)
        dist.recv(back, src=1)
        assert torch.equal(back.cpu(), values(1, 50, "cpu"))
    elif rank == 1:
        got = torch.empty(50, device=dev)
        dist.recv(got, src=0)
        assert torch.equal(got.cpu(), values(0, 50, "cpu"))
        dist.send(t, dst=0)


def test_mixed_devices_refused(dev, rank, size):
    out = torch.empty(4 * size)  # on the CPU
    with pytest.raises(Exception, match="all on one CUDA device or all on the CPU"):
        dist.all_gather_into_tensor(out, torch.ones(4, device=dev))


def test_host_only_call_refused(dev, rank, size):
    """gather stays a host operation: refused naming those that take CUDA."""
    t = torch.ones(4, device=dev)
    gather_list = [torch.empty(4, device=dev) for _ in range(size)] if rank == 0 else None
    with pytest.raises(Exception, match="takes CPU tensors here"):
        dist.gather(t, gather_list, dst=0)
