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
    # Stay until every survivor has learnt of the victim (each leaves a file
    # in SURVIVORS_DIR), so that none learns of this rank's exit instead;
    # a minute at most.
    survivors = os.environ["SURVIVORS_DIR"]
    open(os.path.join(survivors, str(world.rank)), "w").close()
    deadline = time.monotonic() + 60
    while len(os.listdir(survivors)) < world.size - 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    sys.exit(0)
except smd.Error as e:
    print(f"unexpected {type(e).__name__}: {e}", flush=True)
    sys.exit(3)
print("no error", flush=True)
sys.exit(4)
