"""The buffer layer: any object that exposes its memory becomes a
:class:`Buffer` (pointer, element count, smd datatype, device) that the
collectives pass to the library.

What counts as a buffer is decided by a list of *exporters*, tried in
order; each looks at an object and either returns a view of its memory
(a numpy array for host memory, a :class:`DeviceView` for device memory),
returns None (not mine), or raises (mine, but unusable). Built in, in
order:

- numpy arrays;
- torch CPU tensors (:mod:`smd.tensors`: bfloat16 included; read-only
  when they require grad);
- ``__cuda_array_interface__`` (CuPy, Numba, PyTorch CUDA tensors):
  recognised as device memory;
- DLPack (``__dlpack__``/``__dlpack_device__``): host tensors are viewed
  through ``numpy.from_dlpack`` without a copy; device tensors are refused
  with NotSupportedError;
- ``__array_interface__`` (viewed through numpy, no copy);
- the buffer protocol (bytes, bytearray, memoryview, array.array, ...).

This release runs collectives on host memory only: a device buffer gets as
far as :func:`require_host` (one place), which raises NotSupportedError.
When device support lands, that check and :func:`new_array` change; the
collectives' signatures (which already take ``stream=``) do not.
:func:`register_exporter` adds exporters for other array types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import tensors
from ._ffi import ffi, lib
from .dtypes import _FROM_NUMPY, NUMPY_DTYPES, Datatype, DatatypeLike, datatype_of, resolve_datatype
from .errors import InvalidArgumentError, NotSupportedError, check

# DLPack's device type codes (dlpack.h, DLDeviceType).
_DLPACK_CPU = 1
_DLPACK_DEVICES = {2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                   10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}


@dataclass(frozen=True)
class DeviceView:
    """Device memory as an exporter describes it."""
    ptr: int
    nbytes: int
    dtype: np.dtype
    shape: Tuple[int, ...]
    device: str  # "cuda"
    readonly: bool
    contiguous: bool


View = Union[np.ndarray, DeviceView]
Exporter = Callable[[Any], Optional[View]]


class Buffer(NamedTuple):
    """A resolved buffer: what the library needs, and the object to keep
    alive while the library uses the memory."""
    obj: Any                      # what the caller passed
    array: Optional[np.ndarray]   # the host view (None for device memory)
    ptr: Any                      # cffi pointer to the first byte
    datatype: Datatype
    count: int                    # elements of `datatype`
    nbytes: int
    # The shape in elements of `datatype`: the object's own shape, or
    # (count,) when dtype= reinterprets it with another element size.
    shape: Tuple[int, ...]
    # The numpy dtype results get: the object's own, or the datatype's when
    # dtype= changed the element size.
    result_dtype: Optional[np.dtype]
    device: str                   # "cpu", or e.g. "cuda"
    readonly: bool


def datatype_size(datatype: Datatype) -> int:
    """Bytes per element of `datatype`."""
    known = NUMPY_DTYPES.get(datatype)
    if known is not None:
        return known.itemsize
    size = ffi.new("size_t *")
    check(lib.smd_datatype_size(datatype, size))
    return size[0]


# ---- exporters -------------------------------------------------------------

def _numpy(obj: Any) -> Optional[View]:
    return obj if isinstance(obj, np.ndarray) else None


def _cuda_array_interface(obj: Any) -> Optional[View]:
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        return None
    dtype = np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    contiguous = strides is None or tuple(strides) == _c_strides(shape, dtype.itemsize)
    return DeviceView(ptr=ptr, nbytes=int(np.prod(shape, dtype=np.int64)) * dtype.itemsize,
                      dtype=dtype, shape=shape, device="cuda", readonly=bool(readonly),
                      contiguous=contiguous)


def _dlpack(obj: Any) -> Optional[View]:
    if not (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")):
        return None
    kind, index = obj.__dlpack_device__()
    if kind == _DLPACK_CPU:
        if hasattr(obj, "__array_interface__") or not hasattr(np, "from_dlpack"):
            return None  # the array interface views it writable
        return np.from_dlpack(obj)
    name = _DLPACK_DEVICES.get(int(kind), f"device type {int(kind)}")
    raise NotSupportedError(f"{type(obj).__name__} on {name}:{index} (DLPack): this release "
                            "of smd runs collectives on host memory only")


def _array_interface(obj: Any) -> Optional[View]:
    if not hasattr(obj, "__array_interface__"):
        return None
    return np.asarray(obj)  # a view: numpy honours the interface's pointer


def _buffer_protocol(obj: Any) -> Optional[View]:
    try:
        view = memoryview(obj)
    except TypeError:
        return None
    return np.asarray(view)


_exporters: List[Exporter] = [_numpy, _cuda_array_interface, _dlpack, _array_interface,
                              _buffer_protocol]


def register_exporter(exporter: Exporter, *, first: bool = True) -> None:
    """Add a way to see an object's memory: `exporter(obj)` returns a numpy
    array viewing host memory, a DeviceView, or None when `obj` is not its
    kind. With first=True it is tried before the built-in ones."""
    if first:
        _exporters.insert(0, exporter)
    else:
        _exporters.append(exporter)


def _c_strides(shape: Sequence[int], itemsize: int) -> Tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


# ---- resolving -------------------------------------------------------------

def _export(obj: Any, name: str) -> View:
    for exporter in _exporters:
        view = exporter(obj)
        if view is not None:
            return view
    raise InvalidArgumentError(
        f"{name}: a {type(obj).__name__} does not expose its memory (expected a numpy array or "
        "an object with the buffer protocol, __array_interface__, __cuda_array_interface__ or "
        "DLPack; wrap Python lists with numpy.asarray)")


def _count(nbytes: int, datatype: Datatype, name: str) -> int:
    size = datatype_size(datatype)
    if nbytes % size:
        raise InvalidArgumentError(f"{name}: {nbytes} bytes are not a whole number of "
                                   f"{datatype.name.lower()} elements ({size} bytes each)")
    return nbytes // size


def as_buffer(obj: Any, *, dtype: DatatypeLike = None, writable: bool = False,
              name: str = "buffer") -> Buffer:
    """Resolve `obj` into a Buffer.

    dtype: None takes the datatype from the array's own dtype; an explicit
    datatype reinterprets the bytes (a uint16 array with dtype="bfloat16").
    writable: the library will write into it (outputs, receive buffers).
    name: how errors call it ("out", "buf").
    Raises InvalidArgumentError for memory that is not C-contiguous, read-only
    when it must be written, or of no smd datatype.
    """
    if type(obj) is np.ndarray and dtype is None:  # the common case, kept short
        datatype = _FROM_NUMPY.get(obj.dtype)
        flags = obj.flags
        if datatype is not None and flags.c_contiguous and (flags.writeable or not writable):
            return Buffer(obj, obj, ffi.from_buffer(obj, require_writable=writable), datatype,
                          obj.size, obj.nbytes, obj.shape, obj.dtype, "cpu", not flags.writeable)
    tensor = tensors.host_view(obj)
    if tensor is not None:
        view, carried = tensor
        dtype = carried if dtype is None else dtype
    else:
        view = _export(obj, name)
    if isinstance(view, DeviceView):
        if not view.contiguous:
            raise InvalidArgumentError(f"{name} is not C-contiguous")
        if writable and view.readonly:
            raise InvalidArgumentError(f"{name} is read-only")
        datatype = datatype_of(view.dtype) if dtype is None else resolve_datatype(dtype)
        count = _count(view.nbytes, datatype, name)
        same = view.dtype.itemsize == datatype_size(datatype)
        return Buffer(obj=obj, array=None, ptr=ffi.cast("void *", view.ptr), datatype=datatype,
                      count=count, nbytes=view.nbytes, shape=view.shape if same else (count,),
                      result_dtype=view.dtype if same else NUMPY_DTYPES.get(datatype),
                      device=view.device, readonly=view.readonly)

    array = view
    if not array.flags.c_contiguous:
        raise InvalidArgumentError(f"{name} is not C-contiguous (use numpy.ascontiguousarray)")
    if writable and not array.flags.writeable:
        hint = tensors.read_only_reason(obj)
        if not hint and not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack__"):
            hint = " (numpy views DLPack tensors read-only: pass an object with the buffer protocol)"
        raise InvalidArgumentError(f"{name} is read-only{hint}")
    if dtype is None:
        datatype, count = datatype_of(array.dtype), array.size
    else:
        datatype = resolve_datatype(dtype)
        count = _count(array.nbytes, datatype, name)
    same = array.dtype.itemsize == datatype_size(datatype)
    return Buffer(obj=obj, array=array, ptr=ffi.from_buffer(array, require_writable=writable),
                  datatype=datatype, count=count, nbytes=array.nbytes,
                  shape=array.shape if same else (count,),
                  result_dtype=array.dtype if same else NUMPY_DTYPES.get(datatype),
                  device="cpu", readonly=not array.flags.writeable)


def require_host(*buffers: Optional[Buffer]) -> None:
    """Device memory is not supported by this release."""
    for b in buffers:
        if b is not None and b.device != "cpu":
            raise NotSupportedError(f"a {b.device} buffer was given: this release of smd runs "
                                    "collectives on host memory only")


def new_output(like: Buffer, shape: Tuple[int, ...]) -> Buffer:
    """A new uninitialised host array for results of `like`'s datatype, with
    `like`'s numpy dtype (so bfloat16 bits stay uint16) and the given shape
    (in elements of the datatype), as a Buffer. A torch tensor input gets a
    tensor of its dtype (results come back as the input's array type)."""
    require_host(like)
    tensor = tensors.empty_like_kind(like.obj, shape)
    if tensor is not None and tensor.element_size() == datatype_size(like.datatype):
        return as_buffer(tensor, dtype=like.datatype, writable=True, name="out")
    if like.result_dtype is None:
        raise NotSupportedError(f"{like.datatype.name.lower()} has no numpy dtype: pass out=")
    array = np.empty(shape, dtype=like.result_dtype)
    return Buffer(array, array, ffi.from_buffer(array), like.datatype, array.size, array.nbytes,
                  array.shape, array.dtype, "cpu", False)
