"""torch tensors as buffers, without importing torch.

A CPU tensor is seen through ``tensor.numpy()`` (a view of the same memory,
writable), bfloat16 tensors through their bits (a uint16 view) with the
datatype bfloat16, and results the binding allocates for a tensor input are
tensors of the same dtype. A tensor that requires grad is seen read-only
(smd writes nothing autograd would not know of); a CUDA tensor is left to
the ``__cuda_array_interface__`` exporter. torch is looked up in
``sys.modules`` only: a program that never imported torch pays nothing.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

import numpy as np

from .dtypes import Datatype


def _torch() -> Any:
    return sys.modules.get("torch")


def is_tensor(obj: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(obj, torch.Tensor)


def host_view(obj: Any) -> Optional[Tuple[np.ndarray, Optional[Datatype]]]:
    """A numpy view of a CPU tensor's memory and the datatype it carries
    when numpy cannot say (bfloat16), or None for anything else (CUDA
    tensors included)."""
    if not is_tensor(obj) or obj.device.type != "cpu":
        return None
    torch = _torch()
    tensor = obj.detach() if obj.requires_grad else obj
    if tensor.dtype == torch.bfloat16:
        array, datatype = tensor.view(torch.int16).numpy().view(np.uint16), Datatype.BFLOAT16
    else:
        array, datatype = tensor.numpy(), None
    if obj.requires_grad:
        array = array.view()
        array.flags.writeable = False
    return array, datatype


def read_only_reason(obj: Any) -> str:
    """Why a tensor cannot be written, for the error message ("" if not a
    tensor that requires grad)."""
    if is_tensor(obj) and obj.requires_grad:
        return (" (a torch tensor that requires grad: smd does not write into it behind "
                "autograd's back; pass tensor.detach() or work under torch.no_grad())")
    return ""


def empty_like_kind(obj: Any, shape: Tuple[int, ...]) -> Optional[Any]:
    """A new CPU tensor of `obj`'s dtype and `shape` when `obj` is a tensor
    (results are returned as the input's array type), else None."""
    if not is_tensor(obj):
        return None
    return _torch().empty(shape, dtype=obj.dtype)
