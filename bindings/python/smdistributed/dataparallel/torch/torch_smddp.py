"""``import smdistributed.dataparallel.torch.torch_smddp`` registers smd's
c10d backend under SMDDP's name, so that
``torch.distributed.init_process_group(backend="smddp")`` forms a process
group over smd (CPU tensors in this release). "smd" stays registered too."""

import smd.torch

#: The backend name SMDDP scripts pass to init_process_group.
BACKEND = "smddp"

smd.torch.register(BACKEND)
