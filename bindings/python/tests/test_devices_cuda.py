"""Device arrays on a real GPU (skipped without CuPy and a CUDA device, as
here): CuPy, torch CUDA and JAX arrays through the collectives, results of
the caller's type. The library stages device memory through host memory
(docs/GPU.md); with a stream, the call is ordered on it (the stream proxy)."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def cupy():
    cp = pytest.importorskip("cupy", reason="CuPy is not importable (GPU machine only)")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"no CUDA device: {e}")
    return cp


def test_cupy_round_trip(world, cupy):
    x = cupy.arange(8, dtype=cupy.float32) + world.rank
    got = world.allreduce(x)
    assert got is x
    expected = np.arange(8) * world.size + sum(range(world.size))
    np.testing.assert_array_equal(cupy.asnumpy(x), expected)
    g = world.allgather(cupy.full(3, world.rank, cupy.int32))
    assert isinstance(g, cupy.ndarray) and g.shape == (world.size, 3)
    np.testing.assert_array_equal(cupy.asnumpy(g)[:, 0], np.arange(world.size))


def test_cupy_through_dlpack(world, cupy):
    class DLPackOnly:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, stream=None):
            return self._a.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    x = cupy.ones(5, cupy.float64)
    out = cupy.empty(5, cupy.float64)
    world.allreduce(DLPackOnly(x), out=out)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.full(5, world.size))


def test_torch_cuda_tensor(world, cupy):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    t = torch.ones(4, device="cuda") * (world.rank + 1)
    world.allreduce(t)
    torch.cuda.synchronize()
    assert t.cpu().tolist() == [world.size * (world.size + 1) / 2] * 4
    g = world.allgather(t)
    assert isinstance(g, torch.Tensor) and g.is_cuda and tuple(g.shape) == (world.size, 4)


def test_jax_array_is_an_input(world, cupy):
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.ones(6, jnp.float32)
    if x.devices().pop().platform != "gpu":
        pytest.skip("jax has no GPU here")
    out = cupy.empty(6, cupy.float32)
    world.allreduce(x, out=out)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.full(6, world.size))


def test_a_call_on_a_stream_is_ordered_on_it(world, cupy):
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.ones(2, cupy.float32)  # filled on s, before the call
        out = cupy.empty(2, cupy.float32)
    world.allreduce(x, out=out, stream=s)
    s.synchronize()  # the call's result is in place once s's work has run
    np.testing.assert_array_equal(cupy.asnumpy(out), np.full(2, world.size))
