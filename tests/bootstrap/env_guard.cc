#include "env_guard.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace smd::test {
namespace {

const char *const kLauncherVars[] = {
    "SMD_RANK",
    "SMD_WORLD_SIZE",
    "SMD_LOCAL_RANK",
    "SMD_LOCAL_SIZE",
    "SMD_MASTER_ADDR",
    "SMD_MASTER_PORT",
    "SMD_JOB_TOKEN",
    "SMD_RENDEZVOUS_DIR",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "OMPI_MCA_ess_base_jobid",
    "OMPI_MCA_orte_ess_jobid",
    "PMIX_NAMESPACE",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NODEID",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "SLURM_STEPID",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
};

}  // namespace

EnvGuard::EnvGuard() {
  for (const char *name : kLauncherVars) {
    const char *v = getenv(name);
    saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
    unsetenv(name);
  }
}

EnvGuard::~EnvGuard() {
  for (const auto &[name, value] : saved_) {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
}

void EnvGuard::set(const char *name, const std::string &value) {
  bool known = false;
  for (const auto &[saved, v] : saved_) known = known || saved == name;
  ASSERT_TRUE(known) << name << " is not restored by EnvGuard";
  setenv(name, value.c_str(), 1);
}

}  // namespace smd::test
