"""SageMaker's distributed-training module paths, served by smd, so scripts
written for SMDDP and SMP import and form their groups unchanged (tensors must
be on the CPU: smd's backend takes CUDA tensors in some operations only, and
unverified on a GPU (docs/TORCH.md), so an SMDDP script's ``.cuda()`` calls
must go):

- ``smdistributed.dataparallel.torch.torch_smddp``: registers smd's torch
  backend as "smddp" (SMDDP's two lines work as written);
- ``smdistributed.dataparallel.torch.distributed``: SMDDP's rank calls;
- ``smdistributed.modelparallel.torch``: SMP's rank and process-group API
  (:mod:`smd.smp`).

Installed beside ``smd``; it hides Amazon's own smdistributed package if
both are installed (see bindings/python/README.md, "SageMaker compatibility").
"""
