// Which launcher started this process, and what it says about the world:
// smdrun / SMD_* variables, torchrun, Open MPI (mpirun), Slurm (srun).
#pragma once

#include <string>

namespace smd {

struct LaunchEnv {
  // "smd", "torchrun", "openmpi", "slurm", or "none" (no launcher: a
  // single-rank world).
  std::string launcher = "none";
  int rank = -1;
  int world_size = -1;
  int local_rank = -1;  // hints from the launcher, -1 if it gave none
  int local_size = -1;
  // "" if the launcher gave none and does not imply one: rank 0 then
  // leaves its address in its rendezvous note (rendezvous_file.h).
  std::string master_addr;
  // -1 if the launcher gave none. From SMD_MASTER_PORT as given; from
  // MASTER_PORT (torch's: torchrun's agent or init_process_group serves
  // its own store there) the next port, MASTER_PORT + 1 (MASTER_PORT - 1
  // when that is 65535), so smd's store and torch's coexist.
  int master_port = -1;
  std::string job_token;          // SMD_JOB_TOKEN, else the launcher's job id
  bool job_token_secret = false;  // job_token is SMD_JOB_TOKEN
  std::string why;                // which variables decided, for the init log
};

// Reads the environment. Precedence: SMD_* (smdrun), torchrun, Open MPI,
// Slurm. Within the chosen launcher, SMD_MASTER_ADDR/PORT, MASTER_ADDR/PORT
// and SMD_JOB_TOKEN still apply. Throws smd::Error SMD_ERR_INVALID_ARGUMENT
// on malformed or inconsistent values (rank >= size, non-numbers), naming
// the variable.
LaunchEnv detect_launch_env();

}  // namespace smd

namespace smd {

// The store port when the environment names none: 29500, or, when the job
// has a token (SMD_JOB_TOKEN or the launcher's job id), 29500 plus a hash
// of it modulo 2000, so that two jobs sharing a host rarely pick the same
// port. Every rank of a job computes the same value.
int default_store_port(const LaunchEnv &env);

// The first host of a Slurm hostlist: "node[03-07,9],gpu1" -> "node03",
// "rack[1-2]-n[5,7]" -> "rack1-n5". Throws smd::Error
// SMD_ERR_INVALID_ARGUMENT on an empty or malformed list.
std::string slurm_first_host(const std::string &hostlist);

}  // namespace smd
