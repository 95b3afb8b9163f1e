"""Errors come back as Python exceptions carrying smd's message: each is an
smd.Error of its result code and a RuntimeError (what torch code expects).
Nothing here breaks the group: every test leaves it usable."""

import pytest
import torch
import torch.distributed as dist

import smd
import smd.torch


def test_dtype_smd_cannot_reduce(world):
    with pytest.raises(smd.torch.errors.InvalidArgumentError, match="cannot reduce Short") as e:
        dist.all_reduce(torch.ones(3, dtype=torch.int16))
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, smd.Error)
    assert e.value.code == smd.Result.ERR_INVALID_ARGUMENT
    assert "[SMD_ERR_INVALID_ARGUMENT]" in str(e.value)


def test_bitwise_ops_are_refused(world):
    for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
        with pytest.raises(RuntimeError, match="no bitwise reductions"):
            dist.all_reduce(torch.ones(2, dtype=torch.int32), op=op)


def test_wrong_output_list(world, size):
    with pytest.raises(ValueError, match="one list of"):
        world.allgather([[torch.zeros(2)] * (size + 1)], [torch.zeros(2)]).wait()


def test_mismatched_output_size(world, size):
    with pytest.raises(smd.InvalidArgumentError, match="should have"):
        dist.all_gather_into_tensor(torch.zeros(size * 2 + 1), torch.zeros(2))


def test_tag_outside_smds_range(world, pair, rank):
    if rank == 0:
        with pytest.raises(RuntimeError, match="outside smd's"):
            dist.isend(torch.ones(1), 1, tag=1 << 30)


def test_sparse_tensors_are_refused_beyond_allreduce(world):
    """allreduce sums sparse tensors (test_collectives.py); the rest refuse
    them: smd on torch 1.13, torch's dispatcher itself on 2.x."""
    with pytest.raises(RuntimeError, match="smd takes dense tensors|SparseCPU"):
        dist.broadcast(torch.ones(4).to_sparse(), 0)


def test_group_still_works_after_errors(world, size):
    t = torch.ones(3)
    dist.all_reduce(t)
    assert t.tolist() == [float(size)] * 3


BAD_CALLS = {
    "broadcast root": (lambda size: dist.broadcast(torch.ones(2), size + 3), "root .* is not a rank"),
    "reduce root": (lambda size: dist.reduce(torch.ones(2), -1), "root -1 is not a rank"),
    "send peer": (lambda size: dist.send(torch.ones(2), size), "destination .* is not a rank"),
    "recv peer": (lambda size: dist.recv(torch.ones(2), -2), "source -2 is not a rank"),
    "alltoall splits": (lambda size: dist.all_to_all_single(torch.zeros(4), torch.zeros(4),
                                                            [1] * size, [5] * size),
                        "splits add up to"),
    "premul_sum int": (lambda size: dist.all_reduce(torch.ones(2, dtype=torch.int32),
                                                    op=dist._make_nccl_premul_sum(2.0)),
                       "needs a floating-point tensor"),
}


@pytest.mark.parametrize("call", BAD_CALLS)
def test_bad_arguments(world, size, call):
    """Refused on the caller's thread with smd's message; the group goes on."""
    bad, message = BAD_CALLS[call]
    with pytest.raises(smd.torch.errors.InvalidArgumentError, match=message):
        bad(size)
    t = torch.ones(3)
    dist.all_reduce(t)
    assert t.tolist() == [float(size)] * 3
