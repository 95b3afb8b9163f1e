// Command line of smd-bench (modelled on nccl-tests' flags).
#pragma once

#include <smd.h>

#include <cstddef>
#include <string>

namespace smdbench {

enum class Coll { kAllreduce, kAllgather, kReduceScatter, kBroadcast, kReduce, kAlltoall };

struct Options {
  Coll coll = Coll::kAllreduce;
  std::string coll_name = "allreduce";
  size_t min_bytes = 8;
  size_t max_bytes = 64 << 20;
  double factor = 2.0;
  smd_datatype_t dtype = SMD_FLOAT32;
  std::string dtype_name = "float32";
  smd_op_t op = SMD_SUM;
  std::string op_name = "sum";
  int iters = 20;
  int warmup = 5;
  bool check = true;
  bool inplace = false;
  bool shared_mem = false;  // -m 1: buffers from smd_mem_alloc
  bool json = false;
  bool rss = false;  // --rss: each rank reports its peak resident memory (VmHWM)
  int root = 0;
  std::string tune_file;  // --tune FILE: measure link costs, write a tuning file
  // Many tensors per step (bench_tensors.h): --tensors K of -b bytes each,
  // or --model NAME's parameter list (--layers L of its encoder layers);
  // --grouped runs them in one group, --single as one allreduce.
  int tensors = 0;
  std::string model;
  int layers = 12;
  bool grouped = false;
  bool single = false;
  bool many_tensors() const { return tensors > 0 || !model.empty(); }
  std::string unused_;  // --tune FILE: measure link costs, write a tuning file
};

// Parses argv; on --help prints usage and exits 0, on bad usage prints the
// problem and usage and exits 2 (this is a tool, not the library).
Options parse_options(int argc, char **argv);

// "8", "64K", "1M", "2G" -> bytes.
size_t parse_size(const std::string &s);

}  // namespace smdbench
