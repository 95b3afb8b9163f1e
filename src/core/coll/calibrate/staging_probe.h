// The staging range (stage_copy in stream_copy.h), timed with the node's
// own collectives.
//
// Which store a staging copy should use depends on the CPU by a factor of
// two or three either way (docs/PERFORMANCE.md): an ordinary store to a
// line a peer read must first take it back from the peer's cache, while
// streaming stores write around the caches and leave the peer to read
// memory. A probe that copies and reads on its own missed how much: the
// cost lies in how the collective's rounds overlap their staging with the
// peers' reads. So the probe runs the communicator's direct allreduce
// itself at sizes 4 KiB .. 256 KiB, the same calls both ways, alternately.
#pragma once

#include "core/coll/calibrate/calibration.h"

namespace smd {

class Comm;

// Whether a communicator just created should run the probe: its node's
// values were measured by this creation (every member holds the same
// values, so every member answers alike) and the ping-pong ran with both
// ranks on a CPU at once (else the timings would be the scheduler's).
bool staging_probe_due(Comm &comm, const Calibration &c);

// Collective over comm's members: sets c.stage_stream_min_bytes and
// c.stage_stream_max_bytes, the same on every member (the members' times
// are summed before deciding). Takes a few milliseconds.
void probe_staging(Comm &comm, Calibration &c);

}  // namespace smd
