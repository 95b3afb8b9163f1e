// libFuzzer target: the TCP store's frame decoder (store_protocol.cc), fed
// what a stranger on the network could send. Whatever decodes must encode
// again into a frame that decodes to the same encoding.
#include <cstdlib>

#include "core/bootstrap/store_protocol.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace smd;
  try {
    size_t n = wire::frame_size(data, size, wire::kMaxHelloFrame);
    if (n == 0) return 0;
    if (n > size) abort();
    Bytes once = wire::encode(wire::decode(data, n));
    Bytes twice = wire::encode(wire::decode(once.data(), once.size()));
    if (once != twice) abort();
  } catch (const Error &) {
    // A malformed frame: refused with an error, as it should be.
  }
  return 0;
}
