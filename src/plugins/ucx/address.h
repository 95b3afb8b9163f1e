// The address blob this plugin publishes: a small header (what it is,
// which format, whose) followed by the UCX worker address, which UCX
// itself versions and checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smd_ucx {

struct AddressHeader {
  uint64_t magic;
  uint32_t version;
  int32_t rank;
  int32_t world_size;
  uint32_t worker_length;  // bytes of UCX worker address that follow
};

constexpr uint64_t kAddressMagic = 0x3158435544444d53ull;  // "SMDDUCX1"
constexpr uint32_t kAddressVersion = 1;

std::vector<unsigned char> address_encode(int32_t rank, int32_t world_size,
                                          const void *worker_address, size_t worker_length);

// Checks a peer's blob: ours, this version, from rank `peer` of a world of
// `world_size`. On success *worker points into `blob`. On failure `why`
// says what is wrong.
bool address_decode(const void *blob, size_t size, int32_t peer, int32_t world_size,
                    const unsigned char **worker, size_t *worker_length, char *why, size_t why_cap);

}  // namespace smd_ucx
