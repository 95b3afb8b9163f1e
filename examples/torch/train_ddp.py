#!/usr/bin/env python3
"""train_ddp.py - PyTorch DistributedDataParallel over smd, checked against gloo.

Every rank joins the default process group with backend "smd" (``import
smd.torch`` registers it) and a second group over the same ranks with
backend "gloo". It builds two identical MLPs (same seed), wraps one in DDP
over smd and the other in DDP over gloo, and trains both with SGD on the
same generated data: each step, rank r takes its own slice of a global batch
drawn from a fixed random "teacher" network plus noise. DDP averages the
gradients across ranks (one allreduce per gradient bucket, overlapped with
the backward pass), so both replicas should follow the same trajectory.

Checks (exit status 1 when one fails): the loss fell, and the losses of
every step and the final parameters of the smd run equal the gloo run's up
to float rounding (the ranks' gradients may be summed in another order).

    smdrun -n 4 /usr/bin/python3 examples/torch/train_ddp.py      # smd's launcher
    torchrun --nproc-per-node 4 examples/torch/train_ddp.py       # torch's
    python3 examples/torch/train_ddp.py                           # 1 rank

(with PYTHONPATH=bindings/python when smd is not installed). Both launchers
set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, which init_process_group
reads (env://). Options: --steps, --hidden, --layers, --batch, --hook fusion
(smd's DDP comm hook, smd.torch.comm_hooks); rank 0 prints the median step
time of both runs.

Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage.
"""

import argparse
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import smd.torch  # noqa: F401  (registers the backend "smd")
from smd.torch.comm_hooks import fusion_hook

DATA_SEED = 20260101
INIT_SEED = 7
# |smd - gloo| <= TOLERANCE * max(1, |gloo|), for losses and parameters.
TOLERANCE = 1e-4
# The last loss must be at most the first divided by this.
LOSS_DROP = 2.0


def options(argv=None):
    p = argparse.ArgumentParser(description="DDP over smd vs gloo on generated data")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch", type=int, default=32, help="global batch (split over ranks)")
    p.add_argument("--inputs", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=3, help="hidden layers")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--hook", choices=["none", "fusion"], default="none",
                   help="fusion: smd's DDP comm hook (smd.torch.comm_hooks.fusion_hook) on the smd run")
    return p.parse_args(argv)


def mlp(n_in, hidden, layers, n_out=1):
    """The model: `layers` tanh hidden layers, initialised from INIT_SEED."""
    torch.manual_seed(INIT_SEED)
    parts, width = [], n_in
    for _ in range(layers):
        parts += [nn.Linear(width, hidden), nn.Tanh()]
        width = hidden
    parts.append(nn.Linear(width, n_out))
    return nn.Sequential(*parts)


class Data:
    """Global batches from a fixed random teacher; rank r's share is rows
    [r*b, (r+1)*b) of each, so the ranks together see the whole batch."""

    def __init__(self, n_in, batch, rank, size):
        if batch % size:
            raise SystemExit(f"--batch {batch} must be a multiple of the world size {size}")
        self.gen = torch.Generator().manual_seed(DATA_SEED)
        self.teacher = torch.randn(n_in, 1, generator=self.gen)
        self.n_in, self.batch = n_in, batch
        self.share = slice(rank * (batch // size), (rank + 1) * (batch // size))

    def next(self):
        x = torch.randn(self.batch, self.n_in, generator=self.gen)
        y = torch.tanh(x @ self.teacher) + 0.05 * torch.randn(self.batch, 1, generator=self.gen)
        return x[self.share], y[self.share]


def train(model, data, steps, lr):
    """SGD steps; returns the global loss of every step (the mean over ranks
    of each rank's mean squared error, computed with one allreduce per step
    on the model's own process group) and the median seconds per step."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses, times = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        x, y = data.next()
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total, group=model.process_group)
        losses.append(total.item() / dist.get_world_size(model.process_group))
        times.append(time.perf_counter() - t0)
    return losses, sorted(times)[len(times) // 2]


def close(a, b):
    return abs(a - b) <= TOLERANCE * max(1.0, abs(b))


def init():
    """The default group over smd: env:// under a launcher, else one rank
    through a file store."""
    if "RANK" in os.environ:
        dist.init_process_group("smd")
        return None
    store_dir = tempfile.TemporaryDirectory()
    dist.init_process_group("smd", init_method="file://" + os.path.join(store_dir.name, "store"),
                            rank=0, world_size=1)
    return store_dir


def main(argv=None):
    opts = options(argv)
    store_dir = init()  # noqa: F841  (kept until the end: the store's file lives in it)
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")

    runs = {}
    for name, group in (("smd", dist.group.WORLD), ("gloo", gloo)):
        model = DDP(mlp(opts.inputs, opts.hidden, opts.layers), process_group=group)
        if name == "smd" and opts.hook == "fusion":
            model.register_comm_hook(None, fusion_hook)
        data = Data(opts.inputs, opts.batch, rank, size)
        runs[name] = (model, train(model, data, opts.steps, opts.lr))

    (smd_model, (smd_losses, smd_step)), (gloo_model, (gloo_losses, gloo_step)) = runs["smd"], runs["gloo"]
    failures = []
    if not smd_losses[-1] * LOSS_DROP <= smd_losses[0]:
        failures.append(f"the loss did not fall enough: {smd_losses[0]:.4f} -> {smd_losses[-1]:.4f}")
    bad_steps = [i for i, (a, b) in enumerate(zip(smd_losses, gloo_losses)) if not close(a, b)]
    if bad_steps:
        i = bad_steps[0]
        failures.append(f"losses differ from gloo's at {len(bad_steps)} steps, first at step {i}: "
                        f"{smd_losses[i]!r} vs {gloo_losses[i]!r}")
    worst = max((p - q).abs().max().item() / max(1.0, q.abs().max().item())
                for p, q in zip(smd_model.parameters(), gloo_model.parameters()))
    if worst > TOLERANCE:
        failures.append(f"final parameters differ from gloo's by {worst:.3g} (relative)")

    if rank == 0:
        print(f"train_ddp: {size} ranks, {opts.steps} steps, loss {smd_losses[0]:.4f} -> "
              f"{smd_losses[-1]:.4f} (gloo: {gloo_losses[0]:.4f} -> {gloo_losses[-1]:.4f}), "
              f"largest parameter difference {worst:.2g}; median step {smd_step * 1e3:.2f} ms "
              f"(hook {opts.hook}) vs gloo {gloo_step * 1e3:.2f} ms")
    for f in failures:
        print(f"rank {rank}: FAILED: {f}", file=sys.stderr)
    # torch 1.13's gloo group deadlocks when it is destroyed while one of its
    # worker threads still releases a finished operation's tensors: that
    # worker waits for the GIL, which the destroying thread holds while it
    # joins the worker. Let the workers finish (sleep releases the GIL) and
    # drop the models while the interpreter is whole.
    dist.barrier(group=gloo)
    time.sleep(0.2)
    del runs, smd_model, gloo_model
    dist.destroy_process_group()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
