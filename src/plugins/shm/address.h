// The address blob a context publishes and peers connect with: enough to
// find, verify and map the owner's region from another process.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "node_identity.h"

namespace smd_shm {

constexpr uint64_t kAddressMagic = 0x3141444d53444d53ull;  // "SMDSMDA1"
constexpr uint32_t kAddressVersion = 1;

struct AddressBlob {
  uint64_t magic;
  uint32_t version;
  int32_t pid;
  int32_t region_fd;
  int32_t local_rank;
  int32_t local_size;
  uint32_t cell_size;
  uint32_t ring_cells;
  uint32_t reserved;
  uint64_t region_id;
  uint64_t region_bytes;
  NodeIdentity node;
};

// Check a peer's blob against this process's node and geometry. On
// failure returns false and writes a message naming what is wrong.
bool check_address(const void *data, size_t size, const NodeIdentity &self, int32_t local_size,
                   AddressBlob *out, char *why, size_t why_cap);

}  // namespace smd_shm
