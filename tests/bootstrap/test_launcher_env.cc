// detect_launch_env(): which launcher wins, what it says, and how bad
// values are refused.
#include <gtest/gtest.h>

#include "core/bootstrap/launcher_env.h"
#include "env_guard.h"
#include "expect_error.h"

namespace smd {
namespace {

using test::EnvGuard;

TEST(LauncherEnv, NoLauncherIsASingleRankWorld) {
  EnvGuard env;
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "none");
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.local_rank, 0);
  EXPECT_EQ(e.local_size, 1);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
  EXPECT_EQ(e.master_port, -1);
  EXPECT_EQ(e.job_token, "");
  EXPECT_NE(e.why.find("single-rank"), std::string::npos) << e.why;
}

TEST(LauncherEnv, SmdVariables) {
  EnvGuard env;
  env.set("SMD_RANK", "2");
  env.set("SMD_WORLD_SIZE", "4");
  env.set("SMD_LOCAL_RANK", "2");
  env.set("SMD_LOCAL_SIZE", "4");
  env.set("SMD_MASTER_PORT", "31000");
  env.set("SMD_JOB_TOKEN", "job-42");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "smd");
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_rank, 2);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
  EXPECT_EQ(e.master_port, 31000);
  EXPECT_EQ(e.job_token, "job-42");
  EXPECT_NE(e.why.find("SMD_RANK/SMD_WORLD_SIZE set by smdrun"), std::string::npos) << e.why;
  EXPECT_NE(e.why.find("SMD_MASTER_PORT"), std::string::npos) << e.why;
}

TEST(LauncherEnv, SmdWithoutLocalHints) {
  EnvGuard env;
  env.set("SMD_RANK", "0");
  env.set("SMD_WORLD_SIZE", "3");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.local_rank, -1);
  EXPECT_EQ(e.local_size, -1);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
}

TEST(LauncherEnv, SmdBeatsEveryOtherLauncher) {
  EnvGuard env;
  env.set("SMD_RANK", "1");
  env.set("SMD_WORLD_SIZE", "2");
  env.set("RANK", "5");
  env.set("WORLD_SIZE", "8");
  env.set("OMPI_COMM_WORLD_RANK", "6");
  env.set("OMPI_COMM_WORLD_SIZE", "8");
  env.set("SLURM_PROCID", "7");
  env.set("SLURM_NTASKS", "8");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "smd");
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
}

TEST(LauncherEnv, SmdHalfSetIsAnError) {
  EnvGuard env;
  env.set("SMD_RANK", "1");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_RANK is set but SMD_WORLD_SIZE is not",
                   detect_launch_env());
}

TEST(LauncherEnv, RankMustBeBelowSize) {
  EnvGuard env;
  env.set("SMD_RANK", "5");
  env.set("SMD_WORLD_SIZE", "4");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_RANK=5 is not below SMD_WORLD_SIZE=4",
                   detect_launch_env());
  env.set("SMD_RANK", "-1");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_RANK=-1 is negative", detect_launch_env());
}

TEST(LauncherEnv, MalformedIntegersNameTheVariable) {
  EnvGuard env;
  env.set("SMD_WORLD_SIZE", "4");
  for (const char *bad : {"abc", "3x", "1.5", " ", "99999999999"}) {
    env.set("SMD_RANK", bad);
    EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT,
                     std::string("SMD_RANK=") + bad + " is not an integer", detect_launch_env());
  }
}

TEST(LauncherEnv, WorldSizeAtLeastOne) {
  EnvGuard env;
  env.set("SMD_RANK", "0");
  env.set("SMD_WORLD_SIZE", "0");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_WORLD_SIZE=0 must be at least 1",
                   detect_launch_env());
}

TEST(LauncherEnv, LocalRankBelowLocalSize) {
  EnvGuard env;
  env.set("SMD_RANK", "3");
  env.set("SMD_WORLD_SIZE", "4");
  env.set("SMD_LOCAL_RANK", "2");
  env.set("SMD_LOCAL_SIZE", "2");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_LOCAL_RANK=2 is not below SMD_LOCAL_SIZE=2",
                   detect_launch_env());
  env.set("SMD_LOCAL_RANK", "0");
  env.set("SMD_LOCAL_SIZE", "8");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_LOCAL_SIZE=8 is larger than SMD_WORLD_SIZE=4",
                   detect_launch_env());
}

TEST(LauncherEnv, PortRange) {
  EnvGuard env;
  env.set("SMD_RANK", "0");
  env.set("SMD_WORLD_SIZE", "1");
  env.set("SMD_MASTER_PORT", "70000");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_MASTER_PORT=70000 is not a TCP port (1..65535)",
                   detect_launch_env());
  env.set("SMD_MASTER_PORT", "http");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SMD_MASTER_PORT=http is not an integer",
                   detect_launch_env());
  unsetenv("SMD_MASTER_PORT");
  env.set("MASTER_PORT", "0");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "MASTER_PORT=0 is not a TCP port",
                   detect_launch_env());
}

TEST(LauncherEnv, Torchrun) {
  EnvGuard env;
  env.set("RANK", "5");
  env.set("WORLD_SIZE", "8");
  env.set("LOCAL_RANK", "1");
  env.set("LOCAL_WORLD_SIZE", "4");
  env.set("MASTER_ADDR", "node7");
  env.set("MASTER_PORT", "29400");
  env.set("TORCHELASTIC_RUN_ID", "run-abc");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.master_addr, "node7");
  // MASTER_PORT is torch's own store: smd serves on the next port.
  EXPECT_EQ(e.master_port, 29401);
  EXPECT_EQ(e.job_token, "run-abc");
  EXPECT_FALSE(e.job_token_secret);
  EXPECT_NE(e.why.find("torchrun variables RANK/WORLD_SIZE"), std::string::npos) << e.why;
  EXPECT_NE(e.why.find("MASTER_ADDR"), std::string::npos) << e.why;
}

TEST(LauncherEnv, SmdAddressTokenAndPortOverrideTorchrun) {
  EnvGuard env;
  env.set("RANK", "0");
  env.set("WORLD_SIZE", "2");
  env.set("MASTER_ADDR", "node7");
  env.set("MASTER_PORT", "29400");
  env.set("TORCHELASTIC_RUN_ID", "run-abc");
  env.set("SMD_MASTER_ADDR", "10.1.2.3");
  env.set("SMD_MASTER_PORT", "30001");
  env.set("SMD_JOB_TOKEN", "mine");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.master_addr, "10.1.2.3");
  EXPECT_EQ(e.master_port, 30001);
  EXPECT_EQ(e.job_token, "mine");
  EXPECT_TRUE(e.job_token_secret);
}

TEST(LauncherEnv, MasterPortAtTheTopDerivesTheOneBelow) {
  EnvGuard env;
  env.set("RANK", "0");
  env.set("WORLD_SIZE", "2");
  env.set("MASTER_PORT", "65535");
  EXPECT_EQ(detect_launch_env().master_port, 65534);
}

TEST(LauncherEnv, TorchrunNeedsBothRankAndWorldSize) {
  EnvGuard env;
  env.set("RANK", "3");  // some other tool's RANK alone is not torchrun
  EXPECT_EQ(detect_launch_env().launcher, "none");
  env.set("WORLD_SIZE", "2");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "RANK=3 is not below WORLD_SIZE=2",
                   detect_launch_env());
}

TEST(LauncherEnv, TorchrunMultiNodeWithoutAddressLeavesItEmpty) {
  EnvGuard env;
  env.set("RANK", "0");
  env.set("WORLD_SIZE", "8");
  env.set("LOCAL_WORLD_SIZE", "4");
  EXPECT_EQ(detect_launch_env().master_addr, "");
  env.set("LOCAL_WORLD_SIZE", "8");
  EXPECT_EQ(detect_launch_env().master_addr, "127.0.0.1");
}

TEST(LauncherEnv, TorchrunBeatsOpenMpi) {
  EnvGuard env;
  env.set("RANK", "1");
  env.set("WORLD_SIZE", "2");
  env.set("OMPI_COMM_WORLD_RANK", "0");
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_EQ(detect_launch_env().launcher, "torchrun");
}

TEST(LauncherEnv, OpenMpiOneNode) {
  EnvGuard env;
  env.set("OMPI_COMM_WORLD_RANK", "3");
  env.set("OMPI_COMM_WORLD_SIZE", "4");
  env.set("OMPI_COMM_WORLD_LOCAL_RANK", "3");
  env.set("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
  env.set("OMPI_MCA_ess_base_jobid", "1234567");
  env.set("PMIX_NAMESPACE", "ns-ignored");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "openmpi");
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_rank, 3);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
  EXPECT_EQ(e.master_port, -1);
  EXPECT_EQ(e.job_token, "1234567");
  EXPECT_NE(e.why.find("OMPI_COMM_WORLD_RANK"), std::string::npos) << e.why;
}

TEST(LauncherEnv, OpenMpiSeveralNodes) {
  EnvGuard env;
  env.set("OMPI_COMM_WORLD_RANK", "5");
  env.set("OMPI_COMM_WORLD_SIZE", "8");
  env.set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
  env.set("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
  env.set("PMIX_NAMESPACE", "prterun-host-1234@1");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.master_addr, "");  // rank 0 may be elsewhere: the caller must ask
  EXPECT_EQ(e.job_token, "prterun-host-1234@1");
  env.set("OMPI_MCA_orte_ess_jobid", "99");
  EXPECT_EQ(detect_launch_env().job_token, "99");
  env.set("MASTER_ADDR", "head");
  EXPECT_EQ(detect_launch_env().master_addr, "head");
}

TEST(LauncherEnv, OpenMpiValidation) {
  EnvGuard env;
  env.set("OMPI_COMM_WORLD_RANK", "4");
  env.set("OMPI_COMM_WORLD_SIZE", "4");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT,
                   "OMPI_COMM_WORLD_RANK=4 is not below OMPI_COMM_WORLD_SIZE=4",
                   detect_launch_env());
}

TEST(LauncherEnv, OpenMpiBeatsSlurm) {
  EnvGuard env;  // mpirun inside a Slurm allocation
  env.set("OMPI_COMM_WORLD_RANK", "1");
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  env.set("SLURM_PROCID", "0");
  env.set("SLURM_NTASKS", "1");
  EXPECT_EQ(detect_launch_env().launcher, "openmpi");
}

TEST(LauncherEnv, Slurm) {
  EnvGuard env;
  env.set("SLURM_PROCID", "5");
  env.set("SLURM_NTASKS", "8");
  env.set("SLURM_LOCALID", "1");
  env.set("SLURM_TASKS_PER_NODE", "4(x2)");
  env.set("SLURM_JOB_ID", "7781");
  env.set("SLURM_STEP_ID", "0");
  env.set("SLURM_JOB_NODELIST", "other[1-2]");
  env.set("SLURM_STEP_NODELIST", "node[03-04]");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 4);
  EXPECT_EQ(e.master_addr, "node03");
  EXPECT_EQ(e.master_port, -1);
  EXPECT_EQ(e.job_token, "7781.0");
  EXPECT_NE(e.why.find("SLURM_PROCID"), std::string::npos) << e.why;
}

TEST(LauncherEnv, SlurmLocalSize) {
  EnvGuard env;
  env.set("SLURM_PROCID", "0");
  env.set("SLURM_NTASKS", "6");
  env.set("SLURM_LOCALID", "0");
  env.set("SLURM_TASKS_PER_NODE", "4,2");
  EXPECT_EQ(detect_launch_env().local_size, -1);  // which node are we on?
  env.set("SLURM_NODEID", "1");
  EXPECT_EQ(detect_launch_env().local_size, 2);
  env.set("SLURM_STEP_TASKS_PER_NODE", "3(x2)");  // the step's wins
  EXPECT_EQ(detect_launch_env().local_size, 3);
  env.set("SLURM_STEP_TASKS_PER_NODE", "garbage");
  EXPECT_EQ(detect_launch_env().local_size, -1);
  env.set("SLURM_STEP_TASKS_PER_NODE", "2(x3)");
  env.set("SLURM_LOCALID", "2");  // disagrees with 2 per node: hint dropped
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.local_size, -1);
  EXPECT_EQ(e.local_rank, 2);
}

TEST(LauncherEnv, SlurmJobIdWithoutStepAndOneNode) {
  EnvGuard env;
  env.set("SLURM_PROCID", "0");
  env.set("SLURM_NTASKS", "2");
  env.set("SLURM_TASKS_PER_NODE", "2");
  env.set("SLURM_JOB_ID", "55");
  LaunchEnv e = detect_launch_env();
  EXPECT_EQ(e.job_token, "55");
  EXPECT_EQ(e.master_addr, "127.0.0.1");  // no node list, one node
  env.set("SLURM_JOB_NODELIST", "gpu7,gpu8");
  EXPECT_EQ(detect_launch_env().master_addr, "gpu7");
}

TEST(LauncherEnv, SlurmBadNodeListNamesTheVariable) {
  EnvGuard env;
  env.set("SLURM_PROCID", "0");
  env.set("SLURM_NTASKS", "2");
  env.set("SLURM_STEP_NODELIST", "node[1-");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "SLURM_STEP_NODELIST: hostlist 'node[1-'",
                   detect_launch_env());
}

TEST(SlurmHostlist, FirstHost) {
  EXPECT_EQ(slurm_first_host("node[03-07,9],gpu1"), "node03");
  EXPECT_EQ(slurm_first_host("gpu1,node[1-2]"), "gpu1");
  EXPECT_EQ(slurm_first_host("single"), "single");
  EXPECT_EQ(slurm_first_host("n[9,10-12]"), "n9");
  EXPECT_EQ(slurm_first_host("rack[1-2]-n[05,7]"), "rack1-n05");
  EXPECT_EQ(slurm_first_host("ip-10-0-[1-3]-7"), "ip-10-0-1-7");
  EXPECT_EQ(slurm_first_host("node[007]"), "node007");
}

TEST(SlurmHostlist, Malformed) {
  for (const char *bad : {"", ",node1", "node[1-", "node]1", "node[]", "node[a-b]", "node[-3]"})
    EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "hostlist", slurm_first_host(bad)) << bad;
}

TEST(DefaultStorePort, FromJobToken) {
  LaunchEnv e;
  EXPECT_EQ(default_store_port(e), 29500);
  e.job_token = "7781.0";
  int a = default_store_port(e);
  EXPECT_GE(a, 29500);
  EXPECT_LT(a, 31500);
  EXPECT_EQ(default_store_port(e), a);  // every rank agrees
  int distinct = 0;
  for (int i = 0; i < 20; ++i) {
    LaunchEnv o;
    o.job_token = "job-" + std::to_string(i);
    distinct += default_store_port(o) != a;
  }
  EXPECT_GE(distinct, 18);
}

}  // namespace
}  // namespace smd
