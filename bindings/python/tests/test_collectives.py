"""Every collective x datatype, out of place (a new array, or out=) and in
place, blocking and nonblocking, against values computed here. allreduce,
broadcast and reduce are in place by default (the result goes into buf);
allgather, reduce_scatter and alltoall return a new array unless out= is
given."""

import functools
import time

import numpy as np
import pytest

import smd
from values import DATATYPES, OPS, check, dtype_arg, make, reduced, to_dtype

N = 37  # elements per rank: not a multiple of any vector width
MODES = ["new", "out", "inplace"]
# For the collectives whose result replaces the input: in place by default,
# out= elsewhere, and out=buf (the same as the default).
REPLACING_MODES = ["default", "out", "out=buf"]


def call_replacing(call, buf, mode):
    """call() (a collective on buf) in one of REPLACING_MODES; asserts it
    returns the array the mode names, and that out= elsewhere leaves buf
    alone."""
    original = buf.copy()
    if mode == "default":
        got = call()
        assert got is buf
    elif mode == "out":
        out = np.empty_like(buf)
        got = call(out=out)
        assert got is out
        np.testing.assert_array_equal(buf, original)
    else:
        got = call(out=buf)
        assert got is buf
    return got


@pytest.mark.parametrize("mode", REPLACING_MODES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DATATYPES)
def test_allreduce(world, dtype, op, mode):
    buf = make(dtype, world.rank, N, op)
    got = call_replacing(functools.partial(world.allreduce, buf, op, dtype=dtype_arg(dtype)),
                         buf, mode)
    assert got.dtype == buf.dtype
    check(got, dtype, reduced(dtype, op, world.size, N))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DATATYPES)
def test_reduce_scatter(world, dtype, op, mode):
    p, r = world.size, world.rank
    buf = make(dtype, r, N * p, op).reshape(p, N)
    kw = {"dtype": dtype_arg(dtype)}
    if mode == "new":
        got = world.reduce_scatter(buf, op, **kw)
    elif mode == "out":
        got = world.reduce_scatter(buf, op, out=np.empty(N, buf.dtype), **kw)
    else:
        got = world.reduce_scatter(buf, op, out=buf[r], **kw)
    assert got.shape == (N,)
    check(got, dtype, reduced(dtype, op, p, N * p)[r * N:(r + 1) * N])


@pytest.mark.parametrize("mode", REPLACING_MODES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DATATYPES)
def test_reduce(world, dtype, op, mode):
    root = world.size - 1
    buf = make(dtype, world.rank, N, op)
    original = buf.copy()
    kw = {"dtype": dtype_arg(dtype)}
    out = np.empty_like(buf) if mode == "out" else None
    if mode == "default":
        got = world.reduce(buf, op, root, **kw)
    else:
        got = world.reduce(buf, op, root, out=buf if out is None else out, **kw)
    if world.rank == root:
        assert got is (buf if out is None else out)
        check(got, dtype, reduced(dtype, op, world.size, N))
    else:
        assert got is None
    if world.rank != root or out is not None:
        np.testing.assert_array_equal(buf, original)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DATATYPES)
def test_allgather(world, dtype, mode):
    p, r = world.size, world.rank
    kw = {"dtype": dtype_arg(dtype)}
    mine = make(dtype, r, N)
    if mode == "new":
        got = world.allgather(mine, **kw)
    elif mode == "out":
        got = world.allgather(mine, out=np.empty((p, N), mine.dtype), **kw)
    else:
        out = np.empty((p, N), mine.dtype)
        out[r] = mine
        got = world.allgather(out[r], out=out, **kw)
    assert got.shape == (p, N)
    for s in range(p):
        np.testing.assert_array_equal(got[s], make(dtype, s, N))


@pytest.mark.parametrize("mode", REPLACING_MODES)
@pytest.mark.parametrize("dtype", DATATYPES)
def test_broadcast(world, dtype, mode):
    root = 1 if world.size > 1 else 0
    # Only the root's data counts: every rank's buf receives it.
    buf = make(dtype, world.rank, N).reshape(1, N)
    got = call_replacing(functools.partial(world.broadcast, buf, root, dtype=dtype_arg(dtype)),
                         buf, mode)
    assert got.shape == (1, N)
    np.testing.assert_array_equal(got[0], make(dtype, root, N))


def test_broadcast_fills_the_callers_buffer(world):
    """issue 21's finding: b on every rank holds the root's values after
    the call, not only the returned array."""
    b = np.full(3, world.rank * 10.0)
    world.broadcast(b, root=world.size - 1)
    np.testing.assert_array_equal(b, np.full(3, (world.size - 1) * 10.0))
    b = np.full(3, world.rank * 1.0)
    assert world.ibroadcast(b, root=0).wait() is b
    np.testing.assert_array_equal(b, np.zeros(3))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DATATYPES)
def test_alltoall(world, dtype, mode):
    p, r = world.size, world.rank
    kw = {"dtype": dtype_arg(dtype)}
    # Block j (row j) goes to rank j: rank r sends make(dtype, r*p + j).
    buf = np.stack([make(dtype, r * p + j, N) for j in range(p)])
    if mode == "new":
        got = world.alltoall(buf, **kw)
    elif mode == "out":
        got = world.alltoall(buf, out=np.empty_like(buf), **kw)
    else:
        got = world.alltoall(buf, out=buf, **kw)
    assert got.shape == (p, N)
    for s in range(p):
        np.testing.assert_array_equal(got[s], make(dtype, s * p + r, N))


def test_barrier(world):
    world.barrier()
    world.ibarrier().wait()


@pytest.mark.parametrize("n", [0, 1, 70001])
def test_counts(world, n):
    """Empty, one element, and more than the pipelined rounds' 256 KiB."""
    got = world.allreduce(np.ones(n, np.float32))
    np.testing.assert_array_equal(got, np.full(n, world.size, np.float32))
    gathered = world.allgather(np.full(n, world.rank, np.int32))
    np.testing.assert_array_equal(gathered, np.repeat(np.arange(world.size, dtype=np.int32)[:, None],
                                                      n, axis=1))


def test_shapes(world):
    p = world.size
    x = np.ones((2, 3, 4), np.float64)
    assert world.allreduce(x).shape == (2, 3, 4)
    assert world.allgather(x).shape == (p, 2, 3, 4)
    assert world.allgather(np.float32(1.0)).shape == (p,)           # a 0-d input
    assert world.reduce_scatter(np.ones((p, 5))).shape == (5,)       # rows = ranks
    assert world.reduce_scatter(np.ones(4 * p)).shape == (4,)        # flat
    assert world.broadcast(x, 0).shape == (2, 3, 4)
    assert world.alltoall(np.ones((p, 2, 2))).shape == (p, 2, 2)
    # out= may have any shape with the right count.
    out = np.empty((3, 2, 4))
    assert world.allreduce(x, out=out) is out


def test_op_spellings(world):
    for op in ("sum", "SUM", smd.Op.SUM, int(smd.Op.SUM)):
        np.testing.assert_array_equal(world.allreduce(np.ones(3, np.int32), op),
                                      np.full(3, world.size, np.int32))


# ---- nonblocking forms -------------------------------------------------------

def assert_completed_in_issue_order(requests, limit_s=120):
    """smd.h: operations on one communicator complete in the order they were
    issued. Tests the requests newest first until all are done: one seen done
    while an older one is then seen running finished out of order (testing
    only moves requests on, so a correct order never fails this). A wall-clock
    limit bounds the wait, not a count of tests."""
    deadline = time.monotonic() + limit_s
    while True:
        newest_done, running = None, 0
        for i in reversed(range(len(requests))):
            if requests[i].done:
                newest_done = i if newest_done is None else newest_done
            else:
                running += 1
                assert newest_done is None, (
                    f"request {newest_done} completed before request {i}, issued earlier")
        if not running:
            return
        assert time.monotonic() < deadline, f"{running} requests still running after {limit_s} s"


@pytest.mark.parametrize("dtype", DATATYPES)
def test_nonblocking(world, dtype):
    p, r = world.size, world.rank
    kw = {"dtype": dtype_arg(dtype)}
    x = make(dtype, r, N)
    rows = np.stack([make(dtype, r * p + j, N) for j in range(p)])
    # Several in flight at once (the in-place ones on copies of x, which the
    # others read meanwhile); they complete in issue order.
    requests = [
        world.iallreduce(x.copy(), "max", **kw),
        world.iallgather(x, **kw),
        world.ireduce_scatter(np.tile(x, p), "sum", **kw),
        world.ibroadcast(x.copy(), 0, **kw),
        world.ireduce(x.copy(), "min", 0, **kw),
        world.ialltoall(rows, **kw),
        world.ibarrier(),
    ]
    assert_completed_in_issue_order(requests)
    results = [req.wait() for req in requests]
    check(results[0], dtype, reduced(dtype, "max", p, N))
    np.testing.assert_array_equal(results[1], np.stack([make(dtype, s, N) for s in range(p)]))
    check(results[2], dtype, reduced(dtype, "sum", p, N))  # every block of the input is x
    np.testing.assert_array_equal(results[3], make(dtype, 0, N))
    if r == 0:
        check(results[4], dtype, reduced(dtype, "min", p, N))
    else:
        assert results[4] is None
    np.testing.assert_array_equal(results[5], np.stack([make(dtype, s * p + r, N) for s in range(p)]))
    assert results[6] is None
    # A finished request answers again with the same result.
    assert requests[0].test() and requests[0].done
    assert requests[0].wait() is results[0]


def test_request_test_polls(world):
    req = world.iallreduce(np.ones(1000, np.float64))
    while not req.test():
        pass
    np.testing.assert_array_equal(req.wait(), np.full(1000, world.size, np.float64))


def test_request_wait_timeout_keeps_running(world):
    """wait(timeout) that runs out raises the built-in TimeoutError and the
    operation goes on; with one rank it finishes at once."""
    c = world.dup()
    if world.rank == 0 and world.size > 1:
        req = c.iallreduce(np.ones(4))  # the others join only after the timeout
        with pytest.raises(TimeoutError) as info:
            req.wait(timeout=0.2)
        assert not isinstance(info.value, smd.Error)
        assert not req.done
        world.barrier()
        np.testing.assert_array_equal(req.wait(timeout=30), np.full(4, world.size))
    else:
        if world.size > 1:
            world.barrier()
        np.testing.assert_array_equal(c.iallreduce(np.ones(4)).wait(timeout=30),
                                      np.full(4, world.size))
    c.destroy()


def test_bfloat16_values(world):
    """bfloat16 is reduced in float32 and rounded once: 1 + 2^-9 per rank."""
    x = smd.to_bfloat16(np.full(8, 1.0 + 2.0 ** -7, np.float32))
    got = world.allreduce(x, dtype=smd.bfloat16)
    want = smd.to_bfloat16(np.full(8, world.size * (1.0 + 2.0 ** -7), np.float32))
    np.testing.assert_array_equal(got, want)


def test_float16_native(world):
    x = np.full(5, 0.5, np.float16)
    got = world.allreduce(x, "avg")
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, x)


def test_to_dtype_roundtrip():
    for dtype in DATATYPES:
        assert len(to_dtype([1, 2], dtype)) == 2


def test_not_interruptible_calls_blocking_functions(world):
    """interruptible=False: the library's blocking functions (inherited by
    communicators made from it)."""
    c = world.dup()
    c.interruptible = False
    with c.dup() as d:
        assert not d.interruptible
        x = np.arange(6, dtype=np.int64).reshape(2, 3)
        np.testing.assert_array_equal(d.allreduce(x.copy()), x * world.size)
        np.testing.assert_array_equal(d.allgather(x)[world.rank], x)
        d.barrier()
        p, r = world.size, world.rank
        got = np.zeros(3)
        recv = d.irecv(got, (r - 1) % p, tag=2)  # posted before the blocking send
        d.send(np.full(3, float(r)), (r + 1) % p, tag=2)
        assert recv.wait() == 3
        np.testing.assert_array_equal(got, np.full(3, float((r - 1) % p)))
        # A blocking receive still reports the count.
        send = d.isend(np.ones(2), r, tag=3)
        assert d.recv(np.empty(5), r, tag=3) == 2
        send.wait()
    c.destroy()


@pytest.mark.parametrize("n", [5, 70001])
def test_shared_arrays(world, n):
    """Arrays from shared_empty: peers read an allgather's input and a
    broadcast root's where it lies (70001 float32: two staging rounds)."""
    p, r = world.size, world.rank
    mine = world.shared_empty(n, np.float32)
    mine[:] = np.arange(n, dtype=np.float32) + 1000 * r
    out = world.shared_empty((p, n), np.float32)
    assert out.shape == (p, n) and out.dtype == np.float32
    got = world.allgather(mine, out=out)
    assert got is out
    for s in range(p):
        np.testing.assert_array_equal(out[s], np.arange(n, dtype=np.float32) + 1000 * s)
    root = p - 1
    buf = world.shared_empty(n, "float32")
    buf[:] = r + 1  # only the root's values count
    world.broadcast(buf, root, out=buf)
    np.testing.assert_array_equal(buf, np.full(n, root + 1, np.float32))
    assert world.shared_empty((0, 3)).size == 0
    with pytest.raises(smd.InvalidArgumentError):
        world.shared_empty((-1, 2))
