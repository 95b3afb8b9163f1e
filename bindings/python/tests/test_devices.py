"""Device arrays without a device: objects exposing __cuda_array_interface__
or DLPack on CUDA are classified as device memory and handed to the library
with their pointer and the call's stream; here, without CUDA, the library
(or the binding, where the library would read the address) refuses them
cleanly. Host tensors through DLPack take the same reader and work."""

import ctypes

import numpy as np
import pytest

import smd
from smd import devices
from smd._ffi import ffi
from test_buffers import DLPackOnly


def _cuda_loaded():
    try:
        ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL | 4)  # RTLD_NOLOAD
        return True
    except OSError:
        return False


@pytest.fixture(autouse=True)
def no_cuda():
    """Fake device pointers are safe only where the library cannot take them
    for real ones (all ranks load CUDA alike, so they skip alike)."""
    if _cuda_loaded():
        pytest.skip("CUDA is loaded: fake device pointers would be looked at "
                    "(test_devices_cuda.py covers real ones)")


class FakeCudaArray:
    """Looks like a CuPy array; its pointer is never dereferenced."""

    def __init__(self, shape=(4,), stream=None, ptr=0x1000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (ptr, False),
                                         "version": 3, "strides": None}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


class FakeNamespace:
    """An array-API namespace whose empty() makes fake device arrays."""
    made = []

    def empty(self, shape, dtype=None, device=None):
        self.made.append((tuple(shape), np.dtype(dtype), device))
        return FakeCudaArrayWithNamespace(tuple(shape))


class FakeCudaArrayWithNamespace(FakeCudaArray):
    device = "cuda:0"

    def __array_namespace__(self):
        return FakeNamespace()


class CudaDLPack:
    """Host memory that claims to be on CUDA through DLPack (so the reader
    runs on a real capsule); records the stream it was asked for."""

    def __init__(self, a):
        self._a = a
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


def address(ptr):
    return int(ffi.cast("uintptr_t", ptr))


def test_cuda_array_interface_is_device_memory(world):
    b = smd.as_buffer(FakeCudaArray())
    assert (b.device, b.count, b.datatype, address(b.ptr)) == ("cuda", 4, smd.Datatype.FLOAT32,
                                                                0x1000)
    assert b.stream == 0  # no framework, no stream named: CUDA's legacy default stream
    assert smd.as_buffer(FakeCudaArray(stream=0x77)).stream == 0x77
    assert smd.as_buffer(FakeCudaArray(stream=0x77), stream=0x99).stream == 0x99


def test_pointer_and_stream_reach_the_call(world):
    call = world._allreduce(FakeCudaArray(), "sum", None, None, 0x1234)
    assert address(call.args[0]) == 0x1000 and address(call.args[1]) == 0x1000
    assert address(call.args[-1]) == 0x1234
    call = world._allreduce(FakeCudaArray(stream=0x55), "sum", None, None, None)
    assert address(call.args[-1]) == 0x55


def test_library_refuses_a_stream_without_cuda(world):
    with pytest.raises(smd.NotSupportedError, match="stream"):
        world.allreduce(FakeCudaArray(), stream=0x1234)
    with pytest.raises(smd.NotSupportedError, match="stream"):  # the array's own stream
        world.allreduce(FakeCudaArray(stream=0x1234))
    with pytest.raises(smd.NotSupportedError, match="stream"):
        world.iallreduce(FakeCudaArray(), stream=0x1234)


def test_null_stream_without_cuda_is_refused_before_the_library(world):
    # The library would take the address for host memory in this process.
    with pytest.raises(smd.NotSupportedError, match="not loaded CUDA"):
        world.allreduce(FakeCudaArray())
    with pytest.raises(smd.NotSupportedError, match="not loaded CUDA"):
        world.allreduce(FakeCudaArray(stream=0x77), stream=0)  # NULL named explicitly


def test_results_are_the_callers_array_type(world):
    FakeNamespace.made.clear()
    with pytest.raises(smd.NotSupportedError, match="stream"):
        world.allgather(FakeCudaArrayWithNamespace(), stream=0x1234)
    assert FakeNamespace.made == [((world.size, 4), np.dtype(np.float32), "cuda:0")]
    with pytest.raises(smd.NotSupportedError, match="pass out="):
        world.allgather(FakeCudaArray(), stream=0x1234)


def test_dlpack_device_tensor(world):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = CudaDLPack(host)
    b = smd.as_buffer(t, stream=0x1234)
    assert (b.device, b.shape, b.count, b.stream) == ("cuda", (2, 3), 6, 0x1234)
    assert address(b.ptr) == host.ctypes.data and t.streams == [0x1234]
    smd.as_buffer(t)
    assert t.streams[-1] == devices.DLPACK_LEGACY_STREAM  # no stream named: the legacy one
    with pytest.raises(smd.NotSupportedError, match="stream"):
        world.allreduce(CudaDLPack(host.copy()), stream=0x1234)


def test_dlpack_host_arrays_take_the_same_reader(world):
    src = np.arange(5, dtype=np.int32)
    b = smd.as_buffer(DLPackOnly(src))
    assert (b.device, b.count, b.readonly, address(b.ptr)) == ("cpu", 5, True, src.ctypes.data)
    got = world.allreduce(DLPackOnly(src), out=np.empty(5, np.int32))
    np.testing.assert_array_equal(got, src * world.size)


def test_dlpack_torch_cpu_tensor(world):
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float64)
    got = world.allreduce(DLPackOnly(t), out=np.empty(4))
    np.testing.assert_array_equal(got, np.arange(4) * world.size)


def test_dlpack_refuses_other_devices(world):
    class Vulkan(DLPackOnly):
        def __dlpack_device__(self):
            return (7, 1)

    with pytest.raises(smd.NotSupportedError, match="vulkan:1"):
        world.allreduce(Vulkan(np.ones(2)))
