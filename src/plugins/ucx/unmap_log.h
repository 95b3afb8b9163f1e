// Memory the process gives back to the system (munmap, madvise, brk
// shrinking, ...), as UCX's memory hooks (UCM) report it. The callback
// runs inside those calls, on any thread, so it may neither allocate nor
// lock: it appends the range to a fixed ring of recent ranges, and each
// context reads what is new since it last looked. A registration cache
// uses it to forget regions whose pages are gone.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace smd_ucx {

struct UnmapCursor {
  uint64_t seen = 0;
};

// Starts listening (the first caller installs the UCM handler) and points
// the cursor at "now". False if UCM cannot deliver the events here (then
// nothing is installed and the caller must not cache idle memory).
bool unmap_log_attach(UnmapCursor *cursor);
void unmap_log_detach();

// Appends the ranges unmapped since the cursor to *ranges and advances
// it. False if some were lost (the ring wrapped, or a writer was still
// busy): the caller must then assume any memory may have gone.
bool unmap_log_read(UnmapCursor *cursor,
                    std::vector<std::pair<uintptr_t, uintptr_t>> *ranges);

// For tests: record a range as the UCM callback would.
void unmap_log_note(uintptr_t start, uintptr_t end);

}  // namespace smd_ucx
