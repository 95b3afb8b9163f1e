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
  device memory;
- DLPack (``__dlpack__``/``__dlpack_device__``, read by :mod:`smd.dlpack`
  for host and device tensors alike: JAX arrays, CuPy, torch): host tensors
  are viewed read-only without a copy, device tensors are device memory,
  exported for the call's stream;
- ``__array_interface__`` (viewed through numpy, no copy);
- the buffer protocol (bytes, bytearray, memoryview, array.array, ...).

A device buffer carries the stream its call runs on (``stream=``, else the
framework's current stream: :func:`smd.devices.caller_stream`); results
the binding allocates for it are of the caller's array type
(:func:`smd.devices.empty_like`). What the library does with device memory
is the library's (docs/GPU.md). :func:`register_exporter` adds exporters
for other array types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import devices, dlpack, tensors
from ._ffi import ffi, lib
from .dtypes import _FROM_NUMPY, NUMPY_DTYPES, Datatype, DatatypeLike, datatype_of, resolve_datatype
from .errors import InvalidArgumentError, NotSupportedError, check

# DLPack devices whose memory smd's CUDA path may reach.
_DLPACK_CUDA = (dlpack.CUDA, dlpack.CUDA_HOST, dlpack.CUDA_MANAGED)


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
    # The datatype when numpy's dtype cannot say (bfloat16 bits as uint16).
    datatype: Optional[Datatype] = None


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
    # Device memory: the CUDA stream the call runs on (0: the legacy default
    # stream, which the library passes as NULL). None for host memory.
    stream: Optional[int] = None


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


def _dlpack(obj: Any, stream: Optional[int] = None) -> Optional[View]:
    """`stream`: the one the call runs on (None: the caller's default)."""
    if not (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")):
        return None
    kind, index = obj.__dlpack_device__()
    if int(kind) == dlpack.CPU:
        if hasattr(obj, "__array_interface__"):
            return None  # the array interface views it writable
        return dlpack.read(obj).host_array()
    if int(kind) not in _DLPACK_CUDA:
        name = dlpack.DEVICE_NAMES.get(int(kind), f"device type {int(kind)}")
        raise NotSupportedError(f"{type(obj).__name__} on {name}:{index} (DLPack): smd reaches "
                                "host and CUDA memory only")
    if stream is None:
        stream = devices.caller_stream(obj)
    t = dlpack.read(obj, stream or devices.DLPACK_LEGACY_STREAM)
    return DeviceView(ptr=t.ptr, nbytes=t.nbytes, dtype=t.dtype, shape=t.shape, device="cuda",
                      readonly=devices.is_immutable(obj), contiguous=t.contiguous,
                      datatype=Datatype.BFLOAT16 if t.bfloat16 else None)


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

def _export(obj: Any, name: str, stream: Optional[int]) -> View:
    for exporter in _exporters:
        view = _dlpack(obj, stream) if exporter is _dlpack else exporter(obj)
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
              name: str = "buffer", stream: Any = None) -> Buffer:
    """Resolve `obj` into a Buffer.

    dtype: None takes the datatype from the array's own dtype; an explicit
    datatype reinterprets the bytes (a uint16 array with dtype="bfloat16").
    writable: the library will write into it (outputs, receive buffers).
    name: how errors call it ("out", "buf").
    stream: for device memory, the stream the call runs on (an int handle,
    or a torch/CuPy stream object); None: the framework's current stream.
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
        explicit = None if stream is None else devices.stream_handle(stream)
        view = _export(obj, name, explicit)
    if isinstance(view, DeviceView):
        if not view.contiguous:
            raise InvalidArgumentError(f"{name} is not C-contiguous")
        if writable and view.readonly:
            raise InvalidArgumentError(f"{name} is read-only")
        if dtype is None:
            dtype = view.datatype
        datatype = datatype_of(view.dtype) if dtype is None else resolve_datatype(dtype)
        count = _count(view.nbytes, datatype, name)
        same = view.dtype.itemsize == datatype_size(datatype)
        return Buffer(obj=obj, array=None, ptr=ffi.cast("void *", view.ptr), datatype=datatype,
                      count=count, nbytes=view.nbytes, shape=view.shape if same else (count,),
                      result_dtype=view.dtype if same else NUMPY_DTYPES.get(datatype),
                      device=view.device, readonly=view.readonly,
                      stream=devices.caller_stream(obj) if explicit is None else explicit)

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


def require_host(*buffers: Optional[Buffer], what: str = "this call") -> None:
    """For the calls the binding carries out on host views (gather, scatter)."""
    for b in buffers:
        if b is not None and b.device != "cpu":
            raise NotSupportedError(f"a {b.device} buffer was given: {what} works on host "
                                    "memory only")


def new_output(like: Buffer, shape: Tuple[int, ...]) -> Buffer:
    """A new uninitialised host array for results of `like`'s datatype, with
    `like`'s numpy dtype (so bfloat16 bits stay uint16) and the given shape
    (in elements of the datatype), as a Buffer. A torch tensor input gets a
    tensor of its dtype, a device array one of its type on its device
    (results come back as the input's array type)."""
    if like.device != "cpu":
        result = devices.empty_like(like.obj, shape, like.result_dtype)
        return as_buffer(result, dtype=like.datatype, writable=True, name="out",
                         stream=like.stream)
    tensor = tensors.empty_like_kind(like.obj, shape)
    if tensor is not None and tensor.element_size() == datatype_size(like.datatype):
        return as_buffer(tensor, dtype=like.datatype, writable=True, name="out")
    if like.result_dtype is None:
        raise NotSupportedError(f"{like.datatype.name.lower()} has no numpy dtype: pass out=")
    array = np.empty(shape, dtype=like.result_dtype)
    return Buffer(array, array, ffi.from_buffer(array), like.datatype, array.size, array.nbytes,
                  array.shape, array.dtype, "cpu", False)
