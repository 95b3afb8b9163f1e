"""With a 3 s process-group timeout, rank 0 starts an allreduce and a
broadcast that rank 1 joins only once rank 0 has seen both fail (a key in
the job's store says so): both of rank 0's Works must end with an error at
about 3 s, and rank 1's late allreduce must fail rather than wait. Each rank
prints how its operations ended."""

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
store = dist.distributed_c10d._get_default_store()
dist.all_reduce(torch.ones(1))
start = time.monotonic()
errors = 0
if rank == 0:
    works = [dist.all_reduce(torch.ones(8), async_op=True),
             dist.broadcast(torch.ones(8), 0, async_op=True)]
    errors = wait_all(works, start)
    store.set("timeout-job/rank0-done", "1")
    # Rank 0 serves the store: it stays until rank 1 is done with it.
    store.wait(["timeout-job/rank1-done"], timedelta(seconds=60))
else:
    store.wait(["timeout-job/rank0-done"], timedelta(seconds=60))
    try:
        dist.all_reduce(torch.ones(8))
        print("late: no error", flush=True)
    except smd.Error as e:
        errors += 1
        print(f"late: {type(e).__name__} after {time.monotonic() - start:.2f} s: {e}", flush=True)
    store.set("timeout-job/rank1-done", "1")
sys.exit(0 if errors else 1)
