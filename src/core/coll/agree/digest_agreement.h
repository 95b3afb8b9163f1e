// Whether the members of a communicator hold the same digests (64-bit
// hashes of what they must share: settings, configurations), and which
// members differ. The settings check at init and the sharded sets'
// configuration checks use it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace smd {

class Comm;

// How the exchanges run. kChecked: collectives like any other, under the
// call check. kBeforeSettings: the settings check itself, which runs
// before SMD_ALGO and SMD_CHECK are known to agree: recursive doubling and
// a ring whatever SMD_ALGO says, with no call check (SMD_CHECK may have
// switched it off on some ranks only) and no flight record.
enum class DigestExchange { kChecked, kBeforeSettings };

// Collective over `c`: true on every member when all passed the same
// `digests` (as many on each): one max-reduction of each digest and of its
// complement, so agreeing stays one small allreduce at any world size.
bool digests_agree(Comm &c, std::span<const uint64_t> digests, DigestExchange how);

// Collective over `c`: every member's digests, all[r * digests.size() + i],
// to name the members that differ once digests_agree said some do.
std::vector<uint64_t> every_members_digests(Comm &c, std::span<const uint64_t> digests,
                                            DigestExchange how);

// The exchange's arithmetic: what a member contributes (its digests, then
// their complements), and whether the maxima over the members say that all
// agree (the largest digest is the complement of the largest complement,
// that is of the smallest digest).
std::vector<uint64_t> digest_bounds(std::span<const uint64_t> digests);
bool bounds_agree(std::span<const uint64_t> maxima);

}  // namespace smd
