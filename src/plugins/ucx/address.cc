#include "address.h"

#include <cstdio>
#include <cstring>

namespace smd_ucx {

std::vector<unsigned char> address_encode(int32_t rank, int32_t world_size,
                                          const void *worker_address, size_t worker_length) {
  AddressHeader h;
  memset(&h, 0, sizeof h);
  h.magic = kAddressMagic;
  h.version = kAddressVersion;
  h.rank = rank;
  h.world_size = world_size;
  h.worker_length = uint32_t(worker_length);
  std::vector<unsigned char> blob(sizeof h + worker_length);
  memcpy(blob.data(), &h, sizeof h);
  if (worker_length != 0) memcpy(blob.data() + sizeof h, worker_address, worker_length);
  return blob;
}

bool address_decode(const void *blob, size_t size, int32_t peer, int32_t world_size,
                    const unsigned char **worker, size_t *worker_length, char *why,
                    size_t why_cap) {
  AddressHeader h;
  if (blob == nullptr || size < sizeof h) {
    snprintf(why, why_cap,
             "address blob of %zu bytes is shorter than the %zu-byte header "
             "(not a ucx address?)",
             blob == nullptr ? size_t(0) : size, sizeof h);
    return false;
  }
  memcpy(&h, blob, sizeof h);
  if (h.magic != kAddressMagic) {
    snprintf(why, why_cap, "address blob is not a ucx address (bad magic)");
    return false;
  }
  if (h.version != kAddressVersion) {
    snprintf(why, why_cap,
             "address blob has format version %u, this plugin reads %u: "
             "mixed plugin builds",
             h.version, kAddressVersion);
    return false;
  }
  if (h.rank != peer || h.world_size != world_size) {
    snprintf(why, why_cap,
             "address blob belongs to rank %d of a world of %d, expected "
             "rank %d of %d",
             h.rank, h.world_size, peer, world_size);
    return false;
  }
  if (h.worker_length == 0 || size - sizeof h != h.worker_length) {
    snprintf(why, why_cap,
             "address blob carries %zu bytes of UCX worker address, its "
             "header says %u",
             size - sizeof h, h.worker_length);
    return false;
  }
  *worker = static_cast<const unsigned char *>(blob) + sizeof h;
  *worker_length = h.worker_length;
  return true;
}

}  // namespace smd_ucx
