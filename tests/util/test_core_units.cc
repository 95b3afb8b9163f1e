// Unit tests of the core's pure logic: algorithm configuration, topology
// and placement, range splitting, tags, the executor, parameters.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <set>
#include <cstring>
#include <chrono>
#include <thread>
#include <vector>

#include "core/coll/select/algo_config.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/cpu_binding.h"
#include "core/comm/tags.h"
#include "core/comm/topology.h"
#include "core/exec/executor.h"
#include "core/exec/wait_policy.h"
#include "core/plugin/plugin_loader.h"
#include "core/util/error.h"
#include "core/util/params.h"
#include "core/util/ring_queue.h"

using namespace smd;

namespace {

template <class F>
smd_result_t code_of(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.code();
  }
  return SMD_SUCCESS;
}

TEST(AlgoConfig, OneNameAppliesWhereTheCollectiveHasIt) {
  AlgoConfig c = AlgoConfig::parse("ring");
  EXPECT_EQ(c.get(CollKind::kAllreduce), Algo::kRing);
  EXPECT_EQ(c.get(CollKind::kBroadcast), Algo::kRing);
  EXPECT_EQ(c.get(CollKind::kAlltoall), Algo::kAuto);  // alltoall has no ring
  AlgoConfig d = AlgoConfig::parse("direct");
  for (int k = 0; k < static_cast<int>(CollKind::kCount); ++k) {
    auto kind = static_cast<CollKind>(k);
    // alltoallv is pairwise only: no arena form.
    EXPECT_EQ(d.get(kind), kind == CollKind::kAlltoallv ? Algo::kAuto : Algo::kDirect)
        << coll_name(kind);
  }
  // cma: allgather, reduce_scatter and broadcast only.
  AlgoConfig cma = AlgoConfig::parse("cma");
  for (int k = 0; k < static_cast<int>(CollKind::kCount); ++k) {
    auto kind = static_cast<CollKind>(k);
    bool has = kind == CollKind::kAllgather || kind == CollKind::kBroadcast ||
               kind == CollKind::kReduceScatter;
    EXPECT_EQ(cma.get(kind), has ? Algo::kCma : Algo::kAuto) << coll_name(kind);
  }
  EXPECT_STREQ(algo_name(Algo::kCma), "cma");
  EXPECT_EQ(AlgoConfig::parse("").get(CollKind::kReduce), Algo::kAuto);
  EXPECT_EQ(AlgoConfig::parse("auto").get(CollKind::kReduce), Algo::kAuto);
}

TEST(AlgoConfig, PerCollectiveListsAndErrors) {
  AlgoConfig c = AlgoConfig::parse(" allreduce=rd , broadcast=tree,alltoall=pairwise ");
  EXPECT_EQ(c.get(CollKind::kAllreduce), Algo::kRd);
  EXPECT_EQ(c.get(CollKind::kBroadcast), Algo::kTree);
  EXPECT_EQ(c.get(CollKind::kAlltoall), Algo::kPairwise);
  EXPECT_EQ(c.get(CollKind::kAllgather), Algo::kAuto);
  EXPECT_EQ(code_of([] { AlgoConfig::parse("warp"); }), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([] { AlgoConfig::parse("allreduce=tree"); }), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([] { AlgoConfig::parse("gather=ring"); }), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([] { AlgoConfig::parse("allreduce"); }), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([] { AlgoConfig::parse("alltoall=cma"); }), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(AlgoConfig::parse("allgather=cma,broadcast=cma").get(CollKind::kBroadcast), Algo::kCma);
  EXPECT_NE(c.describe().find("broadcast=tree"), std::string::npos);
}

RankRecord rec(const char *node, int pid) {
  return RankRecord{
      .host = "h", .node_key = node, .pid = pid, .cpus = 1, .numa_node = -1, .cpuset = ""};
}

TEST(Topology, NodesInOrderOfLowestRank) {
  Topology t = Topology::compute({rec("b", 1), rec("a", 2), rec("b", 3), rec("c", 4), rec("a", 5)});
  EXPECT_EQ(t.node_count, 3);
  EXPECT_EQ(t.node_of, (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(t.local_rank_of, (std::vector<int>{0, 0, 1, 0, 1}));
  EXPECT_EQ(t.node_members[1], std::vector<int>({1, 4}));
}

TEST(Topology, PlacementOfACommunicator) {
  Topology t = Topology::compute({rec("x", 1), rec("y", 2), rec("x", 3), rec("y", 4)});
  // Communicator of world ranks 3, 1, 2 (in that rank order): its rank 0
  // (world 3) is on node y, so y is its node 0.
  CommPlacement p = place(t, {3, 1, 2}, 1);  // world rank 1, node y
  EXPECT_EQ(p.node_count, 2);
  EXPECT_FALSE(p.single_node);
  EXPECT_EQ(p.node_index, 0);
  EXPECT_EQ(p.local_rank, 1);
  EXPECT_EQ(p.local_size, 2);
  CommPlacement q = place(t, {3, 1, 2}, 2);  // world rank 2, node x
  EXPECT_EQ(q.node_index, 1);
  EXPECT_EQ(q.local_rank, 0);
  EXPECT_EQ(q.local_size, 1);
  EXPECT_TRUE(place(t, {0, 2}, 0).single_node);
}

TEST(Topology, RecordsRoundTripAndRejectGarbage) {
  RankRecord r = rec("node/boot", 42);
  r.cpus = 7;
  RankRecord back = decode_rank_record(encode_rank_record(r));
  EXPECT_EQ(back.node_key, r.node_key);
  EXPECT_EQ(back.pid, 42);
  EXPECT_EQ(back.cpus, 7);
  EXPECT_EQ(code_of([] { decode_rank_record(Bytes{1, 2, 3}); }), SMD_ERR_BOOTSTRAP);
}

TEST(Topology, RecordsCarryCpuSetAndNumaNode) {
  RankRecord r = rec("n", 5);
  r.numa_node = 3;
  r.cpuset = "0-3,8";
  RankRecord back = decode_rank_record(encode_rank_record(r));
  EXPECT_EQ(back.numa_node, 3);
  EXPECT_EQ(back.cpuset, "0-3,8");
  // A record of a build without the last three fields: they are unknown.
  RankRecord old = rec("n", 5);
  Bytes b = encode_rank_record(old);
  b.resize(b.size() - 12);  // numa_node, the empty cpuset's and machine_key's lengths
  RankRecord short_back = decode_rank_record(b);
  EXPECT_EQ(short_back.pid, 5);
  EXPECT_EQ(short_back.numa_node, -1);
  EXPECT_EQ(short_back.cpuset, "");
  Bytes cut = encode_rank_record(r);
  cut.resize(cut.size() - 2);  // inside the cpuset: malformed
  EXPECT_EQ(code_of([&] { decode_rank_record(cut); }), SMD_ERR_BOOTSTRAP);
}

TEST(Topology, LocalRecordHasThisProcessCpus) {
  RankRecord me = local_rank_record(0);
  EXPECT_EQ(me.cpus, usable_cpus());
  EXPECT_FALSE(me.cpuset.empty());
  EXPECT_GE(me.numa_node, -1);
}

TEST(Topology, CpuListsAsRanges) {
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(format_cpu_list({0, 2, 4, 5, 6, 10, 11}), "0,2,4-6,10-11");
}

TEST(Topology, CpuListsParseBack) {
  std::vector<int> cpus;
  ASSERT_TRUE(parse_cpu_list("0-3,8", &cpus));
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 2, 3, 8}));
  for (const char *bad : {"", "3-1", "1,,2", "a", "1-", "-1", "1;2"})
    EXPECT_FALSE(parse_cpu_list(bad, &cpus)) << bad;
}

TEST(Topology, NodeCpusAreTheUnionOfItsRanksSets) {
  auto rec = [](const char *key, int cpus, const char *set) {
    RankRecord r;
    r.node_key = key;
    r.cpus = cpus;
    r.cpuset = set;
    return r;
  };
  // Bound one core each: two ranks, two CPUs, not oversubscribed.
  Topology bound = Topology::compute({rec("a", 1, "0"), rec("a", 1, "1"), rec("b", 1, "0")});
  EXPECT_EQ(bound.cpus_of_node(0), 2);
  EXPECT_EQ(bound.cpus_of_node(1), 1);
  // Both on core 0: one CPU for two ranks.
  EXPECT_EQ(Topology::compute({rec("a", 1, "0"), rec("a", 1, "0")}).cpus_of_node(0), 1);
  // Unbound (whole machine each) and one set unknown: the widest count.
  EXPECT_EQ(Topology::compute({rec("a", 8, "0-7"), rec("a", 8, "0-7")}).cpus_of_node(0), 8);
  EXPECT_EQ(Topology::compute({rec("a", 4, "0-3"), rec("a", 6, "")}).cpus_of_node(0), 6);
}

// Fake nodes (SMD_NODE_ID) on one machine share its CPUs: whether ranks
// outnumber cores is judged over the machine, not the node they claim.
TEST(Topology, FakeNodesShareTheirMachinesCpus) {
  auto rec = [](const char *node, const char *machine) {
    RankRecord r;
    r.node_key = node;
    r.machine_key = machine;
    r.cpus = 2;
    r.cpuset = "0-1";
    return r;
  };
  Topology t = Topology::compute(
      {rec("a", "m"), rec("a", "m"), rec("b", "m"), rec("b", "m"), rec("c", "other")});
  EXPECT_EQ(t.node_count, 3);
  EXPECT_EQ(t.machine_members(2), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.cpus_of(t.machine_members(2)), 2);
  EXPECT_EQ(t.machine_members(4), (std::vector<int>{4}));
  // A record without the field (an older build) counts its node as its machine.
  RankRecord old = rec("a", "m");
  Bytes b = encode_rank_record(old);
  b.resize(b.size() - 4 - old.machine_key.size());  // drop the appended string
  EXPECT_EQ(decode_rank_record(b).machine_key, "a");
  EXPECT_EQ(decode_rank_record(encode_rank_record(old)).machine_key, "m");
}

TEST(Topology, NodeIdOverride) {
  setenv("SMD_NODE_ID", "fake7", 1);
  EXPECT_EQ(local_rank_record(0).node_key, "id:fake7");
  unsetenv("SMD_NODE_ID");
  EXPECT_NE(local_rank_record(0).node_key.find('/'), std::string::npos);
}

// Rank threads of one process share its environment: one setting gives
// them fake nodes of N consecutive ranks.
TEST(Topology, RanksPerNodeSplitsByWorldRank) {
  setenv("SMD_RANKS_PER_NODE", "8", 1);
  std::string first = local_rank_record(0).node_key;
  EXPECT_EQ(local_rank_record(7).node_key, first);
  EXPECT_NE(local_rank_record(8).node_key, first);
  EXPECT_EQ(local_rank_record(8).node_key, local_rank_record(15).node_key);
  setenv("SMD_RANKS_PER_NODE", "-1", 1);
  EXPECT_THROW(local_rank_record(0), Error);
  unsetenv("SMD_RANKS_PER_NODE");
  EXPECT_EQ(local_rank_record(9).node_key, local_rank_record(0).node_key);
}

// Equal records give one shared topology; different ones do not.
TEST(Topology, SharedByEqualRecords) {
  RankRecord a = local_rank_record(0);
  std::vector<Bytes> records = {encode_rank_record(a), encode_rank_record(a)};
  auto t1 = Topology::shared(records), t2 = Topology::shared(records);
  EXPECT_EQ(t1.get(), t2.get());
  EXPECT_EQ(t1->ranks.size(), 2u);
  records.push_back(encode_rank_record(a));
  EXPECT_NE(Topology::shared(records).get(), t1.get());
}

TEST(WaitPolicy, LongerSleepsOnlyFarBeyondTheCpus) {
  EXPECT_EQ(max_sleep_us_for(1, 2), 1000);
  EXPECT_EQ(max_sleep_us_for(8, 2), 1000);
  EXPECT_EQ(max_sleep_us_for(64, 2), 8000);
  EXPECT_EQ(max_sleep_us_for(4096, 2), 100000);
}

TEST(Ranges, SplitCoversEverythingOnce) {
  for (size_t n : {0u, 1u, 7u, 64u, 1000u, 1048579u})
    for (int p : {1, 2, 3, 7, 64}) {
      size_t next = 0;
      for (int i = 0; i < p; ++i) {
        Range r = split(n, p, i), a = split_aligned(n, p, i, 16);
        EXPECT_EQ(r.off, next);
        next += r.len;
        EXPECT_LE(a.off + a.len, n);
        if (a.len && a.off + a.len < n) {
          EXPECT_EQ((a.off + a.len) % 16, 0u);
        }
      }
      EXPECT_EQ(next, n);
      size_t total = 0;
      for (int i = 0; i < p; ++i) total += split_aligned(n, p, i, 16).len;
      EXPECT_EQ(total, n);
    }
}

TEST(StreamCopy, EqualsMemcpyAtEveryAlignmentAndLength) {
  std::vector<uint8_t> src(4096 + 64), dst(4096 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t soff = 0; soff < 17; soff += 5)
    for (size_t doff = 0; doff < 17; ++doff)
      for (size_t len : {0, 1, 15, 16, 17, 63, 64, 65, 127, 200, 4000}) {
        std::fill(dst.begin(), dst.end(), 0xee);
        smd::stream_copy(dst.data() + doff, src.data() + soff, len);
        ASSERT_EQ(memcmp(dst.data() + doff, src.data() + soff, len), 0)
            << soff << " " << doff << " " << len;
        ASSERT_EQ(dst[doff + len], 0xee) << "wrote past the end";
        if (doff) {
          ASSERT_EQ(dst[doff - 1], 0xee) << "wrote before the start";
        }
      }
  // copy_out streams from the threshold on and copies ordinarily below it.
  smd::copy_out(dst.data(), src.data(), 100, 1);
  EXPECT_EQ(memcmp(dst.data(), src.data(), 100), 0);
  smd::copy_out(dst.data() + 1, src.data(), 3000, size_t(1) << 40);
  EXPECT_EQ(memcmp(dst.data() + 1, src.data(), 3000), 0);
}

TEST(RingQueue, FirstInFirstOutAcrossWrapAndGrowth) {
  smd::RingQueue<int> q(4);
  int next_in = 0, next_out = 0;
  // Wrap around the initial buffer several times, then grow while wrapped.
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 3; ++i) q.push(next_in++);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(q.front(), next_out++);
      q.pop();
    }
  }
  EXPECT_EQ(q.size(), 10u);
  while (!q.empty()) {
    ASSERT_EQ(q.front(), next_out++);
    q.pop();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(Tags, FieldsDoNotOverlapAndStayIn44Bits) {
  uint64_t t = coll_tag(coll_tag_space(0xFFFFF, 2), 0x3FF, 0xFFF);
  EXPECT_LT(t, 1ull << 44);
  EXPECT_LT(coll_tag(coll_tag_space(0xFFFFF, kMaxCommRanks), ~0ull, 2 * kMaxCommRanks - 1),
            1ull << 44);
  EXPECT_NE(coll_tag(coll_tag_space(1, 8), 0, 0), coll_tag(coll_tag_space(2, 8), 0, 0));
  EXPECT_NE(coll_tag(coll_tag_space(1, 8), 1, 0), coll_tag(coll_tag_space(1, 8), 0, 1));
  EXPECT_NE(make_tag(TagKind::kP2P, 1, 5), make_tag(TagKind::kColl, 1, 5));
  EXPECT_LT(make_tag(TagKind::kGroup, 0xFFFFFFFF, 0xFFFFFFFF), 1ull << 44);
}

TEST(Tags, StepWidthGrowsWithTheCommunicator) {
  // Up to 2048 ranks the layout is the one smd always had: 12 step bits.
  EXPECT_EQ(coll_step_bits(1), 12u);
  EXPECT_EQ(coll_step_bits(2048), 12u);
  EXPECT_EQ(coll_step_bits(2049), 13u);
  EXPECT_EQ(coll_step_bits(4096), 13u);
  EXPECT_EQ(coll_step_bits(kMaxCommRanks), 17u);
  // At the largest size the sequence keeps 5 bits.
  EXPECT_EQ(22u - coll_step_bits(kMaxCommRanks), 5u);
}

// Steps at the edges of the old 12-bit field (2047, 2048, 4095, 4096) and
// of the largest communicator read back unchanged, leave the sequence and
// the communicator alone, and never alias another step of the same call
// (the old layout wrapped step 4096 onto step 0).
TEST(Tags, StepsAtTheLimitsKeepTheirOwnField) {
  for (int ranks : {8, 2048, 2049, 4096, 65535, kMaxCommRanks}) {
    CollTagSpace s = coll_tag_space(0xABCDE, ranks);
    for (uint32_t step : {0u, 1u, 2047u, 2048u, 4095u, 4096u, 65535u, 65536u, 131071u}) {
      if (step >= 2u * uint32_t(ranks)) continue;
      for (uint64_t seq : {0ull, 5ull, 0x3FFull, ~0ull}) {
        uint64_t t = coll_tag(s, seq, step);
        EXPECT_EQ(coll_tag_step(s, t), step) << ranks << " ranks";
        EXPECT_EQ(coll_tag_seq(s, t), coll_tag_seq_field(s, seq))
            << ranks << " ranks, step " << step;
        EXPECT_EQ((t >> 22) & kTagCommMask, 0xABCDEu);
        EXPECT_EQ(t >> 42, uint64_t(TagKind::kColl));
      }
    }
  }
}

TEST(Tags, EveryStepOfTheLargestCallIsDistinct) {
  CollTagSpace s = coll_tag_space(7, kMaxCommRanks);
  std::vector<bool> seen(size_t(1) << 22, false);
  for (uint32_t step = 0; step < 2u * kMaxCommRanks; ++step) {
    uint64_t low = coll_tag(s, 3, step) & kTagLowMask;
    ASSERT_FALSE(seen[low]) << "step " << step << " aliases an earlier one";
    seen[low] = true;
  }
  // And the next call's steps differ from this one's.
  EXPECT_NE(coll_tag(s, 3, 0), coll_tag(s, 4, 0));
  EXPECT_NE(coll_tag(s, 3, 2 * kMaxCommRanks - 1), coll_tag(s, 4, 2 * kMaxCommRanks - 1));
}

// Up to 2048 ranks the sequence field is seq's low 10 bits, as it always
// was; narrower, every salt bit (bits 4-9 of seq) still changes the tag of
// a call with the same counter: all 64 salts stay apart down to 6 bits of
// width, and at 5 bits (the largest communicator) 32 of them do.
TEST(Tags, NarrowSequenceKeepsTheSalt) {
  CollTagSpace small = coll_tag_space(1, 2048);
  for (uint64_t seq : {0ull, 0x155ull, 0x3FFull, 0x12345ull})
    EXPECT_EQ(coll_tag_seq_field(small, seq), uint32_t(seq & 0x3FF));
  for (int ranks : {4096, 8192, 16384, 32768, kMaxCommRanks}) {
    CollTagSpace s = coll_tag_space(1, ranks);
    for (uint64_t counter = 0; counter < 16; ++counter) {
      std::set<uint32_t> fields;
      for (uint64_t salt = 0; salt < 64; ++salt)
        fields.insert(coll_tag_seq_field(s, counter ^ (salt << 4)));
      size_t want = ranks == kMaxCommRanks ? 32u : 64u;
      EXPECT_EQ(fields.size(), want) << ranks << " ranks, counter " << counter;
      // Consecutive calls with one salt never share a field.
      EXPECT_NE(coll_tag_seq_field(s, counter ^ (9u << 4)),
                coll_tag_seq_field(s, (counter + 1) ^ (9u << 4)));
    }
  }
}

// How long a wait that must succeed may take: only a hang should fail it,
// however slow or busy the machine.
constexpr int64_t kWaitMs = 60000;

TEST(Executor, InlineWhenIdleAndIssueOrderOtherwise) {
  Executor e;
  std::thread::id caller = std::this_thread::get_id(), ran_on;
  e.run_blocking([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
  std::vector<int> order;
  std::atomic<bool> release{false};
  auto first = e.submit([&] {
    while (!release) std::this_thread::yield();
    order.push_back(1);
  });
  auto second = e.submit([&] { order.push_back(2); });
  std::thread t([&] { e.run_blocking([&] { order.push_back(3); }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  release = true;
  t.join();
  EXPECT_TRUE(second->wait_until(Deadline::after_ms(kWaitMs)));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(first->done());
}

TEST(Executor, OneOperationAtATimeWhileCallsRace) {
  // Blocking calls from two threads (the first ones take the lock-free
  // path) racing with nonblocking submissions: never two at once, none lost.
  Executor e;
  std::atomic<int> inside{0}, overlaps{0}, ran{0};
  auto op = [&] {
    if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
    std::this_thread::yield();  // widen the window for an overlap
    inside.fetch_sub(1);
    ran.fetch_add(1);
  };
  std::vector<std::shared_ptr<Task>> tasks;
  std::thread a([&] {
    for (int i = 0; i < 2000; ++i) e.run_blocking(op);
  });
  std::thread b([&] {
    for (int i = 0; i < 2000; ++i) e.run_blocking(op);
  });
  for (int i = 0; i < 200; ++i) tasks.push_back(e.submit(op));
  a.join();
  b.join();
  for (auto &t : tasks) EXPECT_TRUE(t->wait_until(Deadline::after_ms(kWaitMs)));
  EXPECT_TRUE(e.drain(Deadline::after_ms(kWaitMs)));
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(ran.load(), 4200);
}

TEST(Executor, ErrorsTravelWithTheTask) {
  Executor e;
  auto t = e.submit([] { fail(SMD_ERR_TIMEOUT, "too slow"); });
  ASSERT_TRUE(t->wait_until(Deadline::after_ms(kWaitMs)));
  EXPECT_EQ(t->result(), SMD_ERR_TIMEOUT);
  EXPECT_EQ(t->error(), "too slow");
  EXPECT_EQ(code_of([&] { e.run_blocking([] { fail(SMD_ERR_MISMATCH, "x"); }); }),
            SMD_ERR_MISMATCH);
  EXPECT_TRUE(e.drain(Deadline::after_ms(kWaitMs)));
  e.stop();
  auto late = e.submit([] {});
  EXPECT_EQ(late->result(), SMD_ERR_INVALID_USAGE);
}

TEST(Params, ParsingAndErrorsNameTheVariable) {
  setenv("SMD_TIMEOUT", "1.5", 1);
  EXPECT_EQ(param_seconds_ms("SMD_TIMEOUT"), 1500);
  setenv("SMD_TIMEOUT", "soon", 1);
  try {
    param_seconds_ms("SMD_TIMEOUT");
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("SMD_TIMEOUT=soon"), std::string::npos);
  }
  // Found by tests/fuzz (fuzz_params): a huge value overflowed the
  // conversion to milliseconds; it now counts as 1e9 s, which a deadline
  // can still add to the clock.
  setenv("SMD_TIMEOUT", "7.7e71", 1);
  EXPECT_EQ(param_seconds_ms("SMD_TIMEOUT"), 1000000000000ll);
  EXPECT_FALSE(Deadline::after_ms(param_seconds_ms("SMD_TIMEOUT")).expired());
  unsetenv("SMD_TIMEOUT");
  EXPECT_EQ(param_seconds_ms("SMD_TIMEOUT"), 300000);
  setenv("SMD_STAGE_ADAPT", "maybe", 1);
  EXPECT_EQ(code_of([] { param_bool("SMD_STAGE_ADAPT"); }), SMD_ERR_INVALID_ARGUMENT);
  unsetenv("SMD_STAGE_ADAPT");
  EXPECT_TRUE(param_bool("SMD_STAGE_ADAPT"));
  for (const auto &p : all_params()) {
    EXPECT_EQ(std::string(p.name).rfind("SMD_", 0), 0u);
    EXPECT_GT(strlen(p.doc), 10u) << p.name;
  }
}

TEST(WaitPolicy, OversubscriptionYieldsAtOnce) {
  unsetenv("SMD_WAIT");
  WaitPolicy over = WaitPolicy::choose(3, 2);
  EXPECT_EQ(over.spin_ns, 0);
  WaitPolicy fits = WaitPolicy::choose(2, 2);
  EXPECT_GT(fits.spin_ns, 0);
  setenv("SMD_WAIT", "spin", 1);
  EXPECT_FALSE(WaitPolicy::choose(1, 1).sleep);
  setenv("SMD_WAIT", "bogus", 1);
  EXPECT_EQ(code_of([] { WaitPolicy::choose(1, 1); }), SMD_ERR_INVALID_ARGUMENT);
  unsetenv("SMD_WAIT");
}

}  // namespace

namespace {

TEST(Docs, ReadmeListsEveryVariable) {
  const char *path = getenv("SMD_README");
  ASSERT_NE(path, nullptr) << "meson passes SMD_README";
  FILE *f = fopen(path, "r");
  ASSERT_NE(f, nullptr) << path;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  fclose(f);
  for (const auto &p : all_params())
    EXPECT_NE(text.find(std::string("| `") + p.name + "` |"), std::string::npos)
        << p.name << " is missing from the configuration table of README.md";
  // The variables the plugins of this build declare (their tables' params
  // entry), found as libsmd finds plugins (meson sets SMD_PLUGIN_PATH).
  std::set<std::string> declared;
  for (const std::string &name : discover_plugins()) {
    auto plugin = load_plugin(name);
    const smd_transport_v1_t *t = plugin->table;
    if (!SMD_TRANSPORT_HAS(t, smd_transport_v1_t, params) || !t->params) continue;
    for (const smd_transport_param_t *p = t->params; p->name; ++p) {
      declared.insert(p->name);
      EXPECT_EQ(std::string(p->name).rfind("SMD_", 0), 0u) << name;
      EXPECT_GT(strlen(p->doc), 10u) << p->name;
      EXPECT_NE(text.find(std::string("| `") + p->name + "` |"), std::string::npos)
          << p->name << " (plugin " << name << ") is missing from README.md";
    }
  }
  // shm and tcp are always built: the check above did look at plugins.
  EXPECT_TRUE(declared.count("SMD_SHM_CMA") && declared.count("SMD_TCP_ADDR"));
}

}  // namespace
