"""DDP communication hooks that use smd's fusion path.

(No ``from __future__ import annotations`` here: DDP checks the hook's
annotations as objects.)

::

    from smd.torch.comm_hooks import fusion_hook
    model = DistributedDataParallel(net)          # process group over "smd"
    model.register_comm_hook(None, fusion_hook)   # or a process group as state

DDP hands a hook one gradient bucket at a time (a flat buffer holding the
gradients of several parameters back to back). ``fusion_hook`` allreduces
the bucket as its per-parameter tensors through ``all_reduce_coalesced``,
which the smd backend issues as one smd group: smd packs them into its
balanced fusion buffers (SMD_FUSION_BYTES), where every rank reduces an
equal share whatever the parameters' sizes, then divides by the group's size
(DDP averages gradients).
"""

from typing import Any, Optional

import torch
import torch.distributed as dist


def fusion_hook(state: Optional[Any], bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Average `bucket` over the process group `state` (None = the default
    group) through smd's group calls; returns the future DDP waits for."""
    group = state if state is not None else dist.group.WORLD
    size = dist.get_world_size(group)
    flat = bucket.buffer()
    # The bucket holds its parameters' gradients back to back, in order.
    pieces = list(torch.split(flat, [p.numel() for p in bucket.parameters()]))
    work = dist.all_reduce_coalesced(pieces, group=group, async_op=True)

    def average(fut: torch.futures.Future) -> torch.Tensor:
        fut.value()  # raises the collective's error, if any
        return flat.div_(size)

    # torch 1.13 returns a Future here, later versions a Work.
    fut = work.get_future() if hasattr(work, "get_future") else work
    return fut.then(average)
