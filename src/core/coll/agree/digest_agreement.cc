#include "core/coll/agree/digest_agreement.h"

#include "core/coll/collective.h"
#include "core/comm/communicator.h"

namespace smd {

namespace {

CollArgs digest_call(CollKind kind, const uint64_t *send, uint64_t *recv, size_t count,
                     DigestExchange how) {
  CollArgs a = internal_call(kind, send, recv, count, SMD_UINT64);
  if (how == DigestExchange::kBeforeSettings) {
    a.algo = kind == CollKind::kAllreduce ? Algo::kRd : Algo::kRing;
    a.agreed = true;
  } else {
    a.unrecorded = false;
  }
  return a;
}

}  // namespace

std::vector<uint64_t> digest_bounds(std::span<const uint64_t> digests) {
  std::vector<uint64_t> bounds(2 * digests.size());
  for (size_t i = 0; i < digests.size(); ++i) {
    bounds[i] = digests[i];
    bounds[digests.size() + i] = ~digests[i];
  }
  return bounds;
}

bool bounds_agree(std::span<const uint64_t> maxima) {
  size_t k = maxima.size() / 2;
  for (size_t i = 0; i < k; ++i)
    if (maxima[i] != ~maxima[k + i]) return false;
  return true;
}

bool digests_agree(Comm &c, std::span<const uint64_t> digests, DigestExchange how) {
  std::vector<uint64_t> bounds = digest_bounds(digests), maxima(bounds.size());
  CollArgs a = digest_call(CollKind::kAllreduce, bounds.data(), maxima.data(), bounds.size(), how);
  a.op = SMD_MAX;
  run_collective(c, a);
  return bounds_agree(maxima);
}

std::vector<uint64_t> every_members_digests(Comm &c, std::span<const uint64_t> digests,
                                            DigestExchange how) {
  std::vector<uint64_t> all(digests.size() * size_t(c.size()));
  CollArgs a = digest_call(CollKind::kAllgather, digests.data(), all.data(), digests.size(), how);
  run_collective(c, a);
  return all;
}

}  // namespace smd
