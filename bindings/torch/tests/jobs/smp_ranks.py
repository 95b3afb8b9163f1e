"""SMP's rank API over smd: `smp.init(config)` with the config given as
JSON in argv[1]; each rank prints its ranks, sizes and group members in one
line, then checks every process group with an allreduce of the ranks."""

import json
import sys

import torch
import torch.distributed as dist

import smdistributed.modelparallel.torch as smp

KINDS = ("tp", "pp", "dp", "rdp", "mp")

smp.init(json.loads(sys.argv[1]))
ranks = " ".join(f"{k}_rank={getattr(smp, k + '_rank')()}" for k in KINDS)
sizes = " ".join(f"{k}_size={getattr(smp, k + '_size')()}" for k in KINDS)
groups = " ".join(f"{k}={','.join(map(str, getattr(smp, 'get_' + k + '_group')()))}" for k in KINDS)
print(f"rank={smp.rank()} size={smp.size()} local_rank={smp.local_rank()} "
      f"local_size={smp.local_size()} {ranks} {sizes} {groups}", flush=True)
for kind in KINDS:
    group = getattr(smp, f"get_{kind}_process_group")()
    members = getattr(smp, f"get_{kind}_group")()
    t = torch.tensor([float(smp.rank())])
    dist.all_reduce(t, group=group)
    assert t.item() == sum(members), (kind, t.item(), members)
    assert dist.get_rank(group) == getattr(smp, f"{kind}_rank")(), kind
try:
    smp.DistributedModel
except NotImplementedError as e:
    print(f"rank={smp.rank()} not implemented: {e}", flush=True)
dist.barrier()
dist.destroy_process_group()
