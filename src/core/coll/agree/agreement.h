// Agreement on a collective call before a point-to-point algorithm runs
// (SMD_CHECK=full; the default check is call_check.h): ranks that disagree on the collective,
// datatype, op, count or root would otherwise exchange messages that happen to fit and return
// SMD_SUCCESS with different data, or wait until SMD_TIMEOUT. The arena
// (direct) algorithms check their descriptors instead.
#pragma once

#include "core/coll/collective.h"

namespace smd {

class Comm;

// Collective over `c`: every member learns the lowest and the highest
// fingerprint of the call over all members (a dissemination min/max
// reduction, ceil(log2 p) rounds of one 64-byte message each), so all of
// them throw SMD_ERR_MISMATCH, naming both calls, when any two differ.
void agree_on_call(Comm &c, const CollArgs &a);

// SMD_CHECK: off (no check), fast (the default: the call check of
// call_check.h, which rides beside the algorithm's own messages) or full
// (fast plus agree_on_call before every call). Read when a communicator
// runs its first collective.
enum class CheckMode { kOff, kFast, kFull };
CheckMode check_mode();

}  // namespace smd
