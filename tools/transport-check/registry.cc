#include "registry.h"

namespace tcheck {

const std::vector<TestCase> &test_cases() {
  static const std::vector<TestCase> kTests = {
      {"connect_all", "init, address sizes, connect to every peer, hello", test_connect_all, 60,
       true, false},
      {"pingpong", "1 B .. 64 KiB round trips between every pair", test_pingpong, 60, false, false},
      {"zero_byte", "0-byte messages, with and without a buffer", test_zero_byte, 30, false, false},
      {"tagged_ordering", "same-tag messages match in send order", test_tagged_ordering, 90, false,
       false},
      {"unordered_tags", "receives posted in reverse and shuffled tag order", test_unordered_tags,
       90, false, false},
      {"large", "1 MiB and 64 MiB between all, 1 GiB from rank 0 to 1", test_large, 240, false,
       false},
      {"many_outstanding", "5000 receives and 5000 sends posted before any test",
       test_many_outstanding, 120, false, false},
      {"truncation", "a larger message into a smaller receive: ERR_TRUNCATED", test_truncation, 30,
       false, false},
      {"registration", "mem_register/deregister, sends with mr, mem_pack + iget", test_registration,
       60, false, false},
      {"segments", "segment create, attach, peer writes, creator reads", test_segments, 60, false,
       false},
      {"cancel", "cancel unmatched receives and an unreceived send", test_cancel, 30, false, false},
      {"wait", "wait() is bounded and wakes up when a message arrives", test_wait, 30, false,
       false},
      {"peer_death", "the highest rank dies; requests to it fail with ERR_PEER", test_peer_death,
       60, false, false},
      {"bench", "latency and bandwidth between ranks 0 and 1", run_bench, 420, false, true},
      {"finalize", "finalize releases all shared memory", test_finalize, 60, true, false},
  };
  return kTests;
}

}  // namespace tcheck
