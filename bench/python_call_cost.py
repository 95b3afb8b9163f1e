"""One rank of bench/python_call_cost.sh: the per-call time of an 8-byte
allreduce (one float64, sum) and of a barrier, from Python, as the best of
REPS loops of CALLS calls, and (smd) the time per queued
allreduce of a group of GROUP_CALLS. --impl mpi4py runs under mpirun; smd, smd-blocking
(interruptible=False), smd-cffi (the default without the compiled fast path,
SMD_PY_FASTCALL=0, set by the script) and smd-sliced (a SIGINT handler of
the program's: the wait in slices) under smdrun. Rank 0 prints one JSON
line per call kind: {"impl", "call", "us"}."""
import argparse
import json
import signal
import time

import numpy as np

# Calls queued in one group (the group row is the time per queued call).
GROUP_CALLS = 100


def best_us(fn, calls, reps, sync):
    best = float("inf")
    for _ in range(reps):
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--impl", choices=["mpi4py", "smd", "smd-cffi", "smd-blocking", "smd-sliced"],
                   required=True)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    buf = np.ones(1, np.float64)
    if a.impl == "mpi4py":
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
        out = np.empty_like(buf)
        calls = {"allreduce_8B": lambda: comm.Allreduce(buf, out, op=MPI.SUM),
                 "barrier": comm.Barrier}
        rank, sync = comm.rank, comm.Barrier
    else:
        import smd

        comm = smd.init()
        comm.interruptible = a.impl != "smd-blocking"
        if a.impl == "smd-sliced":
            # A SIGINT handler of the program's own: blocking calls keep the
            # nonblocking form plus the wait in slices (the default before
            # smd_set_interrupt_fd).
            def on_sigint(signum, frame):
                raise KeyboardInterrupt

            signal.signal(signal.SIGINT, on_sigint)
        calls = {"allreduce_8B": lambda: comm.allreduce(buf), "barrier": comm.barrier}
        group_bufs = [np.ones(1, np.float64) for _ in range(GROUP_CALLS)]

        def group_of_allreduces():
            with smd.group():
                for b in group_bufs:
                    comm.allreduce(b)
        calls["group_allreduce_8B"] = group_of_allreduces
        rank, sync = comm.rank, comm.barrier
    for fn in calls.values():  # warm up
        for _ in range(1000):
            fn()
    for name, fn in calls.items():
        per = GROUP_CALLS if name.startswith("group_") else 1
        us = best_us(fn, max(1, a.calls // per), a.reps, sync) / per
        if rank == 0:
            print(json.dumps({"impl": a.impl, "call": name, "us": round(us, 3)}), flush=True)
    if a.impl != "mpi4py":
        comm.destroy()


if __name__ == "__main__":
    main()
