// What the members of a communicator must agree on for one collective
// call, in a fixed-size form that travels in messages and compares as bytes.
#pragma once

#include <cstdint>
#include <string>

#include "core/coll/collective.h"

namespace smd {

// Fields the collective ignores are zero, so they cannot disagree; seq
// counts the checked calls on the communicator.
struct CallFingerprint {
  int32_t kind = 0, datatype = 0, op = 0, root = 0;
  uint64_t count = 0;
  uint64_t seq = 0;
  uint32_t subject = 0;  // CollArgs::subject
  uint32_t unused = 0;   // explicit padding: fingerprints compare as bytes
  bool operator<(const CallFingerprint &o) const;
  bool operator==(const CallFingerprint &o) const;
  bool operator!=(const CallFingerprint &o) const { return !(*this == o); }
};

CallFingerprint fingerprint_of(const CollArgs &a, uint64_t seq);

// "allreduce of 8 float32 (op max)", with the call number when `with_seq`.
std::string describe(const CallFingerprint &f, bool with_seq = false);

// A few bits of the fingerprint without its sequence number, mixed into
// the call's message tags so that ranks running different calls never
// match each other's data.
uint32_t tag_salt_of(const CallFingerprint &f);

}  // namespace smd
