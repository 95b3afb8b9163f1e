"""dist.new_group with backend smd: subsets, overlapping groups, groups
made and destroyed again. Every rank calls new_group for every group, as
torch requires; only members get a process group."""

import pytest
import torch
import torch.distributed as dist


def check_sum(group, members, rank):
    if rank not in members:
        assert group == dist.GroupMember.NON_GROUP_MEMBER
        return
    t = torch.full((5,), float(rank))
    dist.all_reduce(t, group=group)
    assert t.tolist() == [float(sum(members))] * 5
    assert dist.get_world_size(group) == len(members)
    assert dist.get_rank(group) == members.index(rank)


def test_whole_world_group(world, rank, size):
    g = dist.new_group()
    check_sum(g, list(range(size)), rank)
    dist.destroy_process_group(g)


def test_subset_and_broadcast_from_group_member(world, rank, size):
    members = list(range(0, size, 2))  # the even ranks
    g = dist.new_group(members)
    check_sum(g, members, rank)
    if rank in members:
        t = torch.full((3,), float(rank))
        dist.broadcast(t, members[-1], group=g)  # src is a global rank
        assert t.tolist() == [float(members[-1])] * 3
    dist.barrier()


def test_overlapping_groups(world, rank, size):
    """[0, 1] and [1, 2] share rank 1, which uses both, interleaved."""
    if size < 3:
        pytest.skip("needs three ranks")
    a = dist.new_group([0, 1])
    b = dist.new_group([1, 2])
    for _ in range(3):
        check_sum(a, [0, 1], rank)
        check_sum(b, [1, 2], rank)
    # Both in flight on rank 1 at once; each group's sum is its own.
    if rank == 1:
        x, y = torch.full((2,), 10.0), torch.full((2,), 100.0)
        wa = dist.all_reduce(x, group=a, async_op=True)
        wb = dist.all_reduce(y, group=b, async_op=True)
        wa.wait()
        wb.wait()
        assert torch.equal(x, torch.full((2,), 11.0)), x  # + rank 0's 1
        assert torch.equal(y, torch.full((2,), 102.0)), y  # + rank 2's 2
    elif rank in (0, 2):
        z = torch.full((2,), float(1 if rank == 0 else 2))
        dist.all_reduce(z, group=a if rank == 0 else b)
        want = 11.0 if rank == 0 else 102.0
        assert torch.equal(z, torch.full((2,), want)), z
    dist.barrier()


def test_groups_made_and_destroyed_again(world, rank, size):
    for _ in range(3):
        g = dist.new_group(list(range(size)))
        check_sum(g, list(range(size)), rank)
        dist.destroy_process_group(g)


def test_reversed_order_group(world, rank, size):
    """Group ranks follow the list's sorted order, as torch defines them."""
    members = list(reversed(range(size)))
    g = dist.new_group(members)
    check_sum(g, sorted(members), rank)
