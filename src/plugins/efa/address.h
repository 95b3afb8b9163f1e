// The address blob a context publishes: a fixed header (who, which
// provider, where its liveness socket listens) followed by the provider's
// own endpoint name (fi_getname).
#pragma once

#include <cstddef>
#include <cstdint>

namespace smd_efa {

constexpr uint32_t kAddressMagic = 0x31414645;  // "EFA1"
constexpr uint16_t kAddressVersion = 2;
constexpr size_t kProviderNameMax = 48;
constexpr size_t kMaxEndpointName = 1024;

struct AddressHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t name_len;  // bytes of endpoint name after the header
  int32_t rank;
  int32_t world_size;
  uint64_t nonce;        // this context's identity; the liveness hello
  uint32_t addr_format;  // fi_info addr_format of the endpoint name
  uint16_t live_family;  // AF_INET, AF_INET6, or 0: no liveness socket
  uint16_t live_port;    // host byte order
  uint8_t live_ip[16];
  char provider[kProviderNameMax];  // prov_name, NUL-terminated
  // Cross-memory attach (pull.cc): the process and where its nonce lies,
  // so a peer on the same machine can prove it may read this process.
  int32_t pid;
  uint32_t reserved;
  uint64_t nonce_addr;
};

// What a blob says, once checked.
struct PeerAddress {
  AddressHeader header;
  const uint8_t *name;  // inside the blob
};

// Checks a blob's framing and header; on failure writes why into `why`.
bool parse_address(const void *blob, size_t size, PeerAddress *out, char *why, size_t why_size);

}  // namespace smd_efa
