// Agreement on a collective call before a point-to-point algorithm runs:
// ranks that disagree on the collective, datatype, op, count or root
// would otherwise exchange messages that happen to fit and return
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

// SMD_CHECK: whether agree_on_call runs ("fast") or not ("off", the
// default while it costs a round trip per step before every call). Read
// when a communicator runs its first collective.
bool agreement_enabled();

}  // namespace smd
