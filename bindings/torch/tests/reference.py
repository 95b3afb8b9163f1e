"""What gloo says an operation gives, for checking smd against it.

gloo (torch 1.13) lacks some of what smd does: bfloat16, bool and int16
tensors, ReduceOp.AVG, reduce_scatter. Where it lacks the dtype, gloo
computes in a carrier dtype that holds the test values exactly (float64 or
int64) and the result is cast back, rounding once, as smd does (it reduces
16-bit floats in float32 and rounds once per element). AVG is gloo's SUM
divided by the world size (truncated toward zero for integers, as smd's
header says); reduce_scatter is gloo's allreduce of the whole input, of
which each rank keeps its block.
"""

import torch
import torch.distributed as dist

GLOO_DTYPES = {torch.int8, torch.uint8, torch.int32, torch.int64, torch.float16, torch.float32,
               torch.float64}


def carrier(dtype):
    if dtype in GLOO_DTYPES:
        return dtype
    return torch.float64 if dtype.is_floating_point or dtype.is_complex else torch.int64


def values(rank, shape, dtype, salt=0):
    """Small integers (1..5) that depend on the rank and position: sums,
    products (of up to 4 ranks) and averages stay exact in every dtype."""
    n = 1
    for s in shape:
        n *= s
    v = (torch.arange(n, dtype=torch.int64) + 3 * rank + salt) % 5 + 1
    if dtype == torch.bool:
        return (v % 2 == 0).reshape(shape)
    return v.to(dtype).reshape(shape)


def all_reduce(t, op, group):
    """gloo's allreduce of `t` (a copy) with `op` over `group`."""
    size = dist.get_world_size(group)
    work = t.to(carrier(t.dtype), copy=True)  # never `t` itself
    if t.dtype == torch.bool:
        # any / all, which is what smd makes of SUM / PRODUCT on bool
        op = {dist.ReduceOp.SUM: dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT: dist.ReduceOp.MIN}.get(op, op)
    if op == dist.ReduceOp.AVG:
        dist.all_reduce(work, op=dist.ReduceOp.SUM, group=group)
        work = torch.div(work, size, rounding_mode="trunc") if not work.is_floating_point() \
            else work / size
    else:
        dist.all_reduce(work, op=op, group=group)
    return work.to(t.dtype)


def reduce_scatter(inputs, op, group):
    """gloo's result of reduce_scatter of the list `inputs` (one per rank)."""
    whole = all_reduce(torch.stack(inputs), op, group)
    return whole[dist.get_rank(group)]


def all_gather(t, group):
    """Every rank's `t`, in rank order, as gloo gathers them."""
    work = t.to(carrier(t.dtype), copy=True)  # never `t` itself
    out = [torch.empty_like(work) for _ in range(dist.get_world_size(group))]
    dist.all_gather(out, work, group=group)
    return [o.to(t.dtype) for o in out]


def broadcast(t, root, group):
    work = t.to(carrier(t.dtype), copy=True)  # never `t` itself
    dist.broadcast(work, root, group=group)
    return work.to(t.dtype)


def reduce_scatter_uneven(inputs, op, group):
    """gloo's result of reduce_scatter when input r (rank r's block) has its
    own size: the allreduce of all blocks side by side, this rank's part."""
    whole = all_reduce(torch.cat([t.reshape(-1) for t in inputs]), op, group)
    rank = dist.get_rank(group)
    start = sum(t.numel() for t in inputs[:rank])
    return whole.narrow(0, start, inputs[rank].numel()).reshape(inputs[rank].shape)


def all_gather_uneven(t, sizes, group):
    """Every rank's `t` (rank r's has sizes[r] elements), as gloo gathers
    them padded to the largest and trimmed back."""
    longest = max(sizes)
    padded = torch.zeros(longest, dtype=carrier(t.dtype))
    padded[:t.numel()] = t.reshape(-1).to(padded.dtype)
    return [p[:n].to(t.dtype) for p, n in zip(all_gather(padded, group), sizes)]
