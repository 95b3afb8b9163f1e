#include "address.h"

#include <cstdio>
#include <cstring>

namespace smd_efa {

bool parse_address(const void *blob, size_t size, PeerAddress *out, char *why, size_t why_size) {
  if (blob == nullptr || size < sizeof(AddressHeader)) {
    snprintf(why, why_size, "address of %zu B is shorter than the %zu-byte header", blob ? size : 0,
             sizeof(AddressHeader));
    return false;
  }
  AddressHeader &h = out->header;
  memcpy(&h, blob, sizeof h);
  if (h.magic != kAddressMagic) {
    snprintf(why, why_size, "not an efa transport address (magic 0x%08x)", h.magic);
    return false;
  }
  if (h.version != kAddressVersion) {
    snprintf(why, why_size, "address version %u, this plugin speaks %u", h.version,
             kAddressVersion);
    return false;
  }
  if (h.name_len == 0 || h.name_len > kMaxEndpointName || size != sizeof h + h.name_len) {
    snprintf(why, why_size, "address of %zu B with a %u-byte endpoint name", size, h.name_len);
    return false;
  }
  if (memchr(h.provider, '\0', sizeof h.provider) == nullptr) {
    snprintf(why, why_size, "provider name is not terminated");
    return false;
  }
  out->name = static_cast<const uint8_t *>(blob) + sizeof h;
  return true;
}

}  // namespace smd_efa
