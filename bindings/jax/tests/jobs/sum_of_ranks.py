"""One process of a job launched without smdrun: argv[1] says how it learns
its rank ("env": torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT;
"args": jax.distributed's coordinator_address, num_processes, process_id
from argv[2:]). Prints "sum <value>" of a jitted allreduce of rank + 1."""

import sys

import jax
import jax.numpy as jnp

import smd.jax as sj

if sys.argv[1] == "args":
    world = sj.initialize(sys.argv[2], num_processes=int(sys.argv[3]),
                          process_id=int(sys.argv[4]))
else:
    world = sj.initialize()
total = jax.jit(sj.allreduce)(jnp.full(3, world.rank + 1, jnp.int32))
print(f"rank {world.rank} of {world.size} sum {int(total[0])}", flush=True)
world.destroy()
