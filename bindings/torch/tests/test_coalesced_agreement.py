"""Coalesced calls whose ranks pass different tensors that pack to the same
size: every rank gets smd.MismatchError, never another rank's tensors at
wrong offsets. all_reduce_coalesced is an smd group (the group's digest is
checked, src/core/fusion/group_agreement.cc); all_gather_coalesced packs
into one allgather (its packing's header is checked, tensor_staging.cc).
Each case runs on its own smd group, which the mismatch leaves unusable."""

import pytest
import torch
import torch.distributed as dist

import smd
import smd.torch  # noqa: F401


def shapes_for(rank, size, mine, last):
    return last if rank == size - 1 else mine


@pytest.mark.parametrize("mine,last,first", [([10, 10], [10, 12], 2),   # the fused totals pad alike
                                             ([10, 12], [12, 10], 1)])  # same tensors, another order
def test_all_reduce_coalesced_that_differ(world, pair, rank, size, mine, last, first):
    g = dist.new_group()
    tensors = [torch.full((n,), float(rank + 1)) for n in shapes_for(rank, size, mine, last)]
    with pytest.raises(smd.MismatchError, match=f"differ at their collective {first} on"):
        dist.all_reduce_coalesced(tensors, group=g)
    dist.destroy_process_group(g)
    dist.barrier()


def test_all_gather_coalesced_that_differ(world, pair, rank, size):
    # 2 and 3 float32 pack to 16 bytes each: the same 32 bytes either way.
    g = dist.new_group()
    counts = shapes_for(rank, size, [2, 3], [3, 2])
    inputs = [torch.full((n,), float(rank + 1)) for n in counts]
    outputs = [[torch.zeros(n) for n in counts] for _ in range(size)]
    with pytest.raises(smd.MismatchError, match="other tensors"):
        dist.all_gather_coalesced(outputs, inputs, group=g)
    dist.destroy_process_group(g)
    dist.barrier()
