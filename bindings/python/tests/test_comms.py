"""Communicators: queries, split, dup, create_group, groups, context
managers, destroy, the world."""

import numpy as np
import pytest

import smd


def test_world_queries(world):
    assert smd.world() is world or smd.is_initialized()
    assert 0 <= world.rank < world.size
    assert 0 <= world.local_rank < world.local_size
    assert 0 <= world.node_index < world.node_count
    assert world.world_rank() == world.rank
    assert world.async_error() is None
    info = world.rank_info()
    assert info.rank == world.rank and info.cpus >= 1 and info.host
    import os
    assert info.pid == os.getpid()
    assert world.rank_info(world.size - 1).rank == world.size - 1
    assert repr(world) == f"<smd.Comm rank {world.rank} of {world.size}>"


def test_stats(world):
    before = world.stats()
    world.allreduce(np.ones(1000, dtype=np.float32))
    after = world.stats()
    assert after["collectives"] == before["collectives"] + 1
    assert after["last_algorithm"] == ("single" if world.size == 1 else "direct")
    # One node: nothing crosses nodes.
    assert after["inter_node_bytes_sent"] == 0
    assert all(set(t) == {"bytes_sent", "bytes_received"} for t in after["transports"].values())


def test_versions():
    assert smd.version() >= smd.HEADER_VERSION
    assert smd.__version__ == "{}.{}.{}".format(*smd.HEADER_VERSION)


def test_split(world):
    p, r = world.size, world.rank
    with world.split(r % 2, key=-r) as half:    # reversed order inside each half
        members = [q for q in range(p) if q % 2 == r % 2]
        assert half.size == len(members)
        assert half.rank == len(members) - 1 - members.index(r)
        total = half.allreduce(np.array([r], np.int64))
        assert total[0] == sum(members)
        assert half.world_rank(half.rank) == r


def test_split_undefined(world):
    # Rank 0 stays out (None, or smd.UNDEFINED).
    color = None if world.rank == 0 else 1
    sub = world.split(color)
    if world.rank == 0:
        assert sub is None
    else:
        assert sub.size == world.size - 1
        sub.barrier()
        sub.destroy()


def test_dup_is_independent(world):
    with world.dup() as a, world.dup() as b:
        ra = a.iallreduce(np.ones(3))
        rb = b.iallreduce(np.full(3, 2.0))
        np.testing.assert_array_equal(rb.wait(), np.full(3, 2.0 * world.size))
        np.testing.assert_array_equal(ra.wait(), np.full(3, 1.0 * world.size))


def test_create_group(world):
    p = world.size
    ranks = list(range(p - 1, -1, -2))   # every other rank, from the last one down
    if world.rank in ranks:
        with world.create_group(ranks) as g:
            assert g.size == len(ranks)
            assert g.rank == ranks.index(world.rank)
            assert g.allreduce(np.ones(1))[0] == len(ranks)
    world.barrier()


def test_groups(world):
    p = world.size
    tp = 2 if p % 2 == 0 else 1
    with world.groups(tp=tp, pp=1, placement="cluster") as g:
        sizes = g.sizes
        assert sizes == {"world": p, "tp": tp, "pp": 1, "dp": p, "rdp": p // tp, "mp": tp, "sdp": 1}
        assert g.ranks["world"] == world.rank
        members = g.members("tp")
        assert len(members) == tp and world.rank in members
        assert g.tp.size == tp
        assert g.tp.allreduce(np.array([world.rank]))[0] == sum(members)
        assert g.world.size == p
        assert g.comm(smd.GroupKind.DP) is g.dp
        with pytest.raises(smd.InvalidUsageError, match="Groups"):
            g.tp.destroy()
        tp_comm = g.tp
    # The groups' communicators went with them.
    assert tp_comm.destroyed
    # Sharded data parallelism: chunks of sdp members of the rdp group.
    rdp = p // tp
    with world.groups(tp=tp, sdp=rdp) as g:
        assert g.sizes["sdp"] == rdp
        assert g.members("sdp") == g.members("rdp")
        assert g.sdp.size == rdp
    with pytest.raises(smd.InvalidUsageError):
        tp_comm.barrier()
    with pytest.raises(smd.InvalidUsageError):
        g.size("tp")


def test_group_layout():
    # 8 ranks, pp = 2, "spread": mp groups [0,4] [1,5] ..., dp groups [0..3] [4..7].
    assert smd.group_layout(8, 5, "mp", pp=2, placement="spread") == (1, (1, 5))
    assert smd.group_layout(8, 5, "dp", pp=2, placement="spread") == (1, (4, 5, 6, 7))
    assert smd.group_layout(8, 5, "dp", pp=2, placement="cluster") == (2, (1, 3, 5, 7))
    with pytest.raises(smd.InvalidArgumentError, match="divide|tp"):
        smd.group_layout(6, 0, "tp", tp=4)


def test_groups_invalid(world):
    with pytest.raises(smd.InvalidArgumentError):
        world.groups(tp=world.size + 1)
    with pytest.raises(smd.InvalidArgumentError):
        world.groups(placement="XYZ")


def test_use_after_destroy(world):
    c = world.dup()
    c.destroy()
    assert c.destroyed and "destroyed" in repr(c)
    for call in (lambda: c.allreduce(np.ones(1)), c.barrier, c.dup, lambda: c.split(0),
                 lambda: c.isend(np.ones(1), 0), lambda: c.local_rank):
        with pytest.raises(smd.InvalidUsageError, match="destroyed"):
            call()
    c.destroy()  # again: nothing
    c.abort()    # nothing either


def test_destroy_waits_for_pending_requests(world):
    c = world.dup()
    req = c.iallreduce(np.ones(100000, np.float32))
    c.destroy()
    # The request stays usable after its communicator is gone.
    np.testing.assert_array_equal(req.wait(), np.full(100000, world.size, np.float32))


def test_context_manager_aborts_on_exception(world):
    """Leaving a with block by an exception aborts the communicator (its
    peers fail at once instead of at their deadline), then destroys it."""
    with pytest.raises(RuntimeError):
        with world.dup() as c:
            raise RuntimeError("boom")
    assert c.destroyed
    world.barrier()


def test_world_function(world):
    assert smd.world() is world
    assert smd.is_initialized()


def test_abort(world):
    """abort() makes this rank's operations fail with AbortedError and tells
    the peers, whose operations on the communicator fail too."""
    c = world.dup()
    if world.rank == 0:
        c.abort()
    world.barrier()  # rank 0 has aborted
    with pytest.raises(smd.AbortedError) as info:
        c.allreduce(np.ones(2))
    assert info.value.code == smd.Result.ERR_ABORTED
    c.destroy()
    world.barrier()
