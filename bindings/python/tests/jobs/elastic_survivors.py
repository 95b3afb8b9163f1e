"""A job of four ranks whose rank 2 SIGKILLs itself after a barrier; the
survivors see the loss, revoke, shrink to three and go on: each prints what
it checked."""

import os
import signal
import sys

import numpy as np

import smd

world = smd.init()
rank = world.rank
x = np.ones(1 << 16, np.float32)
world.allreduce(x, out=x)  # everyone is connected
world.barrier()
if rank == 2:
    os.kill(os.getpid(), signal.SIGKILL)
try:
    world.allreduce(x, out=x)
    print("no error", flush=True)
    sys.exit(4)
except (smd.PeerFailureError, smd.RevokedError) as e:
    first = type(e).__name__
world.revoke()
try:
    world.allreduce(x, out=x)
    sys.exit(5)
except smd.RevokedError:
    pass
comm, old_to_new = world.shrink()
assert old_to_new == [0, 1, -1, 2], old_to_new
assert (comm.size, comm.rank) == (3, old_to_new[rank]), (comm.size, comm.rank)
total = comm.allreduce(np.array([comm.rank + 1], np.int64))
assert total[0] == 6, total
big = comm.allreduce(np.full(1 << 16, rank, np.float32))
assert (big == 0 + 1 + 3).all(), big[:4]
flag, failed = world.agree(0xFFFFFFFF & ~(1 << rank))
assert flag == 0xFFFFFFFF & ~0b1011 and failed == [2], (hex(flag), failed)
comm.barrier()  # nobody leaves (rank 0 serves the store) before all are done
print(f"shrunk ok after {first}: {comm.size} ranks", flush=True)
comm.destroy()
world.destroy()
