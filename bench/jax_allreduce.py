#!/usr/bin/env python3
"""jax_allreduce.py - JAX's own cross-process CPU collectives against
smd.jax, side by side in one job: a float32 sum-allreduce inside jax.jit
of 4 KiB to 64 MiB per process.

    smdrun -n 2 python3 bench/jax_allreduce.py [--impl gloo|mpi] [--iters N]

Every process is one CPU device. The JAX column is
``jax.distributed.initialize`` (the coordinator on smdrun's MASTER_PORT)
with ``jax_cpu_collectives_implementation`` = --impl, and ``lax.psum``
across the processes in a jitted ``shard_map`` over a mesh of one device
per process; the smd column is ``smd.jax.allreduce`` in a jitted function
on the process's own array. Each jitted program runs K allreduces in a
``fori_loop`` (y = allreduce(y), K = --iters or by size, at most 50 so
that the growing sums stay finite), so what is
timed is the collectives inside jit, not JAX's per-program dispatch (with
an ordered effect, as smd.jax has, JAX dispatches from Python: about 1 ms
a program on a loaded 2-core machine). Both run on the same arrays in
alternation, each size after a barrier; a cell is the median over --reps
of the program's time / K, the slowest rank's. Prints a table (time, bus
bandwidth 2(n-1)/n x bytes / time, and the ratio) and checks both results.
"""

import argparse
import os
import sys
import time

import numpy as np

import jax
import jax.numpy as jnp

import smd
import smd.jax


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--impl", default="gloo", choices=("gloo", "mpi"))
    p.add_argument("--min", type=int, default=4 << 10, help="smallest size in bytes")
    p.add_argument("--max", type=int, default=64 << 20, help="largest size in bytes")
    p.add_argument("--iters", type=int, default=0,
                   help="allreduces per jitted program (0: by size)")
    p.add_argument("--reps", type=int, default=5)
    return p.parse_args()


def timed(fn, x, iters, world):
    world.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        y = fn(x)
    y.block_until_ready()
    mine = (time.perf_counter() - start) / iters
    return float(world.allreduce(np.array([mine]), op="max")[0]), y


def main():
    args = parse()
    world = smd.jax.initialize()
    n, rank = world.size, world.rank
    jax.config.update("jax_cpu_collectives_implementation", args.impl)
    jax.distributed.initialize(
        coordinator_address=f"{os.environ.get('MASTER_ADDR', '127.0.0.1')}:{os.environ['MASTER_PORT']}",
        num_processes=n, process_id=rank)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    try:
        from jax import shard_map
    except ImportError:  # older jax
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(np.array(jax.devices()), ("p",))
    sharding = NamedSharding(mesh, P("p"))
    def looped(collective, k):
        return lambda a: jax.lax.fori_loop(0, k, lambda i, y: collective(y), a)

    def programs(k):
        jax_psum = jax.jit(shard_map(looped(lambda a: jax.lax.psum(a, "p"), k), mesh=mesh,
                                     in_specs=P("p"), out_specs=P("p"), check_vma=False))
        smd_sum = jax.jit(looped(smd.jax.allreduce, k))
        return jax_psum, smd_sum
    local_device = jax.local_devices()[0]

    if rank == 0:
        print(f"# {n} processes, float32 sum, jax {jax.__version__} ({args.impl} CPU "
              f"collectives) vs smd {'.'.join(map(str, smd.version()))}; us per call "
              "(slowest rank), busbw GB/s")
        print(f"{'bytes':>10} {'jax us':>10} {'smd us':>10} {'jax GB/s':>9} {'smd GB/s':>9} "
              f"{'smd/jax':>8}")
    size = args.min
    while size <= args.max:
        count = size // 4
        mine = jax.device_put(np.full(count, rank + 1, np.float32), local_device)
        whole = jax.make_array_from_single_device_arrays((n * count,), sharding, [mine])
        iters = min(50, args.iters or max(2, (16 << 20) // size))
        jax_psum, smd_sum = programs(iters)
        times = {"jax": [], "smd": []}
        for fn, name, arg in ((jax_psum, "jax", whole), (smd_sum, "smd", mine)):
            fn(arg).block_until_ready()  # compile and warm up
        for _ in range(args.reps):
            t, y = timed(jax_psum, whole, 1, world)
            times["jax"].append(t / iters)
            t, z = timed(smd_sum, mine, 1, world)
            times["smd"].append(t / iters)
        want = float(n) ** (iters - 1) * n * (n + 1) / 2  # sum of 1..n, times n a round after
        got_jax = np.asarray(y.addressable_shards[0].data)
        if not (np.allclose(got_jax, want, rtol=1e-5) and np.allclose(np.asarray(z), want,
                                                                       rtol=1e-5)):
            print(f"rank {rank}: wrong sum at {size} B", file=sys.stderr)
            return 1
        if rank == 0:
            tj, ts = np.median(times["jax"]), np.median(times["smd"])
            bus = 2 * (n - 1) / n * size / 1e9
            print(f"{size:>10} {tj * 1e6:>10.1f} {ts * 1e6:>10.1f} {bus / tj:>9.2f} "
                  f"{bus / ts:>9.2f} {tj / ts:>7.2f}x", flush=True)
        size *= 4
    jax.distributed.shutdown()
    world.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
