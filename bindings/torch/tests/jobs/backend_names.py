"""One process, one world, the default group formed and destroyed three
times under the names torch 2.x users write: "cpu:smd", then "smddp" (SMDDP's
name) with a new_group and a DeviceMesh over it, then "smd" again. Each group
reduces, titles its profiler events with its name and reports it from
get_backend(). Prints "ok names <rank>". Run under smdrun (torch >= 2.2)."""

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

import smd.torch

smd.torch.register("smddp")


def check(name, size, rank):
    t = torch.full((4,), float(rank + 1))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        dist.all_reduce(t)
    assert t.tolist() == [size * (size + 1) / 2] * 4, (name, t)
    titles = {e.name for e in prof.events()}
    assert f"{name}:all_reduce" in titles, (name, sorted(n for n in titles if "all" in n))


for backend, name in [("cpu:smd", "smd"), ("smddp", "smddp"), ("smd", "smd")]:
    dist.init_process_group(backend)
    rank, size = dist.get_rank(), dist.get_world_size()
    assert name in str(dist.get_backend()), (backend, dist.get_backend())
    check(name, size, rank)
    if name == "smddp":
        g = dist.new_group(list(range(size)))
        x = torch.ones(3)
        dist.all_reduce(x, group=g)
        assert x.tolist() == [float(size)] * 3
        mesh = init_device_mesh("cpu", (size,))
        y = torch.ones(2)
        dist.all_reduce(y, group=mesh.get_group())
        assert y.tolist() == [float(size)] * 2
    dist.destroy_process_group()
print(f"ok names {rank}", flush=True)
