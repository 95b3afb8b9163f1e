"""With a 3 s process-group timeout, rank 0 starts an allreduce and a
broadcast that rank 1 joins only 8 s later: both of rank 0's Works must end
with an error at about 3 s, and rank 1's late allreduce must fail rather
than wait. Each rank prints how its operations ended."""

import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import smd
import smd.torch  # noqa: F401
from outcomes import wait_all

dist.init_process_group("smd", timeout=timedelta(seconds=3))
rank = dist.get_rank()
dist.all_reduce(torch.ones(1))
start = time.monotonic()
errors = 0
if rank == 0:
    works = [dist.all_reduce(torch.ones(8), async_op=True),
             dist.broadcast(torch.ones(8), 0, async_op=True)]
    errors = wait_all(works, start)
else:
    time.sleep(8)
    try:
        dist.all_reduce(torch.ones(8))
        print("late: no error", flush=True)
    except smd.Error as e:
        errors += 1
        print(f"late: {type(e).__name__} after {time.monotonic() - start:.2f} s: {e}", flush=True)
sys.exit(0 if errors else 1)
