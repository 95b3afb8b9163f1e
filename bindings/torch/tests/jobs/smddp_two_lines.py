"""SMDDP's two lines, as SageMaker's FSDP example writes them, then a
collective and SMDDP's rank calls."""

import torch
import torch.distributed as dist

import smdistributed.dataparallel.torch.torch_smddp  # noqa: F401
dist.init_process_group(backend="smddp")

import smdistributed.dataparallel.torch.distributed as sdp  # noqa: E402

t = torch.full((3,), float(dist.get_rank() + 1))
dist.all_reduce(t)
print(f"backend={dist.get_backend()} rank={sdp.get_rank()} size={sdp.get_world_size()} "
      f"local_rank={sdp.get_local_rank()} local_size={sdp.get_local_size()} sum={t.tolist()}",
      flush=True)
dist.destroy_process_group()
