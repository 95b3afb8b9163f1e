"""A job whose last rank SIGKILLs itself while every rank is inside a
stream of allreduces; each survivor prints how it learnt of it."""

import os
import signal
import sys
import threading
import time

import numpy as np

import smd

world = smd.init()
x = np.ones(1 << 16, np.float32)
world.allreduce(x)  # everyone is connected
if world.rank == world.size - 1:
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGKILL)).start()
start = time.monotonic()
try:
    while time.monotonic() - start < 60:
        world.allreduce(x, out=x)
        x[:] = 1
except smd.PeerFailureError as e:
    print(f"PeerFailureError after {time.monotonic() - start:.2f} s: {e}", flush=True)
    # Stay a moment, so that the other survivor learns of the victim rather
    # than of this rank's exit.
    time.sleep(3)
    sys.exit(0)
except smd.Error as e:
    print(f"unexpected {type(e).__name__}: {e}", flush=True)
    sys.exit(3)
print("no error", flush=True)
sys.exit(4)
