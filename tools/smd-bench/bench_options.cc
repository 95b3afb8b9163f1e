#include "bench_options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace smdbench {
namespace {

const char *kUsage =
    "usage: smd-bench COLLECTIVE [options]      (run under smdrun -n N)\n"
    "       smd-bench --tune FILE                measure the link costs of the automatic\n"
    "              choice of algorithms and write them to FILE (for SMD_TUNING_FILE)\n"
    "  COLLECTIVE: allreduce | allgather | reduce_scatter | broadcast | reduce | alltoall\n"
    "  -b SIZE     smallest size in bytes (default 8; K/M/G suffixes)\n"
    "  -e SIZE     largest size in bytes (default 64M)\n"
    "  -f FACTOR   multiply the size by this between steps (default 2)\n"
    "  -d DTYPE    int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64\n"
    "  -o OP       sum prod min max avg (default sum)\n"
    "  -n ITERS    timed iterations per size (default 20)\n"
    "  -w WARMUP   untimed iterations per size (default 5)\n"
    "  -c 0|1      run one untimed call per size on known values and check its\n"
    "              result (default 1; the timed calls are never checked)\n"
    "  -i 0|1      in place (default 0)\n"
    "  -r ROOT     root of broadcast/reduce (default 0)\n"
    "  -m 0|1      buffers from smd_mem_alloc, which peers on the node read in place\n"
    "              (default 0: ordinary memory)\n"
    "  --json      one JSON object per size instead of the table, with the\n"
    "              algorithm of the timed calls (algo) and the bytes the busiest\n"
    "              rank sent to other nodes per call (inter_node_bytes) and the\n"
    "              cost model's prediction of one call (predicted_us)\n"
    "  --rss       at the end, every rank prints its peak resident memory (VmHWM)\n"
    "              and the largest size's user buffers, in KiB (JSON with --json)\n"
    "  --tensors K allreduce only: K tensors of -b bytes per step, each its own call\n"
    "  --model M   allreduce only: the parameter tensors of model M per step\n"
    "              (bert-base: 199 tensors, 418 MiB in float32); --layers L keeps L\n"
    "              of its 12 encoder layers\n"
    "  --grouped   with --tensors/--model: the step's calls in one group (fused)\n"
    "  --single    with --tensors/--model: one allreduce of the step's total bytes\n"
    "Sizes count bytes as nccl-tests does: the vector for allreduce/broadcast/reduce,\n"
    "the whole output for allgather, the whole input for reduce_scatter and alltoall.\n"
    "busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, reduce_scatter, alltoall),\n"
    "1 (broadcast, reduce). time_us is the slowest rank's mean time per call\n"
    "(nccl-tests reports the mean over ranks by default).\n";

[[noreturn]] void usage_error(const std::string &msg) {
  fprintf(stderr, "smd-bench: %s\n%s", msg.c_str(), kUsage);
  exit(2);
}

const char *kDtypes[] = {"int8", "uint8", "int32", "uint32", "int64",
                         "uint64", "float16", "bfloat16", "float32", "float64"};
const char *kOps[] = {"sum", "prod", "min", "max", "avg"};

}  // namespace

size_t parse_size(const std::string &s) {
  if (s.empty()) throw std::invalid_argument("empty size");
  char *end = nullptr;
  double v = strtod(s.c_str(), &end);
  size_t mult = 1;
  if (*end == 'K' || *end == 'k') mult = 1024, ++end;
  else if (*end == 'M' || *end == 'm') mult = 1024 * 1024, ++end;
  else if (*end == 'G' || *end == 'g') mult = 1024ull * 1024 * 1024, ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end || v < 0) throw std::invalid_argument("bad size '" + s + "'");
  return static_cast<size_t>(v * mult);
}

Options parse_options(int argc, char **argv) {
  Options o;
  if (argc < 2) usage_error("no collective given");
  std::string first = argv[1];
  if (first == "-h" || first == "--help") {
    fputs(kUsage, stdout);
    exit(0);
  }
  if (first == "--tune") {
    if (argc != 3) usage_error("--tune takes one argument, the file to write");
    o.tune_file = argv[2];
    return o;
  }
  struct {
    const char *name;
    Coll coll;
  } colls[] = {{"allreduce", Coll::kAllreduce}, {"allgather", Coll::kAllgather},
               {"reduce_scatter", Coll::kReduceScatter}, {"broadcast", Coll::kBroadcast},
               {"reduce", Coll::kReduce}, {"alltoall", Coll::kAlltoall}};
  bool found = false;
  for (auto &c : colls)
    if (first == c.name) o.coll = c.coll, o.coll_name = c.name, found = true;
  if (!found) usage_error("unknown collective '" + first + "'");
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "-b") o.min_bytes = parse_size(value());
      else if (a == "-e") o.max_bytes = parse_size(value());
      else if (a == "-f") o.factor = std::stod(value());
      else if (a == "-n") o.iters = std::stoi(value());
      else if (a == "-w") o.warmup = std::stoi(value());
      else if (a == "-c") o.check = std::stoi(value()) != 0;
      else if (a == "-i") o.inplace = std::stoi(value()) != 0;
      else if (a == "-m") o.shared_mem = std::stoi(value()) != 0;
      else if (a == "-r") o.root = std::stoi(value());
      else if (a == "--json") o.json = true;
      else if (a == "--rss") o.rss = true;
      else if (a == "--tensors") o.tensors = std::stoi(value());
      else if (a == "--model") o.model = value();
      else if (a == "--layers") o.layers = std::stoi(value());
      else if (a == "--grouped") o.grouped = true;
      else if (a == "--single") o.single = true;
      else if (a == "-h" || a == "--help") {
        fputs(kUsage, stdout);
        exit(0);
      } else if (a == "-d") {
        std::string d = value();
        int k = 0;
        while (k < 10 && d != kDtypes[k]) ++k;
        if (k == 10) usage_error("unknown datatype '" + d + "'");
        o.dtype = static_cast<smd_datatype_t>(k);
        o.dtype_name = d;
      } else if (a == "-o") {
        std::string op = value();
        int k = 0;
        while (k < 5 && op != kOps[k]) ++k;
        if (k == 5) usage_error("unknown op '" + op + "'");
        o.op = static_cast<smd_op_t>(k);
        o.op_name = op;
      } else {
        usage_error("unknown option '" + a + "'");
      }
    } catch (const std::logic_error &e) {
      usage_error("bad value for " + a + ": " + e.what());
    }
  }
  if (o.factor <= 1.0 && o.min_bytes != o.max_bytes) usage_error("-f must be greater than 1");
  if (o.min_bytes > o.max_bytes) usage_error("-b is larger than -e");
  if (o.iters < 1 || o.warmup < 0) usage_error("-n must be >= 1 and -w >= 0");
  if (o.tensors < 0 || o.layers < 0) usage_error("--tensors and --layers must be >= 0");
  if (o.many_tensors() && o.coll != Coll::kAllreduce) usage_error("--tensors and --model need allreduce");
  if (o.grouped && o.single) usage_error("--grouped and --single exclude each other");
  return o;
}

}  // namespace smdbench
