// libFuzzer target: the address blob decoders of the plugins (tcp's,
// ucx's header, efa's header), which parse whatever the store returned for
// a peer. Compiled with the decoders' own sources only.
#include <netinet/in.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "efa/address.h"
#include "ucx/address.h"

extern "C" int tcp_address_decode(const void *blob, size_t size, struct sockaddr_in *addr,
                                  uint64_t *nonce, char *why, size_t why_len);

// address.c's tcp_address_choose reports through the plugin's host calls,
// which this build leaves out; it is not fuzzed, so this is never called
// (C linkage: the symbol only has to exist).
extern "C" int tcp_fail_host(const void *, int, const char *, ...) { abort(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy of exactly `size` bytes, so that a read past the end is caught.
  uint8_t *copy = new uint8_t[size ? size : 1];
  memcpy(copy, data, size);
  char why[256];
  sockaddr_in addr;
  uint64_t nonce = 0;
  tcp_address_decode(copy, size, &addr, &nonce, why, sizeof why);
  const unsigned char *worker = nullptr;
  size_t worker_length = 0;
  if (smd_ucx::address_decode(copy, size, 1, 4, &worker, &worker_length, why, sizeof why) &&
      (worker < copy || worker + worker_length > copy + size))
    abort();
  smd_efa::PeerAddress peer;
  if (smd_efa::parse_address(copy, size, &peer, why, sizeof why) &&
      (peer.name < copy || peer.name + peer.header.name_len > copy + size))
    abort();
  delete[] copy;
  return 0;
}
