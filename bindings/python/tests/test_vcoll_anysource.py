"""Collectives with per-rank counts (allgatherv, reduce_scatterv) and
receives from any source with their status."""

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
