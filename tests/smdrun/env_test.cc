// What each rank finds in its environment.
#include <gtest/gtest.h>
#include <sched.h>

#include <map>
#include <set>

#include "smdrun_process.h"

namespace smdrun_test {
namespace {

using Env = std::map<std::string, std::string>;

// Runs `-n n [extra] helper env` and returns each rank's variables.
std::vector<Env> rank_envs(int n, std::vector<std::string> extra = {},
                           const std::vector<std::string> &env = {}) {
  std::vector<std::string> args = {"-n", std::to_string(n)};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {helper_path(), "env"});
  // A token or node id in the test's own environment would leak through.
  std::vector<std::string> changes = {"SMD_JOB_TOKEN", "SMD_NODE_ID"};
  changes.insert(changes.end(), env.begin(), env.end());
  RunResult r = run_smdrun(args, changes);
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  std::vector<Env> envs(static_cast<size_t>(n));
  for (int rank = 0; rank < n; ++rank)
    for (const std::string &line : rank_lines(r.out, rank)) {
      size_t eq = line.find('=');
      envs[static_cast<size_t>(rank)][line.substr(0, eq)] = line.substr(eq + 1);
    }
  return envs;
}

// --bind-to core: rank r runs on the (r mod C)-th CPU smdrun may use;
// without it every rank keeps smdrun's whole mask.
TEST(SmdrunEnv, BindToCorePinsRanksInTurn) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> mine;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) mine.push_back(c);
  std::string all;
  for (int c : mine) {
    if (!all.empty()) all += ',';
    all += std::to_string(c);
  }
  const int n = 3;
  for (bool bind : {true, false}) {
    std::vector<std::string> args = {"-n", std::to_string(n)};
    if (bind) args.insert(args.end(), {"--bind-to", "core"});
    args.insert(args.end(), {helper_path(), "cpus"});
    RunResult r = run_smdrun(args, {});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    for (int rank = 0; rank < n; ++rank) {
      std::vector<std::string> lines = rank_lines(r.out, rank);
      ASSERT_EQ(lines.size(), 1u) << r.out;
      std::string want = bind ? std::to_string(mine[static_cast<size_t>(rank) % mine.size()]) : all;
      EXPECT_EQ(lines[0], "cpus=" + want) << "rank " << rank << (bind ? " bound" : "");
    }
  }
}

TEST(SmdrunEnv, EveryRankKnowsItsPlaceInSmdAndTorchrunNames) {
  const int n = 4;
  std::vector<Env> envs = rank_envs(n);
  for (int rank = 0; rank < n; ++rank) {
    Env &e = envs[static_cast<size_t>(rank)];
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(e["SMD_RANK"], std::to_string(rank));
    EXPECT_EQ(e["RANK"], std::to_string(rank));
    EXPECT_EQ(e["SMD_LOCAL_RANK"], std::to_string(rank));
    EXPECT_EQ(e["LOCAL_RANK"], std::to_string(rank));
    for (const char *size : {"SMD_WORLD_SIZE", "WORLD_SIZE", "SMD_LOCAL_SIZE", "LOCAL_WORLD_SIZE"})
      EXPECT_EQ(e[size], "4") << size;
    EXPECT_EQ(e["SMD_MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(e["MASTER_ADDR"], "127.0.0.1");
    EXPECT_GT(std::stoi(e["SMD_MASTER_PORT"]), 0);
    // torch serves its own store on MASTER_PORT: smd's is elsewhere.
    EXPECT_GT(std::stoi(e["MASTER_PORT"]), 0);
    EXPECT_NE(e["MASTER_PORT"], e["SMD_MASTER_PORT"]);
    EXPECT_EQ(e["MASTER_PORT"], envs[0]["MASTER_PORT"]);
    EXPECT_EQ(e["SMD_MASTER_PORT"], envs[0]["SMD_MASTER_PORT"]);
    EXPECT_EQ(e["SMD_JOB_TOKEN"].size(), 32u);
    EXPECT_EQ(e["SMD_JOB_TOKEN"].find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(e["SMD_JOB_TOKEN"], envs[0]["SMD_JOB_TOKEN"]);
    EXPECT_EQ(e.count("SMD_NODE_ID"), 0u);
  }
}

TEST(SmdrunEnv, EachLaunchGetsItsOwnPortAndToken) {
  Env first = rank_envs(2)[0], second = rank_envs(2)[0];
  EXPECT_NE(first["SMD_MASTER_PORT"], second["SMD_MASTER_PORT"]);
  EXPECT_NE(first["SMD_JOB_TOKEN"], second["SMD_JOB_TOKEN"]);
}

TEST(SmdrunEnv, TokenFromTheOuterEnvironmentIsPassedThrough) {
  for (const Env &e : rank_envs(2, {}, {"SMD_JOB_TOKEN=outer-job-7"}))
    EXPECT_EQ(e.at("SMD_JOB_TOKEN"), "outer-job-7");
}

TEST(SmdrunEnv, InheritedLauncherVariablesAreReplaced) {
  std::vector<Env> envs =
      rank_envs(2, {}, {"RANK=9", "WORLD_SIZE=99", "SMD_RANK=9", "MASTER_PORT=1"});
  EXPECT_EQ(envs[1]["RANK"], "1");
  EXPECT_EQ(envs[1]["WORLD_SIZE"], "2");
  EXPECT_EQ(envs[1]["SMD_RANK"], "1");
  EXPECT_NE(envs[1]["MASTER_PORT"], "1");
}

TEST(SmdrunEnv, MasterAddressAndPortCanBeGiven) {
  for (const Env &e : rank_envs(2, {"--master-addr", "localhost", "--master-port=29511"})) {
    EXPECT_EQ(e.at("SMD_MASTER_ADDR"), "localhost");
    EXPECT_EQ(e.at("MASTER_ADDR"), "localhost");
    EXPECT_EQ(e.at("SMD_MASTER_PORT"), "29511");
    EXPECT_NE(e.at("MASTER_PORT"), "29511");
  }
}

TEST(SmdrunEnv, FakeNodesAreContiguousBlocks) {
  // 5 ranks on 2 nodes: blocks of ceil(5/2) = 3.
  std::vector<Env> envs = rank_envs(5, {"--nodes", "2"});
  const char *node[] = {"node0", "node0", "node0", "node1", "node1"};
  const char *local_rank[] = {"0", "1", "2", "0", "1"};
  const char *local_size[] = {"3", "3", "3", "2", "2"};
  for (size_t r = 0; r < 5; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(envs[r]["SMD_NODE_ID"], node[r]);
    EXPECT_EQ(envs[r]["SMD_LOCAL_RANK"], local_rank[r]);
    EXPECT_EQ(envs[r]["LOCAL_RANK"], local_rank[r]);
    EXPECT_EQ(envs[r]["SMD_LOCAL_SIZE"], local_size[r]);
    EXPECT_EQ(envs[r]["LOCAL_WORLD_SIZE"], local_size[r]);
    EXPECT_EQ(envs[r]["SMD_WORLD_SIZE"], "5");
  }
}

TEST(SmdrunEnv, ProgramIsFoundOnPath) {
  RunResult r = run_smdrun({"-n", "2", "sh", "-c", "echo rank $RANK"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(rank_lines(r.out, 0), std::vector<std::string>{"rank 0"});
  EXPECT_EQ(rank_lines(r.out, 1), std::vector<std::string>{"rank 1"});
}

}  // namespace
}  // namespace smdrun_test
