"""Step time of torch's FSDP (and smd's ShardedDataParallel) on the CPU,
with peak memory, for a model whose step is mostly communication: a stack
of wide nn.Linear layers fed a few rows, so gathering the weights and
reduce-scattering their gradients costs far more than the matrix products.

Run on every rank under smdrun (or torchrun):

    smdrun -n 4 python3 bench/fsdp_step.py --backend gloo --wrapper fsdp
    smdrun -n 4 python3 bench/fsdp_step.py --backend smd  --wrapper fsdp
    smdrun -n 4 python3 bench/fsdp_step.py --backend gloo --wrapper sdp

--wrapper: fsdp (FullyShardedDataParallel, one unit per layer), fsdp2
(fully_shard per layer), sdp (smd.torch.ShardedDataParallel; its
collectives are smd's whatever --backend is, which then only serves the
final check). Rank 0 prints one line: the median and best step time over
--steps timed steps after --warmup, the median CPU time of a step
(cpu_ms: process CPU time, every thread, summed over the ranks; the work,
which a loaded machine delays but does not add to), the parameters, and
every rank's peak resident memory growth since before the model was
built (ru_maxrss: the model, its shards, gathered copies, gradients; the
communication library is set up before, for sdp smd's world too, as
init_process_group sets up FSDP's). bench/fsdp_step_compare.sh runs the
configurations interleaved.
Not a test: docs/SHARDING.md and docs/PERFORMANCE.md hold the results with
the machine."""

import argparse
import resource
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch import nn


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def model(width, layers):
    torch.manual_seed(0)
    return nn.Sequential(*(nn.Sequential(nn.Linear(width, width), nn.Tanh())
                           for _ in range(layers)))


def wrap(net, wrapper, args):
    if wrapper == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        return FSDP(net, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}),
                    device_id=torch.device("cpu"))
    if wrapper == "fsdp2":
        from torch.distributed.fsdp import fully_shard
        for layer in net:
            fully_shard(layer)
        return fully_shard(net)
    if wrapper == "sdp":
        from smd.torch import ShardedDataParallel
        return ShardedDataParallel(net, param_persistence_threshold=args.width + 1,
                                   max_live_parameters=args.max_live,
                                   release_heap=args.release_heap)
    sys.exit(f"unknown wrapper {wrapper}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gloo", choices=["gloo", "smd", "smddp"])
    parser.add_argument("--wrapper", default="fsdp", choices=["fsdp", "fsdp2", "sdp"])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--max-live", type=int, default=3 * 1024 * 1024,
                        help="sdp's max_live_parameters (default: 3 layers, like FSDP's "
                             "current unit and its prefetches)")
    parser.add_argument("--release-heap", action="store_true",
                        help="sdp's release_heap (malloc_trim after each backward; "
                             "docs/SHARDING.md)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile rank 0's timed steps and print the N entries of "
                             "most own time to stderr")
    args = parser.parse_args()

    if args.backend == "smddp":
        import smdistributed.dataparallel.torch.torch_smddp  # noqa: F401
    elif args.backend == "smd" or args.wrapper == "sdp":
        import smd.torch  # noqa: F401
    dist.init_process_group(backend=args.backend)
    if args.wrapper == "sdp":
        import smd
        smd.init()  # its transport's memory is not the wrapper's
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)  # 4 ranks share few cores: no oversubscription

    base = peak_rss_mib()
    net = wrap(model(args.width, args.layers), args.wrapper, args)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(rank)
    times, cpu = [], []
    profiler = None
    for step in range(args.warmup + args.steps):
        x = torch.randn(args.rows, args.width, generator=gen)
        dist.barrier()
        if step == args.warmup and args.profile and rank == 0:
            import cProfile
            profiler = cProfile.Profile()
            profiler.enable()
        start, start_cpu = time.perf_counter(), time.process_time()
        net(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    if profiler is not None:
        profiler.disable()
        import pstats
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(args.profile)
    grown = peak_rss_mib() - base

    peaks = [None] * size
    dist.all_gather_object(peaks, round(grown, 1))
    slowest = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # a step ends when its slowest rank does
    # CPU time a step costs (every thread of the process, summed over the
    # ranks): the work done, which a loaded machine delays but does not
    # add to, as it adds waiting for a core to the wall time.
    work = torch.tensor(cpu, dtype=torch.float64)
    dist.all_reduce(work)
    if rank == 0:
        params = args.width * (args.width + 1) * args.layers
        print(f"fsdp_step backend={args.backend} wrapper={args.wrapper} ranks={size} "
              f"params={params} ({4 * params / 2**20:.0f} MiB) rows={args.rows} "
              f"median_ms={1e3 * statistics.median(slowest.tolist()):.2f} "
              f"best_ms={1e3 * min(slowest.tolist()):.2f} "
              f"cpu_ms={1e3 * statistics.median(work.tolist()):.2f} steps={args.steps} "
              f"peak_rss_growth_mib={peaks}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
