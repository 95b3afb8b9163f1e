"""Reading a DLPack capsule (``obj.__dlpack__()``) without a framework:
where the memory is, its device, element type and layout.

One reader serves host and device tensors alike. The capsule is not
consumed (its name stays "dltensor"), so the producer's deleter runs when
the capsule is garbage; whoever uses the memory keeps the capsule alive
(:class:`Tensor` holds it).

The layout read is DLPack's ``DLManagedTensor`` (dlpack.h, versions up to
0.8; 1.0 producers give this form unless asked for the versioned one):
``DLTensor { void *data; DLDevice device; int32_t ndim; DLDataType dtype;
int64_t *shape; int64_t *strides; uint64_t byte_offset; }`` first.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .errors import InvalidArgumentError

#: DLDeviceType codes (dlpack.h).
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}
# DLDataTypeCode: kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool.
_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}
_BFLOAT = 4


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


@dataclass(frozen=True)
class Tensor:
    """What a capsule describes. ``dtype`` is numpy's (bfloat16 as uint16,
    with ``bfloat16`` True)."""
    ptr: int
    device_type: int
    device_id: int
    dtype: np.dtype
    bfloat16: bool
    shape: Tuple[int, ...]
    contiguous: bool
    capsule: Any  # keeps the producer's memory alive

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def device(self) -> str:
        return DEVICE_NAMES.get(self.device_type, f"device type {self.device_type}")

    def host_array(self) -> np.ndarray:
        """A read-only numpy view of host memory (DLPack says nothing about
        whether the producer allows writes, so none are made)."""
        raw = (ctypes.c_char * max(self.nbytes, 1)).from_address(self.ptr)
        raw.keep = self.capsule  # type: ignore[attr-defined]
        array = np.frombuffer(raw, dtype=self.dtype, count=self.nbytes // self.dtype.itemsize)
        array = array.reshape(self.shape)
        array.flags.writeable = False
        return array


def read(obj: Any, stream: Optional[int] = None) -> Tensor:
    """The tensor `obj` exports through DLPack. `stream` is the consumer's
    CUDA stream (DLPack's convention: 1 is the legacy default stream): the
    producer makes the data ready for work on it."""
    capsule = obj.__dlpack__() if stream is None else obj.__dlpack__(stream=stream)
    if not _is_valid(capsule, b"dltensor"):
        raise InvalidArgumentError(f"{type(obj).__name__}.__dlpack__() did not return an unused "
                                   "'dltensor' capsule")
    t = _DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    bfloat16 = code == _BFLOAT and bits == 16
    if lanes != 1 or (code not in _KINDS and not bfloat16) or bits % 8:
        raise InvalidArgumentError(f"{type(obj).__name__}: DLPack element type (code {code}, "
                                   f"{bits} bits, {lanes} lanes) has no smd datatype")
    dtype = np.dtype(np.uint16) if bfloat16 else np.dtype(f"{_KINDS[code]}{bits // 8}")
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    contiguous = True
    if t.strides:
        step = 1
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and int(t.strides[i]) != step:
                contiguous = False
            step *= shape[i]
    return Tensor(ptr=(t.data or 0) + t.byte_offset, device_type=t.device.device_type,
                  device_id=t.device.device_id, dtype=dtype, bfloat16=bfloat16, shape=shape,
                  contiguous=contiguous, capsule=capsule)
