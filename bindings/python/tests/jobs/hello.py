"""Each rank says who it is and checks a sum; used by the launcher test."""

import sys

import numpy as np

import smd

with smd.init() as world:
    total = world.allreduce(np.array([world.rank + 1]))[0]
    assert total == world.size * (world.size + 1) // 2, total
    print(f"hello from {world.rank} of {world.size} args={sys.argv[1:]}", flush=True)
