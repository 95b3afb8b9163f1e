"""A training script as SMDDP users write it, started by mpirun or srun
(test_jobs.py): no RANK, WORLD_SIZE, MASTER_ADDR or MASTER_PORT in the
environment; `init_process_group` with backend smd (argv[1] "smd") or
SMDDP's own `init_process_group()` (argv[1] "smddp") takes them from the
launcher's variables through smd. Prints one JSON line per rank."""

import json
import sys

import torch
import torch.distributed as dist

import smd.torch  # noqa: F401  (registers "smd")

if sys.argv[1] == "smddp":
    import smdistributed.dataparallel.torch.distributed as sdp

    sdp.init_process_group()
    local_rank = sdp.get_local_rank()
else:
    dist.init_process_group(sys.argv[1])
    local_rank = None

rank, size = dist.get_rank(), dist.get_world_size()
t = torch.full((4,), float(rank + 1))
dist.all_reduce(t)
want = float(size * (size + 1) // 2)
print(json.dumps({"rank": rank, "size": size, "backend": dist.get_backend(),
                  "sum_ok": bool(torch.all(t == want)), "local_rank": local_rank}), flush=True)
dist.destroy_process_group()
