#!/usr/bin/env python3
"""train_sharded.py - sharded data parallelism (SMP's sdp, ZeRO-3) with
smd.torch.ShardedDataParallel: a model whose parameters and optimizer
state do not fit a per-rank memory budget, trained anyway.

The script sets a per-rank budget for parameter memory: the bytes of the
whole model's parameters and Adam state (three copies of every parameter)
divided by --over (default 3). No rank could hold the model and its
optimizer. ShardedDataParallel keeps on each rank only its shard of every
parameter (and Adam, given ``model.parameters()``, keeps state only for
those), and gathers whole layers just for their forward and backward,
bounded by max_live_parameters: what is left of the budget after the
shards and their Adam state. Each rank trains on its own slice of data
from a fixed random "teacher" network.

    smdrun -n 4 /usr/bin/python3 examples/torch/train_sharded.py
    smdrun -n 4 /usr/bin/python3 examples/torch/train_sharded.py --compare-ddp \\
        --width 2048 --layers 12 --steps 8        # about 50 M parameters

(with PYTHONPATH=bindings/python when smd is not installed; torchrun works
too). Rank 0 prints the budget, the peak bytes gathered, the resident
parameter memory (shards + Adam state + gathered) against the budget, the
median step time and the fetch stalls (fetches that had to wait for their
gather: 0 when prefetching hides them all). --compare-ddp also trains the
same model with DistributedDataParallel over smd (whole model on every
rank: the budget does not hold there) and prints the step-time ratio.
torch 1.13's FullyShardedDataParallel runs on CUDA only, so it is not
compared on CPU.

Checks (exit status 1 when one fails): the loss of the global batch fell
from the first step to the last, and the resident
parameter memory stayed within the budget on every rank.
Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage.
"""

import argparse
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import smd.torch  # noqa: F401  (registers the backend "smd")
from smd.torch import ShardedDataParallel

DATA_SEED = 20260101
INIT_SEED = 7
FLOAT_BYTES = 4
ADAM_COPIES = 3  # the parameter, exp_avg, exp_avg_sq


def options(argv=None):
    p = argparse.ArgumentParser(description="ShardedDataParallel over smd within a memory budget")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=32, help="global batch (split over ranks)")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=8, help="hidden layers")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--over", type=float, default=3.0,
                   help="the model's parameters + Adam state are this many times the budget")
    p.add_argument("--persistence", type=int, default=4096,
                   help="sdp_param_persistence_threshold (elements)")
    p.add_argument("--compare-ddp", action="store_true", help="also time DDP on the same model")
    args = p.parse_args(argv)
    if min(args.steps, args.batch, args.width, args.layers) < 1 or args.over <= 1:
        p.error("steps, batch, width and layers must be positive and --over above 1")
    return args


def make_model(args):
    torch.manual_seed(INIT_SEED)
    layers = [nn.Linear(args.width, args.width) for _ in range(args.layers)]
    body = [m for layer in layers for m in (layer, nn.Tanh())]
    return nn.Sequential(*body, nn.Linear(args.width, 1))


def data(args, rank, size):
    """This rank's slice of every step's global batch, labelled by a fixed
    teacher."""
    gen = torch.Generator().manual_seed(DATA_SEED)
    teacher = torch.randn(args.width, 1, generator=gen) / args.width ** 0.5
    per_rank = max(1, args.batch // size)
    for _ in range(args.steps):
        x = torch.randn(per_rank * size, args.width, generator=gen)[rank * per_rank:][:per_rank]
        yield x, torch.tanh(x @ teacher)


def train(net, args, rank, size):
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    losses, times = [], []
    for x, y in data(args, rank, size):
        start = time.perf_counter()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return losses, times, opt


def state_bytes(opt):
    """Bytes of the optimizer's state tensors on this rank."""
    return sum(t.numel() * t.element_size() for s in opt.state.values()
               for t in s.values() if torch.is_tensor(t) and t.dim() > 0)


def main(argv=None):
    args = options(argv)
    dist.init_process_group("smd")
    rank, size = dist.get_rank(), dist.get_world_size()
    model = make_model(args)
    counts = [p.numel() for p in model.parameters()]
    params = sum(counts)
    persistent = sum(c for c in counts if c < args.persistence)
    budget = int(ADAM_COPIES * params * FLOAT_BYTES / args.over)
    # The shards and their Adam state come first; gathering gets the rest.
    owned_estimate = ADAM_COPIES * FLOAT_BYTES * ((params - persistent) / size + persistent + len(counts))
    max_live = int((budget - owned_estimate) / FLOAT_BYTES)
    largest = max((c for c in counts if c >= args.persistence), default=0)
    if max_live < largest:
        if rank == 0:
            print(f"train_sharded: the budget ({budget} B) leaves room for {max_live} gathered "
                  f"elements after the shards, less than the largest layer ({largest}): use more "
                  f"ranks or a smaller --over", file=sys.stderr)
        dist.destroy_process_group()
        return 2

    sdp = ShardedDataParallel(model, max_live_parameters=max_live,
                              param_persistence_threshold=args.persistence)
    losses, times, opt = train(sdp, args, rank, size)
    stats = sdp.stats()
    resident = stats["owned_bytes"] + state_bytes(opt) + stats["peak_live_bytes"]
    # The loss of the global batch (every rank's slice is small and noisy).
    global_losses = torch.tensor(losses, dtype=torch.float64)
    dist.all_reduce(global_losses)
    global_losses /= size
    # Ranks whose bound broke (SUM over ranks).
    failed = torch.tensor([int(resident > budget or stats["peak_live_elements"] > max_live)])
    dist.all_reduce(failed)
    fell = bool(global_losses[-1] < global_losses[0])
    verdict = int(int(failed) > 0 or not fell)
    step = statistics.median(times[1:] if len(times) > 1 else times)

    if rank == 0:
        print(f"train_sharded: {size} ranks, {params} parameters ({persistent} persistent), "
              f"{args.steps} steps; loss {float(global_losses[0]):.4f} -> "
              f"{float(global_losses[-1]):.4f}")
        print(f"  budget per rank       {budget} B (the model + Adam state: "
              f"{ADAM_COPIES * params * FLOAT_BYTES} B = {args.over:g}x)")
        print(f"  max_live_parameters   {max_live} elements; peak gathered "
              f"{stats['peak_live_elements']} elements = {stats['peak_live_bytes']} B")
        print(f"  resident on rank 0    {resident} B = shards {stats['owned_bytes']} + Adam state "
              f"{state_bytes(opt)} + peak gathered {stats['peak_live_bytes']}")
        print(f"  step time (median)    {step * 1e3:.1f} ms; fetches {stats['fetches']}, "
              f"prefetches {stats['prefetches']}, fetch stalls {stats['fetch_stalls']}, "
              f"cache hits {stats['cache_hits']}, evictions {stats['evictions']}")
        holds = "holds" if int(failed) == 0 else f"FAILED on {int(failed)} ranks"
        print(f"  bound {holds}: resident <= budget and peak gathered <= max_live_parameters")
        if not fell:
            print("  the loss did not fall (more --steps, or a smaller --lr)")

    if args.compare_ddp:
        ddp = DDP(make_model(args))
        _, ddp_times, _ = train(ddp, args, rank, size)
        ddp_step = statistics.median(ddp_times[1:] if len(ddp_times) > 1 else ddp_times)
        if rank == 0:
            print(f"  DDP step time         {ddp_step * 1e3:.1f} ms (whole model + Adam state "
                  f"{ADAM_COPIES * params * FLOAT_BYTES} B per rank); sharded/DDP = "
                  f"{step / ddp_step:.2f}")
            print("  torch FSDP            not compared: torch 1.13's FullyShardedDataParallel "
                  "needs CUDA")
    dist.destroy_process_group()
    return verdict


if __name__ == "__main__":
    sys.exit(main())
