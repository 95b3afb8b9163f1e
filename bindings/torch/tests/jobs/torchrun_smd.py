"""Run by torch.distributed.run (static rendezvous: its agent serves
torch's store on MASTER_PORT): smd worlds formed before and after
torch.distributed's own gloo group, side by side with it, destroyed and
formed again. Prints "ok torchrun <rank>"."""

import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist

import smd

rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
expected = size * (size + 1) / 2


def total(comm):
    out = np.zeros(1)
    comm.allreduce(np.full(1, rank + 1.0), out=out)
    return out[0]


first = smd.init()
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
second = smd.init(store_prefix="second/")
t = torch.full((1,), rank + 1.0)
dist.all_reduce(t)
assert t.item() == expected, t
assert total(first) == expected and total(second) == expected
second.destroy()
first.destroy()
again = smd.init()
assert total(again) == expected
again.destroy()
dist.destroy_process_group()
print(f"ok torchrun {rank}", flush=True)
