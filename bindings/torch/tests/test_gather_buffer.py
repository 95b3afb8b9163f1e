"""GatherBuffer (smd.torch.gather_buffer): the memory ShardedDataParallel
gathers a sharded parameter into keeps its address, holds what was
written until released, and gives its pages back when released."""

import sys

import pytest
import torch

from smd.torch import gather_buffer
from smd.torch.gather_buffer import GatherBuffer
from conftest import resident_pages

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="MADV_DONTNEED and mincore as Linux has them")


def pages_of(tensor):
    return resident_pages(tensor.data_ptr(), tensor.numel() * tensor.element_size())


@linux_only
@pytest.mark.parametrize("count,dtype", [(0, torch.float32), (1000, torch.float32),
                                         (1 << 20, torch.float32), ((1 << 20) + 3, torch.float64),
                                         (4097, torch.bfloat16), (77, torch.float16)])
def test_release_gives_pages_back_at_the_same_address(count, dtype):
    buf = GatherBuffer(count, dtype)
    t = buf.tensor
    assert (t.numel(), t.dtype, t.is_contiguous()) == (count, dtype, True)
    address = t.data_ptr()
    assert pages_of(t) == 0  # nothing touched yet
    for value in (1.5, 2.5):
        t.fill_(value)
        assert torch.equal(t, torch.full((count,), value, dtype=dtype))
        if count:
            assert pages_of(t) > 0
        buf.release()
        assert pages_of(t) == 0
        assert t.data_ptr() == address
        assert not t.any()  # released pages read as zeros, never the old values


@linux_only
@pytest.mark.skipif(not gather_buffer._HUGE, reason="no transparent huge pages here")
def test_a_buffer_of_huge_pages_starts_at_a_huge_page():
    huge = gather_buffer._HUGE
    buf = GatherBuffer(2 * huge // 4 + 5, torch.float32)
    assert buf.tensor.data_ptr() % huge == 0
