"""One rank of a 2-rank job in which rank 1 goes wrong in the way argv[1]
names, inside a jitted smd.jax.allreduce. Every rank that is still alive
prints "raised <type>: <message>" and exits 3 (or "no error" and 0)."""

import os
import sys
import time

import jax
import jax.numpy as jnp

import smd.jax as sj

world = sj.initialize()
how = sys.argv[1]
step = jax.jit(sj.allreduce)
x = jnp.ones(4, jnp.float32)
try:
    if how == "count":
        x = jnp.ones(4 + world.rank, jnp.float32)
    elif how == "dtype":
        x = x.astype(jnp.int32) if world.rank else x
    elif how == "dead" and world.rank == 1:
        os._exit(7)
    elif how == "late" and world.rank == 1:
        time.sleep(float(os.environ["SMD_TIMEOUT"]) + 3)  # past the others' deadline
        sys.exit(0)
    step(x).block_until_ready()
    print("no error", flush=True)
except Exception as e:  # what a user's script sees
    print(f"raised {type(e).__name__}: {e}", flush=True)
    sys.exit(3)
