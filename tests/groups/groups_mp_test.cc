// Rank groups on a real world under smdrun (4 and 8 ranks): the group
// communicators run collectives among exactly the layout's members, ranks
// and sizes agree, bad and disagreeing configurations fail on every rank,
// and smd_comm_rank_info says where each rank runs.
#include <gtest/gtest.h>
#include <sched.h>
#include <smd.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "../coll/mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

#define EXPECT_FAILS(call, code, words)                                                          \
  do {                                                                                           \
    smd_result_t r_ = (call);                                                                    \
    EXPECT_EQ(r_, code) << #call << " -> " << smd_result_string(r_) << ": " << smd_last_error(); \
    EXPECT_NE(std::string(smd_last_error()).find(words), std::string::npos)                      \
        << "message was: " << smd_last_error();                                                  \
  } while (0)

const smd_group_kind_t kKinds[] = {SMD_GROUP_WORLD, SMD_GROUP_TP,  SMD_GROUP_PP,
                                   SMD_GROUP_DP,    SMD_GROUP_RDP, SMD_GROUP_MP};

smd_groups_config_t config(int tp, int pp, const char *placement) {
  smd_groups_config_t c = SMD_GROUPS_CONFIG_INIT;
  c.tp = tp;
  c.pp = pp;
  c.placement = placement;
  return c;
}

std::vector<int> layout_members(const smd_groups_config_t &c, smd_group_kind_t kind,
                                int *group_rank) {
  std::vector<int> m(static_cast<size_t>(size()));
  int count = 0;
  EXPECT_EQ(smd_groups_layout(&c, size(), rank(), kind, group_rank, m.data(), size(), &count),
            SMD_SUCCESS)
      << smd_last_error();
  m.resize(static_cast<size_t>(count));
  return m;
}

// Every group communicator against the layout: rank, size, members, and
// collectives that only the members take part in.
void check_groups(const smd_groups_config_t &c) {
  SCOPED_TRACE(std::string("tp ") + std::to_string(c.tp) + " pp " + std::to_string(c.pp) + " " +
               (c.placement ? c.placement : "NULL"));
  smd_groups_t *g = nullptr;
  SMD_OK(smd_groups_create(world(), &c, &g));
  for (smd_group_kind_t kind : kKinds) {
    int want_rank = -1;
    std::vector<int> members = layout_members(c, kind, &want_rank);
    smd_comm_t *comm = nullptr;
    SMD_OK(smd_groups_comm(g, kind, &comm));
    int grank = -1, gsize = -1, crank = -1, csize = -1, count = -1;
    SMD_OK(smd_groups_rank(g, kind, &grank));
    SMD_OK(smd_groups_size(g, kind, &gsize));
    SMD_OK(smd_comm_rank(comm, &crank));
    SMD_OK(smd_comm_size(comm, &csize));
    EXPECT_EQ(grank, want_rank) << "kind " << kind;
    EXPECT_EQ(crank, grank) << "kind " << kind;
    EXPECT_EQ(csize, gsize) << "kind " << kind;
    EXPECT_EQ(static_cast<size_t>(gsize), members.size()) << "kind " << kind;
    std::vector<int> listed(members.size());
    SMD_OK(smd_groups_members(g, kind, listed.data(), static_cast<int>(listed.size()), &count));
    EXPECT_EQ(listed, members);
    // Allreduce: the sum over the members of (rank + 1), and of its square.
    int64_t mine[2] = {rank() + 1, int64_t{rank() + 1} * (rank() + 1)}, sum[2] = {0, 0};
    SMD_OK(smd_allreduce(mine, sum, 2, SMD_INT64, SMD_SUM, comm, nullptr));
    int64_t want[2] = {0, 0};
    for (int m : members) want[0] += m + 1, want[1] += int64_t{m + 1} * (m + 1);
    EXPECT_EQ(sum[0], want[0]) << "kind " << kind;
    EXPECT_EQ(sum[1], want[1]) << "kind " << kind;
    // Allgather: every member's world rank, in group order.
    int32_t me = rank();
    std::vector<int32_t> all(members.size(), -1);
    SMD_OK(smd_allgather(&me, all.data(), 1, SMD_INT32, comm, nullptr));
    EXPECT_EQ(std::vector<int>(all.begin(), all.end()), members) << "kind " << kind;
  }
  SMD_OK(smd_groups_destroy(g));
}

TEST(Groups, EveryPlacementTp2Pp2) {
  if (size() % 4) GTEST_SKIP() << "needs a multiple of 4 ranks";
  for (const char *p : {"cluster", "spread", "DPT", "DTP", "PDT", "PTD", "TDP", "TPD"})
    check_groups(config(2, 2, p));
}

TEST(Groups, OtherDegrees) {
  check_groups(config(1, 1, nullptr));
  check_groups(config(size(), 1, "cluster"));
  check_groups(config(1, size(), "spread"));
  if (size() % 2 == 0) check_groups(config(2, 1, "PTD"));
  if (size() % 8 == 0) check_groups(config(2, 4, "TDP"));
}

TEST(Groups, QueuedWorkOnTheParentRunsFirst) {
  smd_request_t *req = nullptr;
  int64_t x = rank(), y = -1;
  SMD_OK(smd_iallreduce(&x, &y, 1, SMD_INT64, SMD_SUM, world(), nullptr, &req));
  smd_groups_t *g = nullptr;
  auto c = config(1, 1, "cluster");
  SMD_OK(smd_groups_create(world(), &c, &g));
  SMD_OK(smd_request_wait(req));
  SMD_OK(smd_request_free(req));
  EXPECT_EQ(y, int64_t{size()} * (size() - 1) / 2);
  SMD_OK(smd_groups_destroy(g));
}

TEST(Groups, CommunicatorsBelongToTheGroups) {
  smd_groups_t *g = nullptr;
  auto c = config(1, 1, nullptr);
  SMD_OK(smd_groups_create(world(), &c, &g));
  smd_comm_t *tp = nullptr;
  SMD_OK(smd_groups_comm(g, SMD_GROUP_TP, &tp));
  EXPECT_FAILS(smd_comm_destroy(tp), SMD_ERR_INVALID_USAGE, "smd_groups_destroy");
  int r = 0;
  EXPECT_FAILS(smd_groups_rank(g, static_cast<smd_group_kind_t>(7), &r), SMD_ERR_INVALID_ARGUMENT,
               "unknown group kind 7");
  EXPECT_FAILS(smd_groups_comm(g, SMD_GROUP_TP, nullptr), SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
  EXPECT_FAILS(smd_groups_members(g, SMD_GROUP_TP, nullptr, 1, &r), SMD_ERR_INVALID_ARGUMENT,
               "ranks is NULL");
  SMD_OK(smd_groups_destroy(g));
  EXPECT_FAILS(smd_comm_rank(tp, &r), SMD_ERR_INVALID_USAGE, "not a live communicator");
  EXPECT_FAILS(smd_groups_rank(g, SMD_GROUP_TP, &r), SMD_ERR_INVALID_USAGE, "not live");
  EXPECT_FAILS(smd_groups_destroy(g), SMD_ERR_INVALID_USAGE, "not live");
  EXPECT_FAILS(smd_groups_destroy(nullptr), SMD_ERR_INVALID_ARGUMENT, "groups is NULL");
}

// A bad configuration passed by every rank fails on every rank, and the
// world stays usable.
void expect_rejected(const smd_groups_config_t &c, smd_result_t code, const char *words) {
  smd_groups_t *g = reinterpret_cast<smd_groups_t *>(0x1);
  EXPECT_FAILS(smd_groups_create(world(), &c, &g), code, words);
  EXPECT_EQ(g, nullptr);
  SMD_OK(smd_barrier(world(), nullptr));
}

TEST(Groups, BadConfigurationsFailEverywhere) {
  expect_rejected(config(0, 1, "cluster"), SMD_ERR_INVALID_ARGUMENT, "tp=0");
  expect_rejected(config(1, -1, "cluster"), SMD_ERR_INVALID_ARGUMENT, "pp=-1");
  expect_rejected(config(3, 1, "cluster"), SMD_ERR_INVALID_ARGUMENT, "does not divide");
  expect_rejected(config(1, 1, "dpt"), SMD_ERR_INVALID_ARGUMENT, "lower case");
  expect_rejected(config(1, 1, "DDT"), SMD_ERR_INVALID_ARGUMENT, "appears twice");
  expect_rejected(config(1, 1, "XYZ"), SMD_ERR_INVALID_ARGUMENT, "not one of D, P, T");
  smd_groups_config_t v = config(1, 1, nullptr);
  v.version = 5;
  expect_rejected(v, SMD_ERR_INVALID_ARGUMENT, "version 5");
}

TEST(Groups, DisagreementFailsEverywhere) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  // Rank 1 alone asks for something else; every rank hears of it.
  expect_rejected(config(rank() == 1 ? 2 : 1, 1, "cluster"), SMD_ERR_MISMATCH, "rank 1 for tp=2");
  expect_rejected(config(2, 1, rank() == size() - 1 ? "TPD" : "DPT"), SMD_ERR_MISMATCH, "disagree");
  // Invalid and different: still a mismatch, not a per-rank complaint.
  expect_rejected(config(1, 1, rank() == 0 ? "XYZ" : "DDT"), SMD_ERR_MISMATCH, "disagree");
  // One rank passes no configuration: it is told why, the others who.
  smd_groups_config_t c = config(1, 1, nullptr);
  smd_groups_t *g = nullptr;
  if (rank() == 1)
    EXPECT_FAILS(smd_groups_create(world(), nullptr, &g), SMD_ERR_INVALID_ARGUMENT,
                 "config is NULL");
  else
    EXPECT_FAILS(smd_groups_create(world(), &c, &g), SMD_ERR_MISMATCH,
                 "unusable smd_groups_config_t");
  SMD_OK(smd_barrier(world(), nullptr));
  // Names of one layout agree: cluster, DPT and NULL.
  const char *same[] = {"cluster", "DPT", nullptr};
  check_groups(config(1, 1, same[rank() % 3]));
}

std::set<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> out;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.insert(c);
  return out;
}

std::set<int> parse_cpu_list(const std::string &s) {
  std::set<int> out;
  for (const char *p = s.c_str(); *p;) {
    int a = 0, b = 0, n = 0;
    if (sscanf(p, "%d-%d%n", &a, &b, &n) == 2) {
    } else if (sscanf(p, "%d%n", &a, &n) == 1) {
      b = a;
    } else {
      break;
    }
    for (int c = a; c <= b; ++c) out.insert(c);
    p += n;
    if (*p == ',') ++p;
  }
  return out;
}

// The NUMA node holding all of `cpus` according to /sys, or -1 (none
// found, or the CPUs span several).
int sysfs_numa_node(const std::set<int> &cpus) {
  DIR *d = opendir("/sys/devices/system/node");
  if (!d) return -1;
  int found = -1, hits = 0;
  while (dirent *e = readdir(d)) {
    int node = -1;
    if (sscanf(e->d_name, "node%d", &node) != 1) continue;
    std::ifstream in(std::string("/sys/devices/system/node/") + e->d_name + "/cpulist");
    std::string list;
    std::getline(in, list);
    bool hit = false;
    for (int c : parse_cpu_list(list)) hit = hit || cpus.count(c);
    if (hit) found = node, ++hits;
  }
  closedir(d);
  return hits == 1 ? found : -1;
}

smd_rank_info_t info_of(smd_comm_t *comm, int r) {
  smd_rank_info_t i;
  i.struct_size = sizeof i;
  i.version = SMD_RANK_INFO_VERSION;
  EXPECT_EQ(smd_comm_rank_info(comm, r, &i), SMD_SUCCESS) << smd_last_error();
  return i;
}

TEST(RankInfo, EveryRankOfTheWorld) {
  std::set<int> pids;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  for (int r = 0; r < size(); ++r) {
    smd_rank_info_t i = info_of(world(), r);
    EXPECT_EQ(i.rank, r);
    EXPECT_EQ(i.world_rank, r);
    EXPECT_EQ(i.node_index, 0);
    EXPECT_EQ(i.local_rank, r);
    EXPECT_EQ(i.local_size, size());
    EXPECT_GE(i.cpus, 1);
    EXPECT_EQ(parse_cpu_list(i.cpuset).size(), static_cast<size_t>(i.cpus)) << i.cpuset;
    EXPECT_EQ(std::string(i.host), std::string(host).substr(0, sizeof i.host - 1));
    pids.insert(i.pid);
  }
  EXPECT_EQ(pids.size(), static_cast<size_t>(size()));
  smd_rank_info_t me = info_of(world(), rank());
  EXPECT_EQ(me.pid, getpid());
  std::set<int> cpus = my_cpus();
  EXPECT_EQ(parse_cpu_list(me.cpuset), cpus);
  // Without hwloc the NUMA node is unknown.
  EXPECT_EQ(me.numa_node, SMD_TEST_HWLOC ? sysfs_numa_node(cpus) : -1) << me.cpuset;
}

TEST(RankInfo, GroupCommunicatorRanks) {
  if (size() % 2) GTEST_SKIP() << "needs an even number of ranks";
  auto c = config(2, 1, "spread");
  smd_groups_t *g = nullptr;
  SMD_OK(smd_groups_create(world(), &c, &g));
  smd_comm_t *tp = nullptr;
  SMD_OK(smd_groups_comm(g, SMD_GROUP_TP, &tp));
  int members[2], count = 0;
  SMD_OK(smd_groups_members(g, SMD_GROUP_TP, members, 2, &count));
  for (int r = 0; r < 2; ++r) {
    smd_rank_info_t i = info_of(tp, r);
    EXPECT_EQ(i.rank, r);
    EXPECT_EQ(i.world_rank, members[r]);
    EXPECT_EQ(i.local_rank, r);
    EXPECT_EQ(i.local_size, 2);
    EXPECT_EQ(i.node_index, 0);
  }
  smd_rank_info_t i;
  i.struct_size = sizeof i;
  i.version = SMD_RANK_INFO_VERSION;
  EXPECT_FAILS(smd_comm_rank_info(tp, 2, &i), SMD_ERR_INVALID_ARGUMENT, "rank 2 is not in [0, 2)");
  EXPECT_FAILS(smd_comm_rank_info(tp, -1, &i), SMD_ERR_INVALID_ARGUMENT, "rank -1");
  EXPECT_FAILS(smd_comm_rank_info(tp, 0, nullptr), SMD_ERR_INVALID_ARGUMENT, "info is NULL");
  i.struct_size = 16;
  EXPECT_FAILS(smd_comm_rank_info(tp, 0, &i), SMD_ERR_INVALID_ARGUMENT, "struct_size");
  i.struct_size = sizeof i;
  i.version = 99;
  EXPECT_FAILS(smd_comm_rank_info(tp, 0, &i), SMD_ERR_INVALID_ARGUMENT, "version 99");
  SMD_OK(smd_groups_destroy(g));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
