// Memory the process gives back to the system (munmap, madvise, brk
// shrinking, ...), as UCX's memory hooks (UCM) report it, passed on to
// the core (host->mem_unmapped), whose registration cache forgets the
// regions whose pages are gone. The UCM callback runs inside those calls,
// on any thread; the core's report function neither locks nor allocates.
#pragma once

#include <cstddef>

namespace smd_ucx {

using UnmapReport = void (*)(const void *start, size_t size);

// Starts reporting unmaps to `report` (the first caller installs the UCM
// handler). False if UCM cannot deliver the events here: then nothing is
// installed and this context must not claim SMD_TRANSPORT_CAP_REPORTS_UNMAPS.
bool unmap_hook_attach(UnmapReport report);
void unmap_hook_detach();

}  // namespace smd_ucx
