#!/usr/bin/env python3
"""train_dp.py - data-parallel training through smd's Python binding.

The Python twin of examples/c/train_dp.c, with numpy for the model. Every
rank holds a full copy of a small MLP (16 inputs -> 32 tanh hidden units ->
1 output, mean squared error) and trains it with SGD on the same stream of
global batches. Each step, rank r takes its contiguous shard of the global
batch, computes the gradient of its shard, and one allreduce (sum, in
place) over a single flat buffer combines the shards, as PyTorch's
DistributedDataParallel does with its gradient buckets. Every rank then
applies the same update to the same parameters, so the replicas stay
identical without exchanging parameters again.

At the end, rank 0 retrains the model alone (no communication) on the same
global batches and checks that both runs give the same parameters, up to
float rounding: the order in which floats are summed is the only
difference between the two.

    smdrun -n 4 /usr/bin/python3 examples/python/train_dp.py   # 4 ranks
    python3 -m smd.run -n 4 examples/python/train_dp.py         # the same
    python3 examples/python/train_dp.py --steps 500             # 1 rank

(with PYTHONPATH=bindings/python when smd is not installed). The smd calls
to look at: smd.init, world.rank/size, world.broadcast, world.allreduce,
and the ``with`` block that destroys the world (aborting it first if an
exception escapes, so the other ranks stop at once). Everything else is the
model.

Exit status: 0 when the loss fell and both checks passed, 1 when a check
failed, 2 on bad usage or an smd error.
"""

import argparse
import sys

import numpy as np

import smd

N_IN, N_HIDDEN, N_TEACHER = 16, 32, 4

# All parameters live in ONE flat float32 buffer, so one collective moves
# them all; these are the offsets of each tensor in it.
OFF_W1 = 0                            # [N_HIDDEN, N_IN] input -> hidden
OFF_B1 = OFF_W1 + N_HIDDEN * N_IN     # [N_HIDDEN]
OFF_W2 = OFF_B1 + N_HIDDEN            # [N_HIDDEN] hidden -> output
OFF_B2 = OFF_W2 + N_HIDDEN            # [1]
N_PARAMS = OFF_B2 + 1
# The gradient buffer has one more slot: the shard's summed loss rides along
# in the same allreduce, so reporting the global loss costs no collective.
SLOT_LOSS = N_PARAMS
N_GRAD = N_PARAMS + 1

DATA_SEED = 0x5EED0FDA7A
INIT_SEED = 0x1417A1B0C5
# max |distributed - single| must be at most EQ_TOLERANCE * max(1, max |p|).
EQ_TOLERANCE = 1e-4
# The loss must fall at least this many times from the first step.
LOSS_DROP = 4.0

MASK64 = (1 << 64) - 1


# ---- deterministic random numbers (splitmix64, as in the C example) ---------

def splitmix64(state):
    """One step for an array of uint64 states: (new states, outputs)."""
    with np.errstate(over="ignore"):
        state = state + np.uint64(0x9E3779B97F4A7C15)
        z = state
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return state, z ^ (z >> np.uint64(31))


def uniform_pm1(bits):
    """Uniform in [-1, 1) from the top 53 bits."""
    return (bits >> np.uint64(11)).astype(np.float64) * (2.0 / 9007199254740992.0) - 1.0


def stream(seed, n):
    """The first n numbers of the sequence seeded with `seed`, in [-1, 1)."""
    state = np.array([seed & MASK64], np.uint64)
    out = np.empty(n)
    for i in range(n):
        state, bits = splitmix64(state)
        out[i] = uniform_pm1(bits)[0]
    return out


# ---- the dataset: a fixed "teacher" network ----------------------------------

class Teacher:
    """y = sum_j c_j * tanh(a_j . x + d_j): a small random tanh network the
    student can learn, so the loss really falls."""

    def __init__(self):
        draws = stream(DATA_SEED ^ 0x7EAC4E7, N_TEACHER * (N_IN + 2)).reshape(N_TEACHER, N_IN + 2)
        self.a = draws[:, :N_IN]
        self.d = draws[:, N_IN] * 0.5
        self.c = draws[:, N_IN + 1]

    def samples(self, first, n):
        """Samples first .. first+n-1 of the endless stream: x [n, N_IN]
        float32 and y [n] float32. Random access by index lets each rank
        make only its shard while the reference makes the whole batch: the
        numbers are the same."""
        index = np.arange(first, first + n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            state = np.uint64(DATA_SEED) + index * np.uint64(0xD1B54A32D192ED03)
        state, _ = splitmix64(state)  # decorrelate neighbouring indices
        x = np.empty((n, N_IN), np.float32)
        for k in range(N_IN):
            state, bits = splitmix64(state)
            x[:, k] = uniform_pm1(bits)
        y = np.tanh(x.astype(np.float64) @ self.a.T + self.d) @ self.c
        return x, y.astype(np.float32)


# ---- the model -----------------------------------------------------------------

def init_params():
    p = np.zeros(N_PARAMS, np.float32)  # biases start at 0
    draws = stream(INIT_SEED, N_HIDDEN * N_IN + N_HIDDEN)
    p[OFF_W1:OFF_B1] = draws[:N_HIDDEN * N_IN] / np.sqrt(N_IN)
    p[OFF_W2:OFF_B2] = draws[N_HIDDEN * N_IN:] / np.sqrt(N_HIDDEN)
    return p


def accumulate(p, x, y, grad):
    """Forward and backward for a shard: adds the summed d(err^2)/dp to grad
    and the summed err^2 to grad[SLOT_LOSS]. Sums, not means: dividing by
    the GLOBAL batch size happens once after the allreduce, which makes a
    shard's contribution independent of how many ranks share the batch."""
    w1 = p[OFF_W1:OFF_B1].reshape(N_HIDDEN, N_IN)
    b1, w2, b2 = p[OFF_B1:OFF_W2], p[OFF_W2:OFF_B2], p[OFF_B2]
    h = np.tanh(x @ w1.T + b1)                      # [n, N_HIDDEN]
    err = h @ w2 + b2 - y                           # [n]
    dout = 2.0 * err
    dz = np.outer(dout, w2) * (1.0 - h * h)         # tanh'
    grad[OFF_W1:OFF_B1] += (dz.T @ x).ravel()
    grad[OFF_B1:OFF_W2] += dz.sum(0)
    grad[OFF_W2:OFF_B2] += h.T @ dout
    grad[OFF_B2] += dout.sum()
    grad[SLOT_LOSS] += err @ err


# ---- training --------------------------------------------------------------------

def train(args, teacher, params, comm, rank, size, verbose):
    """Train `params` in place. With comm None this is the single-process
    run (rank 0 of 1); otherwise this rank trains on its shard and the
    allreduce makes the step global. Same code either way, which is the
    point of the comparison. Returns the first and the last reported loss."""
    shard = args.batch // size
    grad = np.zeros(N_GRAD, np.float32)
    window, first_loss, last_loss = [], None, None
    for step in range(args.steps):
        grad[:] = 0
        x, y = teacher.samples(step * args.batch + rank * shard, shard)
        accumulate(params, x, y, grad)
        # Sum the shards' gradients (and losses) over all ranks, in place:
        # afterwards every rank holds the gradient sum of the global batch.
        # ("avg" would divide by the ranks, not by the samples.)
        if comm is not None:
            comm.allreduce(grad, "sum")
        scale = np.float32(1.0 / args.batch)
        params -= np.float32(args.lr) * grad[:N_PARAMS] * scale
        window.append(float(grad[SLOT_LOSS]) * float(scale))
        if step == 0 or (step + 1) % args.log_every == 0 or step == args.steps - 1:
            mean = sum(window) / len(window)
            first_loss = mean if first_loss is None else first_loss
            last_loss = mean
            if verbose:
                print(f"step {step + 1} loss {mean:.4f}", flush=True)
            window = []
    return first_loss, last_loss


def parse_args(argv):
    parser = argparse.ArgumentParser(description="data-parallel MLP training through smd")
    parser.add_argument("--steps", type=int, default=1000, help="SGD steps (default 1000)")
    parser.add_argument("--batch", type=int, default=64,
                        help="global batch, divisible by the number of ranks (default 64)")
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    parser.add_argument("--log-every", type=int, default=100,
                        help="print the loss every K steps (default 100)")
    args = parser.parse_args(argv)
    if min(args.steps, args.batch, args.log_every) < 1 or not args.lr > 0:
        parser.error("--steps, --batch, --log-every and --lr must be positive")
    return args


def run(args):
    # 1. Form the world from the launcher's environment (smdrun, torchrun,
    #    ...; a one-rank world without one). Leaving the with block destroys
    #    it, and aborts it first if an exception escapes.
    with smd.init() as world:
        rank, size = world.rank, world.size
        # Every rank checks the same condition, so they all stop together.
        if args.batch % size:
            if rank == 0:
                print(f"train_dp.py: --batch {args.batch} is not divisible by the {size} ranks",
                      file=sys.stderr)
            return 2
        if rank == 0:
            print(f"train_dp.py: {size} rank(s), MLP {N_IN}-{N_HIDDEN}-1 ({N_PARAMS} parameters), "
                  f"{args.steps} steps, global batch {args.batch} ({args.batch // size} per rank), "
                  f"lr {args.lr:g}", flush=True)
        teacher = Teacher()

        # 2. Same starting point everywhere: rank 0 initialises the
        #    parameters and broadcasts them in place (the others start from
        #    zeros, to show that the broadcast is what sets them).
        params = init_params() if rank == 0 else np.zeros(N_PARAMS, np.float32)
        world.broadcast(params, root=0)
        initial = params.copy()

        # 3. Train: one allreduce per step.
        first_loss, last_loss = train(args, teacher, params, world, rank, size, rank == 0)

        # 4. Checks. The replicas must be identical: compare with rank 0's
        #    copy (a broadcast into a separate array: out=) and take the largest
        #    difference over ranks (an allreduce with max).
        root_params = world.broadcast(params, root=0, out=np.empty_like(params))
        diff = np.array([np.abs(params - root_params).max()], np.float32)
        replica_diff = float(world.allreduce(diff, "max")[0])

        # The reference: rank 0 trains alone from the same initial
        # parameters on the same global batches. The others wait for its
        # verdict in the broadcast below, so every rank exits alike.
        failed = np.zeros(1, np.int32)
        if rank == 0:
            single = initial.copy()
            train(args, teacher, single, None, 0, 1, False)
            max_param = max(1.0, float(np.abs(single).max()))
            eq_diff = float(np.abs(params.astype(np.float64) - single).max())
            tol = EQ_TOLERANCE * max_param
            eq_ok = eq_diff <= tol  # False for NaN too
            loss_ok = last_loss * LOSS_DROP < first_loss
            rep_ok = replica_diff == 0.0
            verdict = {True: "PASS", False: "FAIL"}
            print(f"replicas: max |difference| between ranks = {replica_diff:.1e}: "
                  f"{verdict[rep_ok]}")
            print(f"equality check: max |difference| = {eq_diff:.1e} (tolerance {tol:.1e}): "
                  f"{verdict[eq_ok]}")
            print(f"loss: {first_loss:.4f} -> {last_loss:.4f} (must fall {LOSS_DROP:g}x): "
                  f"{verdict[loss_ok]}", flush=True)
            failed[0] = not (eq_ok and loss_ok and rep_ok)
        world.broadcast(failed, root=0)
        return 1 if failed[0] else 0


def main(argv=None):
    args = parse_args(argv)
    try:
        return run(args)
    except smd.Error as e:
        # The library's message says which call, which rank and which peer.
        print(f"train_dp.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
