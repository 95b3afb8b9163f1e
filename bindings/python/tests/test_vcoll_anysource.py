"""Collectives with per-rank counts (allgatherv, reduce_scatterv,
alltoallv) and receives from any source with their status."""

import numpy as np
import pytest

import smd


def counts_for(p):
    return [(r * 3 + 1) % 5 * 7 for r in range(p)]   # uneven, some zero


def test_allgatherv_packed_and_in_place(world):
    p, r = world.size, world.rank
    counts = counts_for(p)
    mine = np.full(counts[r], r + 1, np.float32)
    got = world.allgatherv(mine, counts)
    want = np.concatenate([np.full(n, q + 1, np.float32) for q, n in enumerate(counts)])
    np.testing.assert_array_equal(got, want)
    # In place, with gaps: blocks in reverse order, two elements apart.
    displs, at = [0] * p, 0
    for q in reversed(range(p)):
        displs[q], at = at, at + counts[q] + 2
    out = np.full(at, -1, np.float32)
    out[displs[r]:displs[r] + counts[r]] = r + 1
    world.allgatherv(out[displs[r]:displs[r] + counts[r]], counts, displs=displs, out=out)
    for q in range(p):
        np.testing.assert_array_equal(out[displs[q]:displs[q] + counts[q]], q + 1)


def test_reduce_scatterv_and_nonblocking(world):
    p, r = world.size, world.rank
    counts = counts_for(p)
    buf = np.arange(sum(counts), dtype=np.float64) + r
    got = world.ireduce_scatterv(buf, counts).wait()
    start = sum(counts[:r])
    want = sum(np.arange(sum(counts), dtype=np.float64) + q for q in range(p))[start:start + counts[r]]
    np.testing.assert_allclose(got, want)
    assert got.shape == (counts[r],)


def test_mismatched_counts(pair):
    world = pair
    with world.dup() as comm:
        counts = [4] * world.size
        if world.rank == 0:
            counts[0], counts[1] = 5, 3
        with pytest.raises(smd.MismatchError):
            comm.allgatherv(np.zeros(counts[world.rank], np.float32), counts)


def test_counts_of_the_wrong_length(world):
    with pytest.raises(smd.InvalidArgumentError):
        world.allgatherv(np.zeros(1, np.float32), [1] * (world.size + 1))


def pair_count(src, dst):
    return 0 if (src + 2 * dst) % 4 == 1 else 1 + (src * 31 + dst * 7) % 13


def test_alltoallv_uneven_gaps_and_nonblocking(world):
    p, r = world.size, world.rank
    scounts = [pair_count(r, q) for q in range(p)]
    rcounts = [pair_count(q, r) for q in range(p)]
    buf = np.concatenate([np.full(n, r * 100 + q, np.int32) for q, n in enumerate(scounts)] +
                         [np.zeros(0, np.int32)])
    got = world.alltoallv(buf, scounts, rcounts)
    want = np.concatenate([np.full(n, q * 100 + r, np.int32) for q, n in enumerate(rcounts)] +
                          [np.zeros(0, np.int32)])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
    # Received blocks in reverse order, three apart, into out=; gaps untouched.
    rdispls, at = [0] * p, 1
    for q in reversed(range(p)):
        rdispls[q], at = at, at + rcounts[q] + 3
    out = np.full(at, -1, np.int32)
    assert world.ialltoallv(buf, scounts, rcounts, rdispls=rdispls, out=out).wait() is out
    inside = np.zeros(at, bool)
    for q in range(p):
        np.testing.assert_array_equal(out[rdispls[q]:rdispls[q] + rcounts[q]], q * 100 + r)
        inside[rdispls[q]:rdispls[q] + rcounts[q]] = True
    assert (out[~inside] == -1).all()


def test_alltoallv_disagreeing_pair(pair):
    world = pair
    with world.dup() as comm:
        rcounts = [4] * world.size
        if world.rank == 1:
            rcounts[0] = 6
        send = np.zeros(4 * world.size, np.float32)
        if world.rank == 1:
            with pytest.raises(smd.TruncatedError, match="recvcounts"):
                comm.alltoallv(send, [4] * world.size, rcounts)
        else:
            try:
                comm.alltoallv(send, [4] * world.size, rcounts)
            except smd.Error:
                pass   # the failed communicator may reach this rank too


def test_alltoallv_bad_arguments(world):
    p = world.size
    buf = np.zeros(2 * p, np.float32)
    with pytest.raises(smd.InvalidArgumentError, match="sendcounts"):
        world.alltoallv(buf, [2] * (p + 1), [2] * p)
    with pytest.raises(smd.InvalidArgumentError, match="rdispls"):
        world.alltoallv(buf, [2] * p, [2] * p, rdispls=[0] * (p + 1))
    with pytest.raises(smd.InvalidArgumentError):
        world.alltoallv(buf, [3] * p, [2] * p)          # buf too short
    with pytest.raises(smd.InvalidArgumentError, match="in place"):
        world.alltoallv(buf, [2] * p, [2] * p, out=buf)  # no in-place form
    world.barrier()


def test_recv_from_any_source(world):
    p, r = world.size, world.rank
    if r != 0:
        world.send(np.full(r + 2, r, np.int32), 0, tag=r)
    else:
        if p > 1:
            seen = set()
            for _ in range(p - 1):
                buf = np.zeros(p + 2, np.int32)
                st = world.recv_status(buf)
                assert st.count == st.source + 2 and st.tag == st.source
                assert (buf[:st.count] == st.source).all()
                seen.add(st.source)
            assert seen == set(range(1, p))
        # To self, and through a request.
        req = world.irecv(np.zeros(3, np.int32), smd.ANY_SOURCE, smd.ANY_TAG)
        world.send(np.ones(2, np.int32), 0, tag=5)
        assert req.wait() == 2
        assert req.status == smd.Status(0, 5, 2, 8)
        # recv with ANY_SOURCE returns the count, as recv always does.
        world.send(np.ones(1, np.int32), 0, tag=6)
        assert world.recv(np.zeros(4, np.int32), source=smd.ANY_SOURCE, tag=6) == 1
    world.barrier()
