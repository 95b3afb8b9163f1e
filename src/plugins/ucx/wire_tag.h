// UCX matches tags per worker, not per endpoint: a receive posted for one
// peer would take a message from any. The core uses only the low
// SMD_TRANSPORT_TAG_BITS bits of a tag, so the upper bits carry the
// sender's world rank and receives match all 64 bits.
#pragma once

#include <cstdint>

#include "smd_transport.h"

namespace smd_ucx {

constexpr unsigned kRankShift = SMD_TRANSPORT_TAG_BITS;
constexpr uint64_t kUserTagMask = (uint64_t(1) << kRankShift) - 1;
// The largest world whose ranks fit above the core's tag bits.
constexpr int64_t kMaxWorld = int64_t(1) << (64 - kRankShift);
constexpr uint64_t kFullMask = ~uint64_t(0);

constexpr bool tag_fits(uint64_t tag) { return (tag & ~kUserTagMask) == 0; }

constexpr uint64_t wire_tag(int32_t sender, uint64_t tag) {
  return (uint64_t(uint32_t(sender)) << kRankShift) | (tag & kUserTagMask);
}

constexpr int32_t wire_sender(uint64_t wire) { return int32_t(wire >> kRankShift); }

}  // namespace smd_ucx
