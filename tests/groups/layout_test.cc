// smd_groups_layout() against the seed tables of the rules and against the
// independent reference for every world up to 64 ranks, every valid
// (tp, pp) and every placement; and its rejection of bad input.
#include <gtest/gtest.h>
#include <smd.h>

#include <cstddef>
#include <string>
#include <vector>

#include "reference.h"

namespace {

smd_groups_config_t config(int tp, int pp, const char *placement) {
  smd_groups_config_t c = SMD_GROUPS_CONFIG_INIT;
  c.tp = tp;
  c.pp = pp;
  c.placement = placement;
  return c;
}

struct Group {
  int rank = -1;
  std::vector<int> members;
};

Group layout(const smd_groups_config_t &c, int world, int rank, smd_group_kind_t kind) {
  Group g;
  g.members.resize(static_cast<size_t>(world));
  int count = -1;
  smd_result_t r =
      smd_groups_layout(&c, world, rank, kind, &g.rank, g.members.data(), world, &count);
  EXPECT_EQ(r, SMD_SUCCESS) << smd_last_error();
  g.members.resize(r == SMD_SUCCESS ? static_cast<size_t>(count) : 0);
  return g;
}

// All distinct groups of a kind, in order of their lowest rank.
std::vector<std::vector<int>> groups_of(const smd_groups_config_t &c, int world,
                                        smd_group_kind_t kind) {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < world; ++r) {
    Group g = layout(c, world, r, kind);
    if (!g.members.empty() && g.members[0] == r) out.push_back(g.members);
  }
  return out;
}

using Groups = std::vector<std::vector<int>>;

TEST(Seed, NoTensorParallelismSpread) {
  auto c = config(1, 2, "spread");
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_MP), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_DP), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(Seed, NoTensorParallelismCluster) {
  for (const char *name : {"cluster", "DPT"}) {
    auto c = config(1, 2, name);
    EXPECT_EQ(groups_of(c, 8, SMD_GROUP_MP), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}})) << name;
    EXPECT_EQ(groups_of(c, 8, SMD_GROUP_DP), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}})) << name;
  }
  // NULL placement is cluster.
  auto n = config(1, 2, nullptr);
  EXPECT_EQ(groups_of(n, 8, SMD_GROUP_MP), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

// W = 8, tp = pp = rdp = 2: the coordinates read back through the groups.
void expect_formula(const char *placement, int wd, int wp, int wt) {
  auto c = config(2, 2, placement);
  for (int d = 0; d < 2; ++d)
    for (int p = 0; p < 2; ++p)
      for (int t = 0; t < 2; ++t) {
        int rank = wd * d + wp * p + wt * t;
        EXPECT_EQ(layout(c, 8, rank, SMD_GROUP_RDP).rank, d) << placement << " rank " << rank;
        EXPECT_EQ(layout(c, 8, rank, SMD_GROUP_PP).rank, p) << placement << " rank " << rank;
        EXPECT_EQ(layout(c, 8, rank, SMD_GROUP_TP).rank, t) << placement << " rank " << rank;
      }
}

TEST(Seed, RankFormulas) {
  expect_formula("DPT", 4, 2, 1);
  expect_formula("cluster", 4, 2, 1);
  expect_formula("PTD", 1, 4, 2);
  expect_formula("TPD", 1, 2, 4);
  expect_formula("spread", 1, 2, 4);
}

TEST(Seed, GroupsOfTheFullExample) {
  auto c = config(2, 2, "DPT");  // rank = 4 rdp + 2 pp + tp
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_TP), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_PP), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_RDP), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_DP), (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_MP), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_WORLD), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  Group g = layout(c, 8, 5, SMD_GROUP_DP);  // members 1, 4, 5 ... position of 5
  EXPECT_EQ(g.rank, 3);
  EXPECT_EQ(layout(c, 8, 6, SMD_GROUP_MP).rank, 2);
}

TEST(Generated, EveryWorldUpTo64MatchesTheReference) {
  int configs = 0;
  for (int world = 1; world <= 64; ++world)
    for (auto [tp, pp] : groupsref::valid_degrees(world))
      for (const std::string &name : groupsref::all_placements()) {
        groupsref::Layout ref = groupsref::make(world, tp, pp, name);
        auto c = config(tp, pp, name.c_str());
        const int sizes[SMD_GROUP_KIND_COUNT] = {world, tp, pp, tp * ref.rdp, ref.rdp, tp * pp, 1};
        std::vector<int> members(static_cast<size_t>(world));
        for (int r = 0; r < world; ++r)
          for (int k = 0; k < SMD_GROUP_KIND_COUNT; ++k) {
            int group_rank = -1, count = -1;
            ASSERT_EQ(smd_groups_layout(&c, world, r, static_cast<smd_group_kind_t>(k), &group_rank,
                                        members.data(), world, &count),
                      SMD_SUCCESS)
                << smd_last_error();
            std::vector<int> got(members.begin(), members.begin() + count);
            ASSERT_EQ(got, ref.members[k][r]) << "world " << world << " tp " << tp << " pp " << pp
                                              << " " << name << " rank " << r << " kind " << k;
            ASSERT_EQ(group_rank, ref.group_rank[k][r]);
            ASSERT_EQ(count, sizes[k]);
          }
        ++configs;
      }
  EXPECT_GT(configs, 4000);
}

// SDP groups: chunks of sdp consecutive members of each RDP group.
TEST(Sdp, ChunksOfTheReducedDataParallelGroup) {
  auto c = config(1, 1, "cluster");
  c.sdp = 2;
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_SDP), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  c = config(2, 1, "cluster");  // rdp groups {0,2,4,6}, {1,3,5,7}
  c.sdp = 2;
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_SDP), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(layout(c, 8, 6, SMD_GROUP_SDP).rank, 1);
  c = config(2, 1, "spread");  // TPD: rdp groups {0,1,2,3}, {4,5,6,7}
  c.sdp = 4;
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_SDP), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  c.sdp = 1;
  EXPECT_EQ(groups_of(c, 8, SMD_GROUP_SDP), (Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
  // A version-1 struct (without sdp) still reads, as sdp = 1.
  c = config(1, 1, "cluster");
  c.version = 1;
  c.struct_size = offsetof(smd_groups_config_t, sdp);
  c.sdp = 4;  // beyond the version-1 struct: ignored
  EXPECT_EQ(layout(c, 8, 3, SMD_GROUP_SDP).members, (std::vector<int>{3}));
}

TEST(Sdp, EveryWorldUpTo32MatchesTheReference) {
  int configs = 0;
  for (int world = 1; world <= 32; ++world)
    for (auto [tp, pp] : groupsref::valid_degrees(world))
      for (const std::string &name : groupsref::all_placements())
        for (int sdp = 2; sdp <= world / (tp * pp); ++sdp) {
          if (world / (tp * pp) % sdp) continue;
          groupsref::Layout ref = groupsref::make(world, tp, pp, name, sdp);
          auto c = config(tp, pp, name.c_str());
          c.sdp = sdp;
          for (int r = 0; r < world; ++r) {
            Group g = layout(c, world, r, SMD_GROUP_SDP);
            ASSERT_EQ(g.members, ref.members[SMD_GROUP_SDP][r])
                << "world " << world << " tp " << tp << " pp " << pp << " " << name << " sdp "
                << sdp << " rank " << r;
            ASSERT_EQ(g.rank, ref.group_rank[SMD_GROUP_SDP][r]);
          }
          ++configs;
        }
  EXPECT_GT(configs, 500);
}

TEST(Members, CapacityBoundsTheCopyNotTheCount) {
  auto c = config(2, 2, "cluster");
  int ranks[2] = {-1, -1}, count = 0, group_rank = -1;
  ASSERT_EQ(smd_groups_layout(&c, 8, 5, SMD_GROUP_DP, &group_rank, ranks, 2, &count), SMD_SUCCESS);
  EXPECT_EQ(count, 4);
  EXPECT_EQ(ranks[0], 0);
  EXPECT_EQ(ranks[1], 1);
  ASSERT_EQ(smd_groups_layout(&c, 8, 5, SMD_GROUP_DP, &group_rank, nullptr, 0, &count),
            SMD_SUCCESS);
  EXPECT_EQ(count, 4);
}

#define EXPECT_REJECTED(call, code, words)                                  \
  do {                                                                      \
    smd_result_t r_ = (call);                                               \
    EXPECT_EQ(r_, code) << #call << ": " << smd_last_error();               \
    EXPECT_NE(std::string(smd_last_error()).find(words), std::string::npos) \
        << "message was: " << smd_last_error();                             \
  } while (0)

smd_result_t try_layout(const smd_groups_config_t *c, int world, int rank = 0,
                        smd_group_kind_t kind = SMD_GROUP_TP) {
  int group_rank = 0, count = 0, ranks[64];
  return smd_groups_layout(c, world, rank, kind, &group_rank, ranks, 64, &count);
}

TEST(BadInput, DegreesAndPlacements) {
  const smd_result_t bad = SMD_ERR_INVALID_ARGUMENT;
  auto c = config(0, 1, "cluster");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "tp=0");
  c = config(-2, 1, "cluster");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "tp=-2");
  c = config(1, 0, "cluster");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "pp=0");
  c = config(3, 1, "cluster");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "does not divide the world size 8");
  c = config(4, 4, "cluster");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "does not divide");
  c = config(2, 1, "cluster");
  c.sdp = 3;
  EXPECT_REJECTED(try_layout(&c, 8), bad, "sdp=3 does not divide rdp");
  c.sdp = 0;
  EXPECT_REJECTED(try_layout(&c, 8), bad, "sdp=0");
  c = config(2, 2, "dpt");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "lower case");
  c = config(2, 2, "DDT");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "the letter D appears twice");
  c = config(2, 2, "XYZ");
  EXPECT_REJECTED(try_layout(&c, 8), bad, "'X' is not one of D, P, T");
  for (const char *p : {"", "DP", "DPTD", "Cluster", "SPREAD", "cluster "}) {
    c = config(1, 1, p);
    EXPECT_REJECTED(try_layout(&c, 8), bad, "placement");
  }
  c = config(1, 1, "DPT");
  EXPECT_REJECTED(try_layout(&c, 0), bad, "world size 0");
  EXPECT_REJECTED(try_layout(&c, 8, 8), bad, "rank 8");
  EXPECT_REJECTED(try_layout(&c, 8, -1), bad, "rank -1");
  EXPECT_REJECTED(try_layout(&c, 8, 0, static_cast<smd_group_kind_t>(SMD_GROUP_KIND_COUNT)), bad,
                  "unknown group kind 7");
}

TEST(BadInput, StructsAndPointers) {
  const smd_result_t bad = SMD_ERR_INVALID_ARGUMENT;
  EXPECT_REJECTED(try_layout(nullptr, 8), bad, "config is NULL");
  auto c = config(1, 1, "DPT");
  c.struct_size = 8;
  EXPECT_REJECTED(try_layout(&c, 8), bad, "struct_size");
  c = config(1, 1, "DPT");
  c.version = 9;
  EXPECT_REJECTED(try_layout(&c, 8), bad, "version 9");
  c = config(1, 1, "DPT");
  int gr = 0, count = 0, ranks[8];
  EXPECT_REJECTED(smd_groups_layout(&c, 8, 0, SMD_GROUP_DP, nullptr, ranks, 8, &count), bad,
                  "group_rank is NULL");
  EXPECT_REJECTED(smd_groups_layout(&c, 8, 0, SMD_GROUP_DP, &gr, ranks, 8, nullptr), bad,
                  "count is NULL");
  EXPECT_REJECTED(smd_groups_layout(&c, 8, 0, SMD_GROUP_DP, &gr, nullptr, 8, &count), bad,
                  "ranks is NULL");
  EXPECT_REJECTED(smd_groups_layout(&c, 8, 0, SMD_GROUP_DP, &gr, ranks, -1, &count), bad,
                  "capacity -1");
  EXPECT_REJECTED(smd_groups_config_init(nullptr), bad, "config is NULL");
  smd_groups_config_t d;
  ASSERT_EQ(smd_groups_config_init(&d), SMD_SUCCESS);
  EXPECT_EQ(d.struct_size, sizeof d);
  EXPECT_EQ(d.version, static_cast<uint32_t>(SMD_GROUPS_CONFIG_VERSION));
  EXPECT_EQ(d.tp, 1);
  EXPECT_EQ(d.pp, 1);
  EXPECT_EQ(d.placement, nullptr);
}

}  // namespace
