"""Every collective of the backend, in every dtype smd knows, against
gloo's result on the same ranks (see reference.py for where gloo needs
help)."""

import pytest
import torch
import torch.distributed as dist

import reference as ref
from conftest import HEAVY
from reference import values

DTYPES = [torch.int8, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
# Moving data needs no arithmetic: dtypes smd has no datatype for travel as bytes.
MOVE_DTYPES = DTYPES + [torch.bool, torch.int16, torch.complex64]
OPS = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
       "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}
SHAPE = (3, 5)


def dtype_id(dtype):
    return str(dtype).replace("torch.", "")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_all_reduce(world, gloo, rank, dtype, op):
    t = values(rank, SHAPE, dtype)
    want = ref.all_reduce(t, OPS[op], gloo)
    dist.all_reduce(t, op=OPS[op])
    assert torch.equal(t, want), (t, want)


@pytest.mark.parametrize("op", ["sum", "product", "min", "max"])
def test_all_reduce_bool(world, gloo, rank, op):
    t = values(rank, SHAPE, torch.bool)
    want = ref.all_reduce(t, OPS[op], gloo)
    dist.all_reduce(t, op=OPS[op])
    assert torch.equal(t, want)


@pytest.mark.parametrize("factor", [2.0, "tensor"])
def test_all_reduce_premul_sum(world, gloo, rank, size, factor):
    """PREMUL_SUM: every input times the factor, then summed."""
    t = values(rank, SHAPE, torch.float32)
    f = torch.tensor([2.0]) if factor == "tensor" else factor
    want = ref.all_reduce(t * 2.0, dist.ReduceOp.SUM, gloo)
    # torch 1.13 takes one factor tensor per input tensor, 2.x one tensor.
    if factor == "tensor" and torch.__version__.startswith("1."):
        f = [f]
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(f))
    assert torch.equal(t, want)


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=dtype_id)
def test_broadcast(world, gloo, rank, size, dtype):
    for root in range(size):
        t = values(rank, SHAPE, dtype)
        want = ref.broadcast(t, root, gloo)
        dist.broadcast(t, root)
        assert torch.equal(t, want), root


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=dtype_id)
def test_all_gather(world, gloo, rank, size, dtype):
    t = values(rank, SHAPE, dtype)
    out = [torch.zeros(SHAPE, dtype=dtype) for _ in range(size)]
    dist.all_gather(out, t)
    for got, want in zip(out, ref.all_gather(t, gloo)):
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_all_gather_into_tensor(world, gloo, rank, size, dtype):
    t = values(rank, SHAPE, dtype)
    out = torch.zeros((size * SHAPE[0], SHAPE[1]), dtype=dtype)
    dist.all_gather_into_tensor(out, t)
    assert torch.equal(out, torch.cat(ref.all_gather(t, gloo)))


def test_all_gather_into_tensor_in_place(world, gloo, rank, size):
    """The input is this rank's block of the output (smd's in-place form)."""
    out = torch.zeros((size * SHAPE[0], SHAPE[1]))
    mine = out[rank * SHAPE[0]:(rank + 1) * SHAPE[0]]
    mine.copy_(values(rank, SHAPE, torch.float32))
    dist.all_gather_into_tensor(out, mine)
    assert torch.equal(out, torch.cat(ref.all_gather(values(rank, SHAPE, torch.float32), gloo)))


@pytest.mark.parametrize("op", ["sum", "max", "avg"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_reduce_scatter(world, gloo, rank, size, dtype, op):
    inputs = [values(rank, SHAPE, dtype, salt=r) for r in range(size)]
    out = torch.zeros(SHAPE, dtype=dtype)
    dist.reduce_scatter(out, inputs, op=OPS[op])
    assert torch.equal(out, ref.reduce_scatter(inputs, OPS[op], gloo))


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_reduce_scatter_tensor(world, gloo, rank, size, dtype):
    inputs = [values(rank, SHAPE, dtype, salt=r) for r in range(size)]
    out = torch.zeros(SHAPE, dtype=dtype)
    dist.reduce_scatter_tensor(out, torch.cat(inputs))
    assert torch.equal(out, ref.reduce_scatter(inputs, dist.ReduceOp.SUM, gloo))


@pytest.mark.parametrize("op", ["sum", "min"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_reduce(world, gloo, rank, size, dtype, op):
    for root in range(size):
        t = values(rank, SHAPE, dtype)
        before = t.clone()
        want = ref.all_reduce(t, OPS[op], gloo)
        dist.reduce(t, root, op=OPS[op])
        assert torch.equal(t, want if rank == root else before), root


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=dtype_id)
def test_all_to_all_single_even(world, gloo, rank, size, dtype):
    t = values(rank, (size * 2, 3), dtype)
    out = torch.zeros_like(t)
    dist.all_to_all_single(out, t)
    everyone = ref.all_gather(t, gloo)
    want = torch.cat([everyone[r][rank * 2:(rank + 1) * 2] for r in range(size)])
    assert torch.equal(out, want)


def test_all_to_all_single_uneven(world, gloo, rank, size):
    """Rank r sends r + j + 1 rows to rank j (point-to-point underneath)."""
    in_splits = [rank + j + 1 for j in range(size)]
    out_splits = [j + rank + 1 for j in range(size)]
    t = values(rank, (sum(in_splits), 2), torch.float32)
    out = torch.zeros((sum(out_splits), 2))
    dist.all_to_all_single(out, t, out_splits, in_splits)
    want = []  # gloo cannot gather tensors of different sizes: made here
    for r in range(size):
        theirs = values(r, (sum(r + j + 1 for j in range(size)), 2), torch.float32)
        start = sum(r + j + 1 for j in range(rank))
        want.append(theirs[start:start + r + rank + 1])
    assert torch.equal(out, torch.cat(want))


def test_all_to_all_list(world, gloo, rank, size):
    """Tensors of different sizes for every pair of ranks."""
    inputs = [values(rank, (rank + j + 1,), torch.int64) for j in range(size)]
    outputs = [torch.zeros(j + rank + 1, dtype=torch.int64) for j in range(size)]
    dist.all_to_all(outputs, inputs)
    for j in range(size):
        assert torch.equal(outputs[j], values(j, (j + rank + 1,), torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16], ids=dtype_id)
def test_gather(world, gloo, rank, size, dtype):
    for root in range(size):
        t = values(rank, SHAPE, dtype)
        out = [torch.zeros(SHAPE, dtype=dtype) for _ in range(size)] if rank == root else None
        dist.gather(t, out, dst=root)
        if rank == root:
            for got, want in zip(out, ref.all_gather(t, gloo)):
                assert torch.equal(got, want)
        else:
            ref.all_gather(t, gloo)  # the same gloo calls on every rank


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16], ids=dtype_id)
def test_scatter(world, rank, size, dtype):
    for root in range(size):
        chunks = [values(root, SHAPE, dtype, salt=r) for r in range(size)] if rank == root else None
        out = torch.zeros(SHAPE, dtype=dtype)
        dist.scatter(out, chunks, src=root)
        assert torch.equal(out, values(root, SHAPE, dtype, salt=rank)), root


def test_barrier(world):
    for _ in range(3):
        dist.barrier()


def test_all_reduce_coalesced(world, gloo, rank):
    tensors = [values(rank, (n,), torch.float32, salt=n) for n in (1, 7, 33)]
    want = [ref.all_reduce(t, dist.ReduceOp.SUM, gloo) for t in tensors]
    dist.all_reduce_coalesced(tensors)
    for got, w in zip(tensors, want):
        assert torch.equal(got, w)


def test_all_gather_coalesced(world, gloo, rank, size):
    """Inputs of several shapes travel in one buffer (torch requires one dtype)."""
    inputs = [values(rank, (2, 3), torch.float32), values(rank, (5,), torch.float32),
              values(rank, (), torch.float32)]
    outputs = [[torch.zeros_like(t) for t in inputs] for _ in range(size)]
    dist.all_gather_coalesced(outputs, inputs)
    for i, t in enumerate(inputs):
        for r, want in enumerate(ref.all_gather(t, gloo)):
            assert torch.equal(outputs[r][i], want), (r, i)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bool, torch.complex64], ids=dtype_id)
def test_all_gather_coalesced_ragged(world, gloo, rank, size, dtype):
    """One smd group of allgathers: 1 element to 64 KiB, an empty tensor,
    a strided output, dtypes that travel as bytes."""
    shapes = [(1,), (0,), (16 << 10,), (4, 3), (7,)]
    inputs = [values(rank, s, dtype, salt=i) for i, s in enumerate(shapes)]
    outputs = [[torch.zeros(s, dtype=dtype) for s in shapes] for _ in range(size)]
    outputs[0][3] = torch.zeros((3, 4), dtype=dtype).t()  # not contiguous
    dist.all_gather_coalesced(outputs, inputs)
    for i, t in enumerate(inputs):
        # gloo dies of SIGFPE gathering an empty tensor: nothing to compare there.
        wants = ref.all_gather(t, gloo) if t.numel() else [t] * size
        for r, want in enumerate(wants):
            assert torch.equal(outputs[r][i], want), (r, i)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=dtype_id)
def test_all_gather_uneven(world, gloo, rank, size, dtype):
    """Outputs of different sizes (rank r sends sizes[r] elements, rank 1
    none): smd_allgatherv."""
    sizes = [0 if r == 1 else 3 * r + 2 for r in range(size)]
    t = values(rank, (sizes[rank],), dtype)
    out = [torch.full((n,), 9, dtype=dtype) for n in sizes]
    dist.all_gather(out, t)
    for got, want in zip(out, ref.all_gather_uneven(t, sizes, gloo)):
        assert torch.equal(got, want)


@pytest.mark.parametrize("op", ["sum", "max", "avg"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16], ids=dtype_id)
def test_reduce_scatter_uneven(world, gloo, rank, size, dtype, op):
    """Input r has rank r's output size, which differs per rank (rank 1's is
    empty): smd_reduce_scatterv."""
    sizes = [0 if r == 1 else 5 * r + 3 for r in range(size)]
    inputs = [values(rank, (n,), dtype, salt=r) for r, n in enumerate(sizes)]
    before = [t.clone() for t in inputs]
    out = torch.full((sizes[rank],), 7, dtype=dtype)
    dist.reduce_scatter(out, inputs, op=OPS[op])
    assert torch.equal(out, ref.reduce_scatter_uneven(inputs, OPS[op], gloo))
    assert all(torch.equal(a, b) for a, b in zip(inputs, before))  # inputs untouched


def test_coalesced_in_flight_with_others(world, gloo, rank, size):
    """Coalesced calls run on the group worker while other operations of the
    group run beside them; every Work ends with its own result."""
    tensors = [values(rank, (n,), torch.float32, salt=n) for n in (1, 300, 5000)]
    want_reduced = [ref.all_reduce(t, dist.ReduceOp.SUM, gloo) for t in tensors]
    single = values(rank, (64,), torch.float32)
    want_single = ref.all_reduce(single, dist.ReduceOp.MAX, gloo)
    inputs = [values(rank, (n,), torch.float32) for n in (2, 9)]
    gathered = [[torch.zeros_like(t) for t in inputs] for _ in range(size)]
    works = [dist.all_reduce_coalesced(tensors, async_op=True),
             dist.all_reduce(single, op=dist.ReduceOp.MAX, async_op=True),
             dist.all_gather_coalesced(gathered, inputs, async_op=True)]
    for w in works:
        w.wait()
    assert all(torch.equal(g, w) for g, w in zip(tensors, want_reduced))
    assert torch.equal(single, want_single)
    for i, t in enumerate(inputs):
        for r, want in enumerate(ref.all_gather(t, gloo)):
            assert torch.equal(gathered[r][i], want), (r, i)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_large_all_reduce(world, gloo, rank, dtype):
    """16 MiB (64 MiB heavy): smd's pipelined path, several rounds of its
    staging; bfloat16 through its float32 reduction."""
    nbytes = 64 << 20 if HEAVY else 16 << 20
    t = values(rank, (nbytes // torch.tensor([], dtype=dtype).element_size(),), dtype)
    want = ref.all_reduce(t, dist.ReduceOp.SUM, gloo)
    dist.all_reduce(t)
    assert torch.equal(t, want)


def test_empty_tensors(world, rank, size):
    t = torch.zeros(0)
    dist.all_reduce(t)
    dist.broadcast(t, 0)
    out = [torch.zeros(0) for _ in range(size)]
    dist.all_gather(out, t)
    assert all(o.numel() == 0 for o in out)


def sparse_of(rank, dense_dims=1, dtype=torch.float32):
    """Rank r's entries: rows r..2r (rank 0: none), some shared with others."""
    rows = torch.arange(rank, 2 * rank, dtype=torch.int64)
    indices = torch.stack([rows, rows % 3])
    values = torch.ones((rank,) + (2,) * dense_dims, dtype=dtype) * (rank + 1)
    return torch.sparse_coo_tensor(indices, values, (8, 3) + (2,) * dense_dims)


@pytest.mark.parametrize("dense_dims", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=dtype_id)
def test_all_reduce_sparse(world, rank, size, dense_dims, dtype):
    """SUM of sparse COO tensors of different numbers of entries (rank 0
    has none), as DDP sends sparse embedding gradients."""
    t = sparse_of(rank, dense_dims, dtype)
    dist.all_reduce(t)
    want = sum(sparse_of(r, dense_dims, dtype).to_dense() for r in range(size))
    assert t.is_sparse
    assert torch.equal(t.to_dense(), want)


def test_all_reduce_sparse_other_shape_fails_everywhere(world, pair, rank):
    import smd.torch

    t = sparse_of(rank) if rank else torch.sparse_coo_tensor(
        torch.zeros((2, 1), dtype=torch.int64), torch.ones(1, 2), (9, 3, 2))
    with pytest.raises(smd.torch.errors.MismatchError, match="another dtype, shape"):
        dist.all_reduce(t)
    dist.barrier()  # the group stays usable


def test_all_reduce_sparse_refuses_other_ops(world, rank):
    import smd.torch

    with pytest.raises(smd.torch.errors.NotSupportedError, match="SUM only"):
        dist.all_reduce(sparse_of(rank), op=dist.ReduceOp.MAX)
