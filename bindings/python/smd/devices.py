"""Device arrays of the frameworks (CuPy, torch CUDA tensors, JAX, anything
with ``__cuda_array_interface__`` or DLPack), without importing them: the
stream a call runs on when the caller names none, and new result arrays of
the caller's type.

Frameworks are looked up in ``sys.modules`` only, by the array's module.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Optional, Tuple

import numpy as np

from .errors import NotSupportedError

# DLPack's name for CUDA's legacy default stream (0 means "no stream" there).
DLPACK_LEGACY_STREAM = 1
_driver_seen = False


def _framework(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def stream_handle(stream: Any) -> int:
    """A stream as the integer handle (cudaStream_t) smd takes: an int, or
    an object with ``.cuda_stream`` (PyTorch) or ``.ptr`` (CuPy)."""
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


def caller_stream(obj: Any) -> int:
    """The stream a call on device array `obj` runs on by default: the
    framework's current stream (torch's of the tensor's device, CuPy's),
    else the stream ``__cuda_array_interface__`` names, else 0 (CUDA's
    legacy default stream)."""
    name = _framework(obj)
    if name == "torch":
        torch = sys.modules["torch"]
        return int(torch.cuda.current_stream(obj.device).cuda_stream)
    if name == "cupy":
        return int(sys.modules["cupy"].cuda.get_current_stream().ptr)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if isinstance(cai, dict) and cai.get("stream"):
        stream = int(cai["stream"])
        return 0 if stream in (1, 2) else stream  # CAI's legacy/per-thread default: NULL
    return 0


def require_cuda_loaded(what: str) -> None:
    """Device memory handed to the library with the NULL stream is looked at
    by the library itself, which sees host memory in a process that has not
    loaded CUDA: refuse that here rather than let it read the address."""
    global _driver_seen
    if _driver_seen:
        return
    try:
        ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    except OSError:
        raise NotSupportedError(f"{what} is device memory, but this process has not loaded "
                                "CUDA (libcuda.so.1), so the address cannot be device memory "
                                "smd can reach") from None
    _driver_seen = True


def empty_like(obj: Any, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
    """A new device array of `obj`'s type and device, for results."""
    name = _framework(obj)
    if name == "torch":
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=obj.dtype, device=obj.device)
    if name == "cupy":
        cupy = sys.modules["cupy"]
        with obj.device:
            return cupy.empty(shape, dtype=dtype)
    if name in ("jax", "jaxlib"):
        raise NotSupportedError("JAX arrays are immutable, so smd cannot write a result into "
                                "a new one: pass out= (a CuPy array or torch tensor), or use "
                                "smd.jax inside jax.jit")
    namespace = getattr(obj, "__array_namespace__", None)
    if namespace is not None:  # the array API standard
        return namespace().empty(shape, dtype=dtype, device=obj.device)
    raise NotSupportedError(f"smd cannot make a new {type(obj).__name__} for the result: "
                            "pass out=")


def is_immutable(obj: Any) -> bool:
    """Arrays whose memory must not be written (JAX's)."""
    return _framework(obj) in ("jax", "jaxlib")
