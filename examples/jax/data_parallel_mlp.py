#!/usr/bin/env python3
"""data_parallel_mlp.py - data-parallel JAX training with gradients averaged
by smd inside jax.jit.

Every rank holds the same small MLP (16 inputs -> 32 tanh units -> 1, mean
squared error) and the same stream of global batches; each step it takes
its contiguous shard of the batch, computes its gradient, and
``smd.jax.allreduce(g, op="avg")`` (an XLA custom call inside the jitted
step, on XLA's stream on a GPU) averages the gradients before the SGD
update, so every replica applies the same update. At the end rank 0 trains
the same model alone on the same global batches (no communication) and
checks that both runs agree to float rounding: the summation order is the
only difference.

    smdrun -n 4 python3 examples/jax/data_parallel_mlp.py      # 4 ranks
    python3 examples/jax/data_parallel_mlp.py --steps 300     # 1 rank

Needs jax, and smd built with jaxlib installed (meson -Djax=enabled builds
bindings/jax/libsmd_jax.so; pip install . at the repository root puts it in
the package); with PYTHONPATH=bindings/python when smd is not installed.
`meson test -C build jax-data_parallel_mlp-np4` runs it on the CPU backend. Several ranks may share one GPU (XLA_PYTHON_CLIENT_MEM_FRACTION
keeps each from taking most of its memory). Exit status: 0 when the loss
fell and the runs agree, 1 when a check failed, 2 on bad usage.
"""

import argparse
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import smd  # noqa: E402
import smd.jax  # noqa: E402

N_IN, N_HIDDEN = 16, 32


def init_params(seed):
    rng = np.random.default_rng(seed)
    return {"w1": jnp.asarray(rng.normal(0, 0.3, (N_IN, N_HIDDEN)), jnp.float32),
            "b1": jnp.zeros(N_HIDDEN, jnp.float32),
            "w2": jnp.asarray(rng.normal(0, 0.3, (N_HIDDEN, 1)), jnp.float32),
            "b2": jnp.zeros(1, jnp.float32)}


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def batch(step, size, seed):
    """The global batch of `step`: the same on every rank."""
    rng = np.random.default_rng([seed, step])
    x = rng.normal(size=(size, N_IN)).astype(np.float32)
    y = np.sin(x[:, :4].sum(axis=1, keepdims=True)).astype(np.float32)
    return x, y


def make_step(lr, distributed):
    @jax.jit
    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        if distributed:  # each shard's mean gradient, averaged: the global batch's
            grads = jax.tree_util.tree_map(lambda g: smd.jax.allreduce(g, op="avg"), grads)
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return step


def train(params, steps, global_batch, rank, size, seed, lr, distributed):
    step = make_step(lr, distributed)
    shard = global_batch // size
    first = None
    for i in range(steps):
        x, y = batch(i, global_batch, seed)
        x, y = x[rank * shard:(rank + 1) * shard], y[rank * shard:(rank + 1) * shard]
        if first is None:
            first = float(loss(params, x, y))
        params = step(params, x, y)
    x, y = batch(steps, global_batch, seed)
    return params, first, float(loss(params, x, y))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64, help="global batch size")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with smd.init() as world:
        if args.batch % world.size:
            print(f"--batch {args.batch} is not a multiple of {world.size} ranks",
                  file=sys.stderr)
            return 2
        params, first, last = train(init_params(args.seed), args.steps, args.batch, world.rank,
                                    world.size, args.seed, args.lr, world.size > 1)
        ok = last < first
        if world.rank == 0:
            print(f"{world.size} ranks on {jax.devices()[0].platform}: loss {first:.4f} -> "
                  f"{last:.4f}")
            alone, _, _ = train(init_params(args.seed), args.steps, args.batch, 0, 1, args.seed,
                                args.lr, False)
            diff = max(float(jnp.max(jnp.abs(params[k] - alone[k]))) for k in params)
            print(f"largest parameter difference from one process: {diff:.3g}")
            ok = ok and diff < 1e-4
        ok = bool(world.allreduce(np.array([int(ok)], np.int32), op="min")[0])
        if world.rank == 0:
            print("ok" if ok else "FAILED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
