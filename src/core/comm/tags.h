// The 44-bit tags the core puts on transport messages (the plugin ABI
// promises the upper 20 bits stay zero):
//   [kind:2][communicator id:20][low:22]
// Collectives use low = (sequence:22-S, step:S), where S, the step width,
// depends on the communicator's size (CollTagSpace): 12 up to 2048 ranks,
// one more bit per doubling, 17 at kMaxCommRanks. A step never wraps nor
// spills into the sequence; the sequence (which carries the call's salt)
// narrows instead (coll_tag_seq_field), and may wrap: messages between two
// ranks with equal tags match in order. Point-to-point uses the user's
// tag; setup and group-formation traffic have kinds of their own.
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
constexpr uint32_t kSetupCheckFingerprint = (3u << 20) | 0;  // coll/agree/call_check.cc
constexpr uint32_t kSetupCheckPoison = (3u << 20) | 1;       // coll/agree/call_check.cc
constexpr uint32_t kSetupUserEnvelope = (3u << 20) | 2;      // comm/p2p_matcher.cc
constexpr uint32_t kSetupUserReceipt = (3u << 20) | 3;       // comm/p2p_matcher.cc

// The most members a communicator may have: a collective on p ranks uses
// steps below 2p (a ring reduce-scatter, then a ring allgather whose steps
// start at p), and at this size those take 17 of the 22 low bits, leaving
// 5 for the sequence. smd_comm_init refuses larger worlds.
constexpr int kMaxCommRanks = 1 << 16;

// The narrowest step field, used up to 2048 ranks (the layout before
// communicators that large were supported).
constexpr unsigned kMinStepBits = 12;

// Bits a step of a collective on `ranks` members needs: steps are < 2 * ranks.
constexpr unsigned coll_step_bits(int ranks) {
  unsigned b = kMinStepBits;
  while ((uint64_t(1) << b) < 2 * uint64_t(ranks > 0 ? ranks : 1)) ++b;
  return b;
}

// One communicator's collective tags: its id and its step width, fixed
// when it is made, so building a tag stays a few shifts and masks.
struct CollTagSpace {
  uint32_t comm = 0;
  unsigned step_bits = kMinStepBits;
};

constexpr CollTagSpace coll_tag_space(uint32_t comm, int ranks) {
  return CollTagSpace{comm, coll_step_bits(ranks)};
}

// The sequence field holds the low 10 bits of seq (call counter in bits
// 0-3, the call's salt XORed into bits 4-9: Comm::next_seq); narrower than
// 10 bits, the bits above its width fold onto it, so every salt bit still
// counts: equal counters with salts that differ give different fields
// down to 6 bits of width, and at 5 bits two salts share each field.
constexpr uint32_t coll_tag_seq_field(CollTagSpace s, uint64_t seq) {
  unsigned width = 22 - s.step_bits;
  uint32_t v = static_cast<uint32_t>(seq & 0x3FF);
  return (v ^ (v >> width)) & ((1u << width) - 1);
}

// step must be below 2 * the communicator's size (at most 2^step_bits).
constexpr uint64_t coll_tag(CollTagSpace s, uint64_t seq, uint32_t step) {
  return make_tag(TagKind::kColl, s.comm,
                  (coll_tag_seq_field(s, seq) << s.step_bits) | (step & ((1u << s.step_bits) - 1)));
}

// The fields of a collective tag, for tests and diagnostics.
constexpr uint32_t coll_tag_step(CollTagSpace s, uint64_t tag) {
  return static_cast<uint32_t>(tag & ((1u << s.step_bits) - 1));
}
constexpr uint32_t coll_tag_seq(CollTagSpace s, uint64_t tag) {
  return static_cast<uint32_t>((tag & kTagLowMask) >> s.step_bits);
}

}  // namespace smd
