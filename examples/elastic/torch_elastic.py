#!/usr/bin/env python3
"""torch_elastic.py - torch.distributed that loses a rank and takes a new one.

Three ranks form an elastic job (smd.torch.elastic.init: smd's control
communicator and torch's default process group "smd"). The last rank
SIGKILLs itself; the survivors' dist.all_reduce fails, they call
job.shrink() and go on with dist.all_reduce on the rebuilt default group
of 2. Then rank 0 starts a replacement (this script with --join, which
inherits the stores' addresses and the token from its environment), the
members call job.grow(1), the replacement elastic.join(), and all three
reduce on the default group again.

    smdrun -n 3 --grace 60 .venv/bin/python examples/elastic/torch_elastic.py

(with PYTHONPATH=bindings/python when smd is not installed; the torch
backend must be built for this torch: build/ for Debian's torch 1.13,
build-torch2/ for .venv's torch 2.x). smdrun's exit status is 137 (it
reports the killed rank); every other process prints "torch elastic ok".
"""

import os
import signal
import subprocess
import sys

import torch
import torch.distributed as dist

from smd.torch import elastic


def say(line):
    """One write per line: the replacement shares rank 0's stdout, and
    print() writes the text and its newline separately, so two processes'
    lines could interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def total(value):
    t = torch.tensor([float(value)])
    dist.all_reduce(t)
    return t.item()


def main():
    replacement = None
    if "--join" in sys.argv:
        job = elastic.join()
        say(f"replacement: joined as rank {dist.get_rank()} of {dist.get_world_size()}")
    else:
        job = elastic.init()
        victim = job.size - 1
        assert total(1) == job.size
        if job.rank == victim:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            total(1)
            raise SystemExit("an all_reduce with a killed member succeeded")
        except Exception as e:  # noqa: BLE001 - smd.torch raises PeerFailureError, or RevokedError
            say(f"rank {job.rank}: {type(e).__name__}")
        old_to_new = job.shrink()
        assert old_to_new[victim] == -1 and dist.get_world_size() == victim, old_to_new
        assert total(dist.get_rank() + 1) == victim * (victim + 1) / 2
        say(f"shrunk: rank {dist.get_rank()} of {dist.get_world_size()}")
        if job.rank == 0:
            replacement = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--join"])
        job.grow(1)
    size = dist.get_world_size()
    assert size == 3, size
    got = total(dist.get_rank() + 1)
    assert got == 6, got
    t = torch.arange(4, dtype=torch.float32) * (dist.get_rank() + 1)
    dist.broadcast(t, src=0)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0], t
    say(f"{'replacement: ' if '--join' in sys.argv else ''}rank {dist.get_rank()} of {size}: "
        "torch elastic ok")
    dist.barrier()
    job.destroy()
    if "--join" not in sys.argv and replacement is not None:
        return replacement.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
