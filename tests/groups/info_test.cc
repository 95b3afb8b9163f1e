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

#include "json_lite.h"
#include "reference.h"

namespace {

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
  for (const char *w : {"groups", "topology", "params", "off-node", "--ranks-per-node", "--heaviest"})
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
  Output r = run("groups --world " + std::to_string(world) + " --tp " + std::to_string(tp) + " --pp " +
              std::to_string(pp) + " --placement " + placement + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  jsonlite::Value doc = jsonlite::parse(r.out);
  ASSERT_EQ(doc.type, jsonlite::Value::Type::kArray);
  ASSERT_EQ(doc.items.size(), static_cast<size_t>(world));
  groupsref::Layout ref = groupsref::make(world, tp, pp, placement);
  const std::vector<std::string> keys = {"rank",     "rdp_rank", "pp_rank",   "tp_rank",
                                         "dp_rank",  "mp_rank",  "tp_group",  "pp_group",
                                         "rdp_group", "dp_group", "mp_group"};
  for (int rank = 0; rank < world; ++rank) {
    const jsonlite::Value &o = doc.items[rank];
    ASSERT_EQ(o.fields.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(o.fields[i].first, keys[i]);
    EXPECT_EQ(o.at("rank").i, rank);
    EXPECT_EQ(o.at("rdp_rank").i, ref.coords[rank][0]);
    EXPECT_EQ(o.at("pp_rank").i, ref.coords[rank][1]);
    EXPECT_EQ(o.at("tp_rank").i, ref.coords[rank][2]);
    EXPECT_EQ(o.at("dp_rank").i, ref.group_rank[SMD_GROUP_DP][rank]);
    EXPECT_EQ(o.at("mp_rank").i, ref.group_rank[SMD_GROUP_MP][rank]);
    EXPECT_EQ(o.at("tp_group").ints(), ref.members[SMD_GROUP_TP][rank]);
    EXPECT_EQ(o.at("pp_group").ints(), ref.members[SMD_GROUP_PP][rank]);
    EXPECT_EQ(o.at("rdp_group").ints(), ref.members[SMD_GROUP_RDP][rank]);
    EXPECT_EQ(o.at("dp_group").ints(), ref.members[SMD_GROUP_DP][rank]);
    EXPECT_EQ(o.at("mp_group").ints(), ref.members[SMD_GROUP_MP][rank]);
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
  EXPECT_EQ(h, (std::vector<std::string>{"rank", "rdp_rank", "pp_rank", "tp_rank", "dp_rank", "mp_rank",
                                         "tp_group", "pp_group", "rdp_group", "dp_group", "mp_group"}));
  // rank 5 = 4*1 + 2*0 + 1 under DPT
  EXPECT_EQ(v, (std::vector<std::string>{"5", "1", "0", "1", "3", "1", "4,5", "5,7", "1,5", "0,1,4,5",
                                         "4,5,6,7"}));
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

jsonlite::Value advise(int world, int tp, int pp, int nodes, const std::string &extra = "") {
  Output r = run("groups --world " + std::to_string(world) + " --tp " + std::to_string(tp) + " --pp " +
              std::to_string(pp) + " --nodes " + std::to_string(nodes) + " --ranks-per-node " +
              std::to_string(world / nodes) + " --json " + extra);
  EXPECT_EQ(r.status, 0) << r.err;
  return jsonlite::parse(r.out);
}

// Counts match the reference for every placement and kind, and the choice
// is the first placement with the least off-node members in priority order.
void expect_advice_matches(int world, int tp, int pp, int nodes, const std::string &extra = "") {
  SCOPED_TRACE("world " + std::to_string(world) + " tp " + std::to_string(tp) + " pp " +
               std::to_string(pp) + " nodes " + std::to_string(nodes) + " " + extra);
  jsonlite::Value a = advise(world, tp, pp, nodes, extra);
  const std::map<std::string, smd_group_kind_t> kinds = {
      {"tp", SMD_GROUP_TP}, {"pp", SMD_GROUP_PP}, {"dp", SMD_GROUP_DP}, {"rdp", SMD_GROUP_RDP},
      {"mp", SMD_GROUP_MP}};
  std::vector<std::string> priority;
  for (const auto &p : a.at("priority").items) priority.push_back(p.s);
  ASSERT_EQ(priority.size(), 5u);
  const auto &rows = a.at("placements").items;
  ASSERT_EQ(rows.size(), 6u);
  std::set<std::string> letters;
  std::string best;
  std::vector<int> best_key;
  for (const auto &row : rows) {
    std::string name = row.at("placement").s;
    letters.insert(name);
    groupsref::Layout ref = groupsref::make(world, tp, pp, name);
    std::vector<int> key;
    for (const std::string &k : priority) {
      RefScore s = ref_score(ref, kinds.at(k), world / nodes);
      const jsonlite::Value &got = row.at(k);
      EXPECT_EQ(got.at("groups").i, s.groups) << name << " " << k;
      EXPECT_EQ(got.at("split_groups").i, s.split) << name << " " << k;
      EXPECT_EQ(got.at("off_node_members").i, s.off_node) << name << " " << k;
      key.push_back(s.off_node);
    }
    if (best.empty() || key < best_key) best = name, best_key = key;
  }
  EXPECT_EQ(letters, (std::set<std::string>{"DPT", "DTP", "PDT", "PTD", "TDP", "TPD"}));
  EXPECT_EQ(rows[0].at("alias").s, "cluster");
  EXPECT_EQ(rows[0].at("placement").s, "DPT");
  EXPECT_EQ(rows[1].at("alias").s, "spread");
  EXPECT_EQ(rows[1].at("placement").s, "TPD");
  EXPECT_EQ(a.at("recommended").s, best);
}

TEST_F(SmdInfo, AdvisorKnownCase) {
  // 16 ranks, tp 4, pp 2, two nodes of 8: cluster keeps every tp group in a node.
  jsonlite::Value a = advise(16, 4, 2, 2);
  const jsonlite::Value &cluster = a.at("placements").items.at(0);
  EXPECT_EQ(cluster.at("placement").s, "DPT");
  EXPECT_EQ(cluster.at("tp").at("off_node_members").i, 0);
  EXPECT_EQ(cluster.at("tp").at("split_groups").i, 0);
  EXPECT_EQ(cluster.at("tp").at("groups").i, 4);
  std::string rec = a.at("recommended").s;
  for (const auto &row : a.at("placements").items)
    if (row.at("placement").s == rec) {
      EXPECT_EQ(row.at("tp").at("off_node_members").i, 0);
      EXPECT_EQ(row.at("dp").at("off_node_members").i, 0);  // PDT: tp and dp both inside nodes
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
  jsonlite::Value given = advise(16, 2, 2, 4, "--placement spread");
  EXPECT_EQ(given.at("given").s, "TPD");
  jsonlite::Value pp_first = advise(16, 4, 2, 2, "--heaviest pp");
  EXPECT_EQ(pp_first.at("priority").items.at(0).s, "pp");
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
  jsonlite::Value all = jsonlite::parse(j.out);
  std::set<std::string> sources;
  for (const auto &v : all.items) {
    sources.insert(v.at("source").s);
    if (v.at("name").s == "SMD_SHM_CMA") {
      EXPECT_EQ(v.at("source").s, "shm");
    }
    if (v.at("name").s == "SMD_TIMEOUT") {
      EXPECT_EQ(v.at("default").s, "300");
    }
  }
  EXPECT_TRUE(sources.count("core") && sources.count("shm") && sources.count("tcp"));
}

// smd-info topology --json under smdrun, as rank 0 printed it.
Output topology(const std::string &smdrun_args) {
  return run(smdrun_args + " --no-tag-output --timeout 60 " + program("SMD_INFO") + " topology --json",
             "SMDRUN");
}

TEST_F(SmdInfo, TopologyOneNode) {
  if (program("SMDRUN").empty()) GTEST_SKIP() << "SMDRUN is not set";
  Output r = topology("-n 4");
  ASSERT_EQ(r.status, 0) << r.err;
  jsonlite::Value t = jsonlite::parse(r.out);
  EXPECT_EQ(t.at("ranks").i, 4);
  EXPECT_EQ(t.at("nodes").i, 1);
  std::set<int64_t> pids;
  const auto &ranks = t.at("by_rank").items;
  ASSERT_EQ(ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const auto &x = ranks[r];
    EXPECT_EQ(x.at("rank").i, r);
    EXPECT_EQ(x.at("node").i, 0);
    EXPECT_EQ(x.at("local_rank").i, r);
    EXPECT_EQ(x.at("local_size").i, 4);
    EXPECT_GE(x.at("cpus").i, 1);
    EXPECT_FALSE(x.at("cpuset").s.empty());
    EXPECT_FALSE(x.at("host").s.empty());
    EXPECT_GE(x.at("numa_node").i, -1);
    pids.insert(x.at("pid").i);
  }
  EXPECT_EQ(pids.size(), 4u);
  // GPUs of the machine, or why there are none (docs/GPU.md).
  if (t.at("gpus").items.empty()) {
    EXPECT_FALSE(t.at("gpus_absent_reason").s.empty());
  }
  for (const auto &g : t.at("gpus").items) EXPECT_FALSE(g.at("pci").s.empty());
  Output text = run("-n 2 --timeout 60 " + program("SMD_INFO") + " topology", "SMDRUN");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "[0] world: 2 ranks on 1 node"));
  EXPECT_TRUE(contains(text.out, "cpuset"));
  EXPECT_TRUE(contains(text.out, "no CUDA devices (") || contains(text.out, "GPUs of this machine: "))
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
  jsonlite::Value t = jsonlite::parse(r.out);
  EXPECT_EQ(t.at("nodes").i, 2);
  const auto &ranks = t.at("by_rank").items;
  ASSERT_EQ(ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ranks[r].at("node").i, r / 2);
    EXPECT_EQ(ranks[r].at("local_rank").i, r % 2);
    EXPECT_EQ(ranks[r].at("local_size").i, 2);
  }
}

}  // namespace
