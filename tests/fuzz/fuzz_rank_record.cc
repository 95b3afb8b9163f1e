// libFuzzer target: the rank record decoder (topology.cc), which reads what
// every rank publishes in the store. A decoded record must survive a round
// trip through its encoder.
#include <cstdlib>

#include "core/comm/topology.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace smd;
  try {
    RankRecord r = decode_rank_record(Bytes(data, data + size));
    Bytes once = encode_rank_record(r);
    if (encode_rank_record(decode_rank_record(once)) != once) abort();
  } catch (const Error &) {
  }
  return 0;
}
