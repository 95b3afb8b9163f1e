// Memory the process gave back to the system, as plugins that hook the
// memory calls report it (host->mem_unmapped; ucx through UCX's UCM). The
// report runs inside munmap & co., on any thread, so it may neither
// allocate nor lock: it appends the range to a fixed ring of recent
// ranges, and each registration cache reads what is new since it last
// looked.
//
// Coverage: a registration may be kept for reuse only while every unmap
// reaches the ring, i.e. while some plugin context that reports every
// unmap (SMD_TRANSPORT_CAP_REPORTS_UNMAPS) lives. Each stretch of time
// with at least one such context is a coverage period with its own
// number; a registration made in one period is valid for reuse only in
// that same period.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace smd {

struct UnmapCursor {
  uint64_t seen = 0;
};

// Records [start, end). Lock-free and allocation-free.
void unmap_log_note(uintptr_t start, uintptr_t end);

// Points the cursor at "now".
void unmap_log_attach(UnmapCursor *cursor);

// Appends the ranges recorded since the cursor to *ranges and advances it.
// False if some were lost (the ring wrapped, or a writer was still busy):
// the caller must then assume any memory may have gone.
bool unmap_log_read(UnmapCursor *cursor, std::vector<std::pair<uintptr_t, uintptr_t>> *ranges);

// A context that reports every unmap starts or stops living.
void unmap_coverage_begin();
void unmap_coverage_end();
// The current coverage period, or 0 when no context reports unmaps.
uint64_t unmap_coverage();

}  // namespace smd
