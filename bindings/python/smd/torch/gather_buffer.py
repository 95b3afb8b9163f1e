"""GatherBuffer: the memory a sharded parameter is gathered into, an
anonymous memory mapping of its own whose pages go back to the system when
it is released, instead of a block of the C library's heap.

ShardedDataParallel gathers a parameter before each use and lets it go
after: with heap storages, glibc keeps the freed blocks (below its mmap
threshold, which rises to the size of the first large block freed) and
the next step's allocations land around them, so a process's peak grows
beyond the memory it uses (docs/SHARDING.md has the measurement). A
mapping keeps its address for the life of the buffer, so a view of it that
autograd saved for a backward reads the values again once the buffer is
gathered again; released, its pages hold nothing (madvise MADV_DONTNEED:
the next write faults in fresh zeroed pages).
"""

from __future__ import annotations

import mmap

import torch

#: Where the system cannot drop a mapping's pages, a released buffer keeps
#: them (correct, only not smaller).
_DROP = getattr(mmap, "MADV_DONTNEED", None)


def _huge_page_bytes() -> int:
    """The transparent huge page's size where the system has them (Linux),
    else 0."""
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        return 0
    try:
        with open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


#: A buffer of at least one huge page is mapped with huge pages where it
#: can be: filling 4 MiB after a release then faults twice instead of 1024
#: times (about 0.2 ms instead of 2-4 ms on the machine of docs/SHARDING.md).
_HUGE = _huge_page_bytes()


class GatherBuffer:
    """`count` elements of `dtype` in a mapping of their own: `tensor` is
    them, flat (the same address for the buffer's life)."""

    __slots__ = ("_map", "tensor")

    def __init__(self, count: int, dtype: torch.dtype) -> None:
        # torch's own sizes: numpy has no bfloat16
        nbytes = count * torch.empty((), dtype=dtype).element_size()
        huge = _HUGE if _HUGE and nbytes >= _HUGE else 0
        # A mapping of 0 bytes is refused: an empty buffer maps one byte.
        # Private: dropping a shared mapping's pages would keep them in its
        # shared-memory object. With huge pages, one more huge page's room
        # lets the buffer start at a huge page's boundary.
        self._map = mmap.mmap(-1, max(nbytes + huge, 1), flags=mmap.MAP_PRIVATE)
        whole = torch.frombuffer(self._map, dtype=torch.uint8)
        start = -whole.data_ptr() % huge if huge else 0
        if huge:
            # Huge pages over the buffer's whole huge pages only: one over
            # its tail would hold memory past its end.
            covered = nbytes // huge * huge
            try:
                self._map.madvise(mmap.MADV_HUGEPAGE, start, covered)
                self._map.madvise(mmap.MADV_NOHUGEPAGE, start + covered,
                                  len(self._map) - start - covered)
            except OSError:
                pass  # huge pages turned off: ordinary pages
        self.tensor = whole[start:start + nbytes].view(dtype)

    def release(self) -> None:
        """Hand the pages back to the system: the values are gone (reads
        give zeros until the next gather writes them)."""
        if _DROP is not None:
            self._map.madvise(_DROP)
