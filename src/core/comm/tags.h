// The 44-bit tags the core puts on transport messages (the plugin ABI
// promises the upper 20 bits stay zero):
//   [kind:2][communicator id:20][low:22]
// Collectives use low = (sequence:10, step:12); point-to-point uses the
// user's tag; setup and group-formation traffic have kinds of their own.
// Messages between two ranks with equal tags match in order, so sequence
// numbers may wrap.
#pragma once

#include <cstdint>

namespace smd {

enum class TagKind : uint64_t { kColl = 0, kP2P = 1, kSetup = 2, kGroup = 3 };

constexpr uint32_t kTagCommMask = (1u << 20) - 1;
constexpr uint32_t kTagLowMask = (1u << 22) - 1;

constexpr uint64_t make_tag(TagKind kind, uint32_t comm, uint32_t low) {
  return (static_cast<uint64_t>(kind) << 42) | (static_cast<uint64_t>(comm & kTagCommMask) << 22) |
         (low & kTagLowMask);
}

// Low values of setup traffic that stays posted or recurs during a
// communicator's life, one per purpose (bits 20 and 21 set: the setup
// exchanges use small values, the agreement round bit 21 alone). Two
// purposes sharing a value would steal each other's messages.
constexpr uint32_t kSetupCheckFingerprint = (3u << 20) | 0;  // coll/call_check.cc
constexpr uint32_t kSetupCheckPoison = (3u << 20) | 1;       // coll/call_check.cc
constexpr uint32_t kSetupUserEnvelope = (3u << 20) | 2;      // comm/p2p_matcher.cc

constexpr uint64_t coll_tag(uint32_t comm, uint64_t seq, uint32_t step) {
  return make_tag(TagKind::kColl, comm,
                  static_cast<uint32_t>(((seq & 0x3FF) << 12) | (step & 0xFFF)));
}

}  // namespace smd
