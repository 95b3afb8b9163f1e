"""The last rank SIGKILLs itself while the others have allreduces pending
on the smd group; every survivor prints how each of its Works ended."""

import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import smd.torch  # noqa: F401
from outcomes import wait_all

dist.init_process_group("smd", timeout=timedelta(seconds=60))
rank, size = dist.get_rank(), dist.get_world_size()
dist.all_reduce(torch.ones(1))  # every rank is connected
if rank == size - 1:
    os.kill(os.getpid(), signal.SIGKILL)

start = time.monotonic()
works = [dist.all_reduce(torch.ones(1 << 16), async_op=True) for _ in range(3)]
failed = wait_all(works, start)
# Stay a moment, so that the other survivors learn of the victim rather
# than of this rank's exit.
time.sleep(3)
sys.exit(0 if failed == len(works) else 1)
