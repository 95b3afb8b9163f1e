#!/usr/bin/env python3
"""train_elastic.py - data-parallel training that survives a lost rank.

Every rank holds the same linear model (float64) and trains it with SGD on
the same stream of global batches; rank r of the current communicator takes
its contiguous shard of each batch, and one allreduce sums the shards'
gradients. At step --kill-step, world rank --victim SIGKILLs itself in the
middle of the step (after its gradient, before the allreduce). The
survivors' allreduce fails (smd.PeerFailureError, or smd.RevokedError when
another survivor revoked first); each survivor then

1. revokes the communicator, so every survivor leaves whatever call it is in;
2. shrinks it: a new communicator of the survivors (docs/ELASTIC.md);
3. agrees on the last step every survivor finished (a survivor may have
   finished the failed step: its allreduce can complete before the loss
   shows), rolls back to it and redoes the steps after it at the new size.

At step --grow-step the survivors grow back to the first world's size: rank
0 starts a replacement process (this script with --join; it finds the job's
store through SMD_MASTER_ADDR, SMD_MASTER_PORT and SMD_JOB_TOKEN, which
smdrun sets and the replacement inherits), every survivor calls
comm.grow(1), the replacement smd.join(), and the grown communicator of 4
(survivors first, the replacement last) broadcasts the parameters and the
step to the replacement and trains on (docs/ELASTIC.md, Grow).

The global batch does not depend on the number of ranks, so the result is
the same training as a run that never lost a rank (or one at 3 ranks from
that step and at 4 again later): at the end rank 0 retrains alone on the
same batches and checks the parameters agree to 1e-9 (relative; only the
order of the float additions differs).

    smdrun -n 4 --grace 60 /usr/bin/python3 examples/elastic/train_elastic.py

(with PYTHONPATH=bindings/python when smd is not installed). smdrun's exit
status is 137 (128 + SIGKILL: it reports the killed rank); each survivor
and the replacement print "elastic check passed" and exit 0. --victim -1
loses no rank (and so grows by none); --grow-step -1 stays at 3.
"""

import argparse
import os
import signal
import subprocess
import sys

import numpy as np

import smd

DIM, BATCH, LR = 8, 96, 0.05


def say(line):
    """One write per line: the replacement shares rank 0's stdout, and
    print() writes the text and its newline separately, so two processes'
    lines could interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def batch(step):
    """The global batch of one step: the same on every rank, whatever the size."""
    rng = np.random.default_rng(1000 + step)
    x = rng.standard_normal((BATCH, DIM))
    w_true = np.linspace(-1.0, 1.0, DIM)
    return x, x @ w_true + 0.5 + 0.01 * rng.standard_normal(BATCH)


def gradient(params, x, y):
    """Sum over the rows of x of the squared error's gradient (weights, bias)."""
    err = x @ params[:DIM] + params[DIM] - y
    return np.concatenate([x.T @ err, [err.sum()]])


def shard(rank, size):
    lo = BATCH * rank // size
    return lo, BATCH * (rank + 1) // size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--kill-step", type=int, default=10)
    ap.add_argument("--victim", type=int, default=2, help="world rank killed (-1: none)")
    ap.add_argument("--grow-step", type=int, default=20,
                    help="step at which the survivors grow back to the first size (-1: never)")
    ap.add_argument("--join", action="store_true", help="be the replacement process")
    args = ap.parse_args()

    replacement = None  # rank 0's replacement process, waited for at the end
    if args.join:
        world = smd.join()
        comm = world
        state = comm.broadcast(np.zeros(DIM + 2), root=0)
        params, finished = state[:DIM + 1].copy(), int(state[DIM + 1])
        say(f"replacement: joined as rank {comm.rank} of {comm.size} at step {finished + 1}")
    else:
        world = smd.init()
        comm = world
        params = np.zeros(DIM + 1)
        finished = -1                # the last step this rank finished
    first_size = 4 if args.join else world.size
    before_last = params.copy()  # the parameters before the last finished step
    while finished + 1 < args.steps:
        step = finished + 1
        if step == args.grow_step and comm.size < first_size and not args.join:
            missing = first_size - comm.size
            if comm.rank == 0:
                replacement = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--join",
                                                "--steps", str(args.steps), "--grow-step", "-1"])
            grown = comm.grow(missing)
            if comm is not world:
                comm.destroy()
            comm = grown
            comm.broadcast(np.concatenate([params, [finished]]), root=0)
            say(f"step {step}: grown to {comm.size} ranks, rank {comm.rank}")
        x, y = batch(step)
        lo, hi = shard(comm.rank, comm.size)
        grad = gradient(params, x[lo:hi], y[lo:hi])
        if step == args.kill_step and world.rank == args.victim:
            os.kill(os.getpid(), signal.SIGKILL)  # mid-step: the others are in the allreduce
        try:
            comm.allreduce(grad)
        except (smd.PeerFailureError, smd.RevokedError) as e:
            comm.revoke()
            shrunk, _ = comm.shrink()
            if comm is not world:
                comm.destroy()
            comm = shrunk
            # Survivors differ by at most one finished step (the next one
            # cannot finish without the lost rank): all go back to the lowest.
            lowest = int(comm.allreduce(np.array([finished], np.int64), op="min")[0])
            if lowest < finished:
                params, finished = before_last, lowest
            say(f"step {step}: {type(e).__name__}; going on as rank {comm.rank} of {comm.size} "
                f"from step {finished + 1}")
            continue
        before_last = params.copy()
        params = params - LR * grad / BATCH
        finished = step

    ok = True
    if comm.rank == 0:
        alone = np.zeros(DIM + 1)
        for step in range(args.steps):
            x, y = batch(step)
            alone = alone - LR * gradient(alone, x, y) / BATCH
        rel = np.abs(params - alone).max() / np.abs(alone).max()
        ok = rel < 1e-9
        say(f"{comm.size} ranks at the end; params vs one process: max relative difference "
            f"{rel:.1e} ({'elastic check passed' if ok else 'FAIL'})")
    flags = comm.allreduce(np.array([1 if ok else 0], np.int32), op="min")
    comm.barrier()  # world rank 0 serves the store: nobody leaves before all are done
    rank = comm.rank
    if comm is not world:
        comm.destroy()
    world.destroy()
    if rank != 0 and flags[0]:
        say(f"{'replacement: ' if args.join else ''}elastic check passed")
    if replacement is not None and replacement.wait() != 0:
        say(f"the replacement exited with {replacement.returncode}")
        return 1
    return 0 if flags[0] else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except smd.Error as e:
        print(f"smd error: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
