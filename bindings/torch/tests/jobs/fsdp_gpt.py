"""Trains tests/gpt.py's TinyGPT with torch's own sharding over a backend
chosen on the command line, and saves each wrapper's losses (every rank's)
and final whole parameters for test_fsdp.py to compare across backends:

    fsdp_gpt.py BACKEND WRAPPERS OUT [STEPS]

BACKEND: gloo, smd, or smddp (SMDDP's two lines from SageMaker's FSDP
recipe: import smdistributed.dataparallel.torch.torch_smddp, then
init_process_group(backend="smddp"); nothing else differs).
WRAPPERS, comma-separated, trained one after the other from the same
initial model: fsdp (FullyShardedDataParallel, one unit per encoder
layer), fsdp2 (fully_shard per layer and at the root), hsdp (fully_shard
over a 2-D device mesh: shard inside a node, replicate across nodes; run
under smdrun --nodes K). One job runs them all: importing torch's FSDP
costs more than training this model."""

import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gpt import gpt, train  # noqa: E402

backend, wrappers, out = sys.argv[1], sys.argv[2].split(","), Path(sys.argv[3])
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 4

if backend == "smddp":
    import smdistributed.dataparallel.torch.torch_smddp  # noqa: F401
elif backend == "smd":
    import smd.torch  # noqa: F401
dist.init_process_group(backend=backend)
rank, size = dist.get_rank(), dist.get_world_size()
# Ranks outnumber cores: torch's intra-op threads would spin against each
# other (torch 2.x: tens of times slower steps).
torch.set_num_threads(1)


def wrap(model, wrapper):
    if wrapper == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        return FSDP(model, auto_wrap_policy=ModuleWrapPolicy({nn.TransformerEncoderLayer}),
                    device_id=torch.device("cpu"))
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    if wrapper == "hsdp":
        nodes = size // int(os.environ["LOCAL_WORLD_SIZE"])  # smdrun --nodes
        mesh = init_device_mesh("cpu", (nodes, size // nodes),
                                mesh_dim_names=("replicate", "shard"))
    elif wrapper == "fsdp2":
        mesh = init_device_mesh("cpu", (size,))
    else:
        sys.exit(f"unknown wrapper {wrapper}")
    for layer in model.layers:
        fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh)


results = {}
for wrapper in wrappers:
    net = wrap(gpt(), wrapper)
    losses = train(net, net.parameters(), rank, steps)
    # The whole parameters, gathered the same way for every wrapper.
    state = get_model_state_dict(net, options=StateDictOptions(full_state_dict=True,
                                                               cpu_offload=True))
    everyone = [None] * size
    dist.all_gather_object(everyone, losses)
    results[wrapper] = {"losses": everyone,
                        "state": {k: v.detach().clone() for k, v in state.items()}}
    print(f"fsdp_gpt {backend} {wrapper} rank {rank}: losses {losses}", flush=True)
if rank == 0:
    torch.save({"backend": dist.get_backend(), "results": results}, out)
dist.destroy_process_group()
