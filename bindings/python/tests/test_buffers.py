"""The buffer layer: what is accepted, what is refused and how."""

import array

import numpy as np
import pytest

import smd
from smd import buffers


def test_numpy_dtypes_map_to_datatypes():
    for dt in smd.Datatype:
        if dt is smd.Datatype.BFLOAT16:
            continue
        b = smd.as_buffer(np.zeros(3, dt.name.lower()))
        assert b.datatype is dt and b.count == 3


def test_bfloat16_needs_asking():
    bits = np.zeros(4, np.uint16)
    with pytest.raises(smd.InvalidArgumentError, match="bfloat16"):
        smd.as_buffer(bits)
    for spec in ("bfloat16", smd.bfloat16, "BFLOAT16"):
        b = smd.as_buffer(bits, dtype=spec)
        assert b.datatype is smd.Datatype.BFLOAT16 and b.count == 4


def test_bfloat16_conversions():
    x = np.array([1.0, -2.5, 3.0e38, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8], np.float32)
    bits = smd.to_bfloat16(x)
    assert bits.dtype == np.uint16
    # Round to nearest, ties to even: 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6.
    np.testing.assert_array_equal(smd.from_bfloat16(bits)[[0, 1, 3, 4]],
                                  np.array([1.0, -2.5, 1.0, 1.0 + 2.0 ** -6], np.float32))
    assert np.isnan(smd.from_bfloat16(smd.to_bfloat16(np.float32("nan"))))


def test_reinterpreting_bytes():
    raw = bytearray(np.arange(4, dtype=np.float32).tobytes())
    b = smd.as_buffer(raw, dtype="float32")
    assert b.count == 4 and b.shape == (4,) and b.result_dtype == np.float32
    with pytest.raises(smd.InvalidArgumentError, match="whole number"):
        smd.as_buffer(bytearray(6), dtype="float32")


def test_buffer_protocol_objects(world):
    got = world.allreduce(array.array("d", [1.0, 2.0]))
    np.testing.assert_array_equal(got, [world.size, 2.0 * world.size])
    got = world.allreduce(memoryview(np.ones(3, np.int64)))
    np.testing.assert_array_equal(got, np.full(3, world.size))
    # The result goes into buf: a read-only one needs out=.
    with pytest.raises(smd.InvalidArgumentError, match="read-only.*out="):
        world.allreduce(b"\x01\x02")
    out = bytearray(2)
    assert world.allreduce(b"\x01\x02", out=out) is out
    assert list(out) == [world.size, 2 * world.size]


class ArrayInterface:
    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


def test_array_interface_without_copy(world):
    base = np.ones(4, np.float32)
    world.allreduce(ArrayInterface(base), out=ArrayInterface(base))
    np.testing.assert_array_equal(base, np.full(4, world.size, np.float32))


class DLPackOnly:
    """A host tensor exposing only DLPack."""
    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.skipif(not hasattr(np, "from_dlpack"), reason="numpy without from_dlpack")
def test_dlpack_host(world):
    got = world.allreduce(DLPackOnly(np.ones(3, np.float64)), out=np.empty(3))
    np.testing.assert_array_equal(got, np.full(3, world.size, np.float64))
    # numpy imports DLPack read-only, so such a tensor cannot be an output.
    with pytest.raises(smd.InvalidArgumentError, match="read-only.*DLPack"):
        world.allreduce(np.ones(3), out=DLPackOnly(np.ones(3)))


def test_stream_argument_is_passed_through(world):
    with pytest.raises(smd.NotSupportedError, match="stream"):
        world.allreduce(np.ones(1), stream=0x1234)


def test_register_exporter(world):
    class Wrapped:
        def __init__(self, a):
            self.payload = a

    def exporter(obj):
        return obj.payload if isinstance(obj, Wrapped) else None

    buffers.register_exporter(exporter)
    try:
        wrapped = Wrapped(np.ones(2, np.int32))
        assert world.allreduce(wrapped) is wrapped  # the caller's object holds the result
        np.testing.assert_array_equal(wrapped.payload, np.full(2, world.size, np.int32))
    finally:
        buffers._exporters.remove(exporter)


def test_refusals(world):
    x = np.ones((4, 4), np.float32)
    with pytest.raises(smd.InvalidArgumentError, match="buf is not C-contiguous"):
        world.allreduce(x[:, ::2])
    with pytest.raises(smd.InvalidArgumentError, match="out is not C-contiguous"):
        world.allreduce(x, out=np.empty((4, 8), np.float32)[:, ::2])
    ro = np.ones(3)
    ro.flags.writeable = False
    # Inputs may be read-only; a result written into buf needs out= then.
    np.testing.assert_array_equal(world.allreduce(ro, out=np.empty(3)), np.full(3, world.size))
    with pytest.raises(smd.InvalidArgumentError, match="buf is read-only.*pass out="):
        world.allreduce(ro)
    np.testing.assert_array_equal(world.allgather(ro)[world.rank], np.ones(3))
    with pytest.raises(smd.InvalidArgumentError, match="out is read-only"):
        world.allreduce(np.ones(3), out=ro)
    with pytest.raises(smd.InvalidArgumentError, match="buf is read-only"):
        world.recv(ro, world.rank)
    with pytest.raises(smd.InvalidArgumentError, match="int16"):
        world.allreduce(np.ones(2, np.int16))
    with pytest.raises(smd.InvalidArgumentError, match="native byte order"):
        world.allreduce(np.ones(2, ">f4"))
    with pytest.raises(smd.InvalidArgumentError, match="does not expose its memory"):
        world.allreduce([1.0, 2.0])
    with pytest.raises(smd.InvalidArgumentError, match="out holds 2 elements"):
        world.allreduce(np.ones(3), out=np.empty(2))
    with pytest.raises(smd.InvalidArgumentError, match="out holds float32"):
        world.allreduce(np.ones(3), out=np.empty(3, np.float32))
    with pytest.raises(smd.InvalidArgumentError, match="unknown reduction op"):
        world.allreduce(np.ones(3), op="mean")
    with pytest.raises(smd.InvalidArgumentError, match="unknown datatype"):
        world.allreduce(np.ones(3), dtype="float128x")
    if world.size > 1:
        with pytest.raises(smd.InvalidArgumentError, match="not a multiple"):
            world.reduce_scatter(np.ones(world.size * 3 + 1))
    with pytest.raises(smd.InvalidArgumentError, match="overlap"):
        big = np.ones(8)
        world.allreduce(big[:4], out=big[2:6])
    # An InvalidArgumentError is a ValueError too.
    with pytest.raises(ValueError):
        world.allreduce(np.ones(2, np.int16))
