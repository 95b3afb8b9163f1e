"""Strided tensors: smd needs contiguous memory, so the backend copies such
a tensor into a contiguous buffer and (for outputs) back. The results must
be the same as for contiguous tensors."""

import torch
import torch.distributed as dist

import reference as ref
from reference import values


def strided(rank, dtype=torch.float32, salt=0):
    """A transposed 4x6 view: not contiguous, same values as `values`."""
    t = values(rank, (6, 4), dtype, salt).t()
    assert not t.is_contiguous()
    return t


def test_all_reduce(world, gloo, rank):
    t = strided(rank)
    want = ref.all_reduce(t.contiguous(), dist.ReduceOp.SUM, gloo)
    dist.all_reduce(t)
    assert torch.equal(t, want)
    assert not t.is_contiguous()  # the caller's tensor, written in place


def test_broadcast(world, gloo, rank, size):
    t = strided(rank)
    want = ref.broadcast(t.contiguous(), size - 1, gloo)
    dist.broadcast(t, size - 1)
    assert torch.equal(t, want)


def test_all_gather_strided_input_and_outputs(world, gloo, rank, size):
    t = strided(rank, torch.bfloat16)
    out = [torch.zeros(6, 4, dtype=torch.bfloat16).t() for _ in range(size)]
    dist.all_gather(out, t)
    for got, want in zip(out, ref.all_gather(t.contiguous(), gloo)):
        assert torch.equal(got, want)


def test_reduce_scatter_tensor_strided_output(world, gloo, rank, size):
    inputs = [values(rank, (4, 6), torch.float32, salt=r) for r in range(size)]
    out = torch.zeros(6, 4).t()
    dist.reduce_scatter(out, [i.clone() for i in inputs])
    assert torch.equal(out, ref.reduce_scatter(inputs, dist.ReduceOp.SUM, gloo))


def test_send_recv_strided(world, pair, rank, size):
    if rank == 0:
        dist.send(strided(7), 1)
    elif rank == 1:
        t = torch.zeros(6, 4).t()
        dist.recv(t, 0)
        assert torch.equal(t, strided(7))
    dist.barrier()
