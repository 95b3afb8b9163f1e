// smd-info end to end: usage, the groups table and JSON checked against the
// independent reference, the placement advisor's counts and choice, params,
// and topology under smdrun. Finds the programs through SMD_INFO and SMDRUN.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference.h"

namespace {

// Objects keep their members in file order (the key order is checked).
using Json = nlohmann::ordered_json;

struct Output {
  int status = -1;  // exit status, or -1 if it did not exit
  std::string out, err;
};

std::string program(const char *var) {
  const char *p = getenv(var);
  return p ? p : "";
}

Output run(const std::string &args, const char *var = "SMD_INFO") {
  Output r;
  char errfile[] = "/tmp/smd-info-test-XXXXXX";
  int fd = mkstemp(errfile);
  if (fd < 0) return r;
  close(fd);
  std::string cmd = program(var) + " " + args + " 2>" + errfile;
  FILE *f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream in(errfile);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  unlink(errfile);
  return r;
}

bool contains(const std::string &text, const std::string &words) {
  return text.find(words) != std::string::npos;
}

class SmdInfo : public ::testing::Test {
 protected:
  void SetUp() override {
    if (program("SMD_INFO").empty()) GTEST_SKIP() << "SMD_INFO is not set (run through meson test)";
  }
};

TEST_F(SmdInfo, HelpAndBadUsage) {
  Output help = run("--help");
  EXPECT_EQ(help.status, 0);
  for (const char *w :
       {"groups", "topology", "params", "off-node", "--ranks-per-node", "--heaviest"})
    EXPECT_TRUE(contains(help.out, w)) << w;
  EXPECT_EQ(run("groups --help").status, 0);
  struct Bad {
    const char *args, *words;
  } bad[] = {
      {"", "no command given"},
      {"frob", "unknown command 'frob'"},
      {"groups", "needs --world"},
      {"groups --world 0", "--world needs an integer of at least 1"},
      {"groups --world x", "got 'x'"},
      {"groups --world 8 --tp", "--tp needs a value"},
      {"groups --world 8 --tp 3", "does not divide the world size 8"},
      {"groups --world 8 --placement dpt", "lower case"},
      {"groups --world 8 --placement DDT", "appears twice"},
      {"groups --world 8 --placement XYZ", "not one of D, P, T"},
      {"groups --world 8 --nodes 2", "go together"},
      {"groups --world 8 --nodes 2 --ranks-per-node 3", "is not the world size 8"},
      {"groups --world 8 --heaviest tp", "--heaviest needs --nodes"},
      {"groups --world 8 --nodes 2 --ranks-per-node 4 --heaviest xx", "tp, pp, dp, rdp or mp"},
      {"groups --world 8 --nodes 2 --ranks-per-node 4 --placement abc", "placement"},
      {"groups --world 8 --frob", "'--frob' is not an option of smd-info groups"},
      {"topology --world 2", "not an option of smd-info topology"},
      {"params --world 2", "not an option of smd-info params"},
      {"groups --world= --tp 2", "--world needs an integer of at least 1, got ''"},
      {"groups --world 8 --json=1", "option '--json' takes no value"},
      {"topology groups", "'groups' is not an option of smd-info topology"},
      {"--json groups", "unknown command '--json'"},
      {"flight", "flight needs one directory"},
      {"flight -x d", "'-x' is not an option of smd-info flight"},
  };
  for (const Bad &b : bad) {
    Output r = run(b.args);
    EXPECT_EQ(r.status, 2) << b.args;
    EXPECT_TRUE(contains(r.err, b.words)) << b.args << " said: " << r.err;
    EXPECT_TRUE(r.out.empty()) << b.args;
  }
}

void expect_json_matches_reference(int world, int tp, int pp, const std::string &placement) {
  SCOPED_TRACE("world " + std::to_string(world) + " tp " + std::to_string(tp) + " pp " +
               std::to_string(pp) + " " + placement);
  Output r = run("groups --world " + std::to_string(world) + " --tp " + std::to_string(tp) +
                 " --pp " + std::to_string(pp) + " --placement " + placement + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  Json doc = Json::parse(r.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), static_cast<size_t>(world));
  groupsref::Layout ref = groupsref::make(world, tp, pp, placement);
  const std::vector<std::string> keys = {"rank",      "rdp_rank", "pp_rank",  "tp_rank",
                                         "dp_rank",   "mp_rank",  "tp_group", "pp_group",
                                         "rdp_group", "dp_group", "mp_group"};
  for (int rank = 0; rank < world; ++rank) {
    const Json &o = doc[rank];
    std::vector<std::string> got;
    for (const auto &member : o.items()) got.push_back(member.key());
    ASSERT_EQ(got, keys);
    EXPECT_EQ(o.at("rank").get<int64_t>(), rank);
    EXPECT_EQ(o.at("rdp_rank").get<int64_t>(), ref.coords[rank][0]);
    EXPECT_EQ(o.at("pp_rank").get<int64_t>(), ref.coords[rank][1]);
    EXPECT_EQ(o.at("tp_rank").get<int64_t>(), ref.coords[rank][2]);
    EXPECT_EQ(o.at("dp_rank").get<int64_t>(), ref.group_rank[SMD_GROUP_DP][rank]);
    EXPECT_EQ(o.at("mp_rank").get<int64_t>(), ref.group_rank[SMD_GROUP_MP][rank]);
    EXPECT_EQ(o.at("tp_group").get<std::vector<int>>(), ref.members[SMD_GROUP_TP][rank]);
    EXPECT_EQ(o.at("pp_group").get<std::vector<int>>(), ref.members[SMD_GROUP_PP][rank]);
    EXPECT_EQ(o.at("rdp_group").get<std::vector<int>>(), ref.members[SMD_GROUP_RDP][rank]);
    EXPECT_EQ(o.at("dp_group").get<std::vector<int>>(), ref.members[SMD_GROUP_DP][rank]);
    EXPECT_EQ(o.at("mp_group").get<std::vector<int>>(), ref.members[SMD_GROUP_MP][rank]);
  }
}

TEST_F(SmdInfo, GroupsJsonMatchesTheReference) {
  const auto &names = groupsref::all_placements();
  // Every placement of every (tp, pp) for small worlds; for larger ones
  // each (tp, pp) under one placement, taken in turn.
  for (int world : {1, 6, 8})
    for (auto [tp, pp] : groupsref::valid_degrees(world))
      for (const std::string &name : names) expect_json_matches_reference(world, tp, pp, name);
  size_t turn = 0;
  for (int world : {12, 16, 36, 64})
    for (auto [tp, pp] : groupsref::valid_degrees(world))
      expect_json_matches_reference(world, tp, pp, names[turn++ % names.size()]);
}

TEST_F(SmdInfo, GroupsTable) {
  Output r = run("groups --world 8 --tp 2 --pp 2 --placement cluster");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 10u);  // title, header, 8 ranks
  EXPECT_TRUE(contains(lines[0], "tp 2, pp 2, rdp 2"));
  std::istringstream header(lines[1]), row5(lines[7]);
  std::vector<std::string> h, v;
  for (std::string w; header >> w;) h.push_back(w);
  for (std::string w; row5 >> w;) v.push_back(w);
  EXPECT_EQ(
      h, (std::vector<std::string>{"rank", "rdp_rank", "pp_rank", "tp_rank", "dp_rank", "mp_rank",
                                   "tp_group", "pp_group", "rdp_group", "dp_group", "mp_group"}));
  // rank 5 = 4*1 + 2*0 + 1 under DPT
  EXPECT_EQ(v, (std::vector<std::string>{"5", "1", "0", "1", "3", "1", "4,5", "5,7", "1,5",
                                         "0,1,4,5", "4,5,6,7"}));
}

struct RefScore {
  int groups = 0, split = 0, off_node = 0;
};

// The advisor's metric from its definition, over the reference's groups.
RefScore ref_score(const groupsref::Layout &l, smd_group_kind_t kind, int per_node) {
  RefScore s;
  std::set<std::vector<int>> seen;
  for (int r = 0; r < l.world; ++r) {
    const std::vector<int> &m = l.members[kind][r];
    if (!seen.insert(m).second) continue;
    std::map<int, int> on;
    for (int x : m) ++on[x / per_node];
    int most = 0;
    for (auto &kv : on) most = std::max(most, kv.second);
    ++s.groups;
    s.split += on.size() > 1;
    s.off_node += static_cast<int>(m.size()) - most;
  }
  return s;
}

Json advise(int world, int tp, int pp, int nodes, const std::string &extra = "") {
  Output r = run("groups --world " + std::to_string(world) + " --tp " + std::to_string(tp) +
                 " --pp " + std::to_string(pp) + " --nodes " + std::to_string(nodes) +
                 " --ranks-per-node " + std::to_string(world / nodes) + " --json " + extra);
  EXPECT_EQ(r.status, 0) << r.err;
  return Json::parse(r.out);
}

// Counts match the reference for every placement and kind, and the choice
// is the first placement with the least off-node members in priority order.
void expect_advice_matches(int world, int tp, int pp, int nodes, const std::string &extra = "") {
  SCOPED_TRACE("world " + std::to_string(world) + " tp " + std::to_string(tp) + " pp " +
               std::to_string(pp) + " nodes " + std::to_string(nodes) + " " + extra);
  Json a = advise(world, tp, pp, nodes, extra);
  const std::map<std::string, smd_group_kind_t> kinds = {{"tp", SMD_GROUP_TP},
                                                         {"pp", SMD_GROUP_PP},
                                                         {"dp", SMD_GROUP_DP},
                                                         {"rdp", SMD_GROUP_RDP},
                                                         {"mp", SMD_GROUP_MP}};
  std::vector<std::string> priority;
  for (const auto &p : a.at("priority")) priority.push_back(p.get<std::string>());
  ASSERT_EQ(priority.size(), 5u);
  const auto &rows = a.at("placements");
  ASSERT_EQ(rows.size(), 6u);
  std::set<std::string> letters;
  std::string best;
  std::vector<int> best_key;
  for (const auto &row : rows) {
    std::string name = row.at("placement").get<std::string>();
    letters.insert(name);
    groupsref::Layout ref = groupsref::make(world, tp, pp, name);
    std::vector<int> key;
    for (const std::string &k : priority) {
      RefScore s = ref_score(ref, kinds.at(k), world / nodes);
      const Json &got = row.at(k);
      EXPECT_EQ(got.at("groups").get<int64_t>(), s.groups) << name << " " << k;
      EXPECT_EQ(got.at("split_groups").get<int64_t>(), s.split) << name << " " << k;
      EXPECT_EQ(got.at("off_node_members").get<int64_t>(), s.off_node) << name << " " << k;
      key.push_back(s.off_node);
    }
    if (best.empty() || key < best_key) best = name, best_key = key;
  }
  EXPECT_EQ(letters, (std::set<std::string>{"DPT", "DTP", "PDT", "PTD", "TDP", "TPD"}));
  EXPECT_EQ(rows[0].at("alias").get<std::string>(), "cluster");
  EXPECT_EQ(rows[0].at("placement").get<std::string>(), "DPT");
  EXPECT_EQ(rows[1].at("alias").get<std::string>(), "spread");
  EXPECT_EQ(rows[1].at("placement").get<std::string>(), "TPD");
  EXPECT_EQ(a.at("recommended").get<std::string>(), best);
}

TEST_F(SmdInfo, AdvisorKnownCase) {
  // 16 ranks, tp 4, pp 2, two nodes of 8: cluster keeps every tp group in a node.
  Json a = advise(16, 4, 2, 2);
  const Json &cluster = a.at("placements").at(0);
  EXPECT_EQ(cluster.at("placement").get<std::string>(), "DPT");
  EXPECT_EQ(cluster.at("tp").at("off_node_members").get<int64_t>(), 0);
  EXPECT_EQ(cluster.at("tp").at("split_groups").get<int64_t>(), 0);
  EXPECT_EQ(cluster.at("tp").at("groups").get<int64_t>(), 4);
  std::string rec = a.at("recommended").get<std::string>();
  for (const auto &row : a.at("placements"))
    if (row.at("placement").get<std::string>() == rec) {
      EXPECT_EQ(row.at("tp").at("off_node_members").get<int64_t>(), 0);
      // PDT: tp and dp both inside nodes
      EXPECT_EQ(row.at("dp").at("off_node_members").get<int64_t>(), 0);
    }
  EXPECT_EQ(rec, "PDT");
  expect_advice_matches(16, 4, 2, 2);
}

TEST_F(SmdInfo, AdvisorAgainstTheDefinition) {
  expect_advice_matches(8, 1, 2, 2);
  expect_advice_matches(16, 2, 2, 4, "--heaviest pp");
  expect_advice_matches(24, 2, 3, 3, "--heaviest dp");
  expect_advice_matches(32, 4, 2, 4, "--heaviest rdp --placement spread");
  expect_advice_matches(8, 8, 1, 2);  // tp cannot fit in a node
  Json given = advise(16, 2, 2, 4, "--placement spread");
  EXPECT_EQ(given.at("given").get<std::string>(), "TPD");
  Json pp_first = advise(16, 4, 2, 2, "--heaviest pp");
  EXPECT_EQ(pp_first.at("priority").at(0).get<std::string>(), "pp");
}

TEST_F(SmdInfo, AdvisorText) {
  Output r = run("groups --world 16 --tp 4 --pp 2 --nodes 2 --ranks-per-node 8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "DPT (cluster)"));
  EXPECT_TRUE(contains(r.out, "TPD (spread)"));
  EXPECT_TRUE(contains(r.out, "recommended: PDT: every tp group stays inside a node"));
  Output none = run("groups --world 8 --tp 8 --nodes 2 --ranks-per-node 4");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_TRUE(contains(none.out, "no placement keeps every tp group inside a node"));
}

TEST_F(SmdInfo, Params) {
  Output r = run("params");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "SMD_TIMEOUT"));
  EXPECT_TRUE(contains(r.out, "SMD_NODE_ID"));
  EXPECT_TRUE(contains(r.out, "variable"));
  // The shm plugin, always built, declares its own variables.
  EXPECT_TRUE(contains(r.out, "SMD_SHM_CMA")) << r.out;
  Output j = run("params --json");
  ASSERT_EQ(j.status, 0) << j.err;
  Json all = Json::parse(j.out);
  std::set<std::string> sources;
  for (const auto &v : all) {
    sources.insert(v.at("source").get<std::string>());
    if (v.at("name").get<std::string>() == "SMD_SHM_CMA") {
      EXPECT_EQ(v.at("source").get<std::string>(), "shm");
    }
    if (v.at("name").get<std::string>() == "SMD_TIMEOUT") {
      EXPECT_EQ(v.at("default").get<std::string>(), "300");
    }
  }
  EXPECT_TRUE(sources.count("core") && sources.count("shm") && sources.count("tcp"));
}

// smd-info topology --json under smdrun, as rank 0 printed it.
Output topology(const std::string &smdrun_args) {
  return run(
      smdrun_args + " --no-tag-output --timeout 60 " + program("SMD_INFO") + " topology --json",
      "SMDRUN");
}

TEST_F(SmdInfo, TopologyOneNode) {
  if (program("SMDRUN").empty()) GTEST_SKIP() << "SMDRUN is not set";
  Output r = topology("-n 4");
  ASSERT_EQ(r.status, 0) << r.err;
  Json t = Json::parse(r.out);
  EXPECT_EQ(t.at("ranks").get<int64_t>(), 4);
  EXPECT_EQ(t.at("nodes").get<int64_t>(), 1);
  std::set<int64_t> pids;
  const auto &ranks = t.at("by_rank");
  ASSERT_EQ(ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const auto &x = ranks[r];
    EXPECT_EQ(x.at("rank").get<int64_t>(), r);
    EXPECT_EQ(x.at("node").get<int64_t>(), 0);
    EXPECT_EQ(x.at("local_rank").get<int64_t>(), r);
    EXPECT_EQ(x.at("local_size").get<int64_t>(), 4);
    EXPECT_GE(x.at("cpus").get<int64_t>(), 1);
    EXPECT_FALSE(x.at("cpuset").get<std::string>().empty());
    EXPECT_FALSE(x.at("host").get<std::string>().empty());
    EXPECT_GE(x.at("numa_node").get<int64_t>(), -1);
    pids.insert(x.at("pid").get<int64_t>());
  }
  EXPECT_EQ(pids.size(), 4u);
  // GPUs of the machine, or why there are none (docs/GPU.md).
  if (t.at("gpus").empty()) {
    EXPECT_FALSE(t.at("gpus_absent_reason").get<std::string>().empty());
  }
  for (const auto &g : t.at("gpus")) EXPECT_FALSE(g.at("pci").get<std::string>().empty());
  Output text = run("-n 2 --timeout 60 " + program("SMD_INFO") + " topology", "SMDRUN");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "[0] world: 2 ranks on 1 node"));
  EXPECT_TRUE(contains(text.out, "cpuset"));
  EXPECT_TRUE(contains(text.out, "no CUDA devices (") ||
              contains(text.out, "GPUs of this machine: "))
      << text.out;
  // Without a driver the runtime calls it "insufficient"; smd-info says
  // there is none (as doctor does).
  if (void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(driver);
  } else {
    EXPECT_FALSE(contains(text.out, "insufficient")) << text.out;
    EXPECT_TRUE(contains(text.out, "no CUDA devices (no CUDA driver: libcuda.so.1 not found)") ||
                contains(text.out, "no CUDA devices (the CUDA runtime could not be opened"))
        << text.out;
  }
}

TEST_F(SmdInfo, TopologyTwoNodes) {
  if (program("SMDRUN").empty()) GTEST_SKIP() << "SMDRUN is not set";
  Output r = topology("-n 4 --nodes 2");
  if (r.status != 0 && contains(r.err, "no network transport plugin is usable"))
    GTEST_SKIP() << "ranks on two nodes need a network transport plugin, and none is built";
  ASSERT_EQ(r.status, 0) << r.err;
  Json t = Json::parse(r.out);
  EXPECT_EQ(t.at("nodes").get<int64_t>(), 2);
  const auto &ranks = t.at("by_rank");
  ASSERT_EQ(ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ranks[r].at("node").get<int64_t>(), r / 2);
    EXPECT_EQ(ranks[r].at("local_rank").get<int64_t>(), r % 2);
    EXPECT_EQ(ranks[r].at("local_size").get<int64_t>(), 2);
  }
}

}  // namespace
