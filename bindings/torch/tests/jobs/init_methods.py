"""Forms the default process group through the init method named on the
command line (env, tcp or file) with backend smd, checks an allreduce and
a new_group, and prints "ok <method> <rank>". Run under smdrun, which sets
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT as torchrun does; `file`
takes the shared file's path as its second argument."""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import smd.torch  # noqa: F401

method = sys.argv[1]
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
timeout = timedelta(seconds=60)
if method == "env":
    dist.init_process_group("smd", timeout=timeout)
elif method == "tcp":
    address = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    dist.init_process_group("smd", init_method=address, rank=rank, world_size=size,
                            timeout=timeout)
elif method == "file":
    dist.init_process_group("smd", init_method="file://" + sys.argv[2], rank=rank,
                            world_size=size, timeout=timeout)
else:
    sys.exit(f"unknown init method {method}")

t = torch.full((4,), float(rank + 1))
dist.all_reduce(t)
assert t.tolist() == [size * (size + 1) / 2] * 4, t
g = dist.new_group(list(range(size)))
dist.all_reduce(t, group=g)
assert dist.get_backend() == dist.Backend("smd")
dist.destroy_process_group()
print(f"ok {method} {rank}", flush=True)
