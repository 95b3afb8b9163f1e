#include "bench_options.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

#include "../common/cli_args.h"

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

const char *kDtypes[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
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

namespace {

// -h or --help, wherever it stands before an error.
struct HelpAsked {};

int int_value(const std::string &name, const std::string &text) {
  std::optional<int> v = smdtools::to_int(text);
  if (!v)
    throw smdtools::usage_problem("bad value for " + name + ": expected an integer, got '" + text +
                                  "'");
  return *v;
}

// Index of `word` in `names`, or a usage error naming `what`.
template <size_t N>
int pick(const char *const (&names)[N], const std::string &word, const char *what) {
  for (size_t k = 0; k < N; ++k)
    if (word == names[k]) return static_cast<int>(k);
  throw smdtools::usage_problem(std::string("unknown ") + what + " '" + word + "'");
}

const char *const kColls[] = {"allreduce", "allgather", "reduce_scatter",
                              "broadcast", "reduce",    "alltoall"};
constexpr Coll kCollOf[] = {Coll::kAllreduce, Coll::kAllgather, Coll::kReduceScatter,
                            Coll::kBroadcast, Coll::kReduce,    Coll::kAlltoall};

}  // namespace

Options parse_options(int argc, char **argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) usage_error("no collective given");
  CLI::App app("smd-bench", "smd-bench");
  app.set_help_flag();
  bool have_coll = false;
  int others = 0;  // arguments besides --tune FILE
  auto value = [&](const char *name, std::function<void(const std::string &)> set) {
    smdtools::add_value_option(app, name, [&others, set = std::move(set)](const std::string &v) {
      ++others;
      set(v);
    });
  };
  auto flag = [&](const char *name, bool *target) {
    smdtools::add_plain_flag(app, name, [&others, target] {
      ++others;
      *target = true;
    });
  };
  auto size = [](const char *name, size_t *target) {
    return [name, target](const std::string &v) {
      try {
        *target = parse_size(v);
      } catch (const std::invalid_argument &e) {
        throw smdtools::usage_problem(std::string("bad value for ") + name + ": " + e.what());
      }
    };
  };
  auto integer = [](const char *name, int *target) {
    return [name, target](const std::string &v) { *target = int_value(name, v); };
  };
  auto on_off = [](const char *name, bool *target) {
    return [name, target](const std::string &v) { *target = int_value(name, v) != 0; };
  };
  value("-b", size("-b", &o.min_bytes));
  value("-e", size("-e", &o.max_bytes));
  value("-f", [&](const std::string &v) {
    std::optional<double> f = smdtools::to_number(v);
    if (!f) throw smdtools::usage_problem("bad value for -f: expected a number, got '" + v + "'");
    o.factor = *f;
  });
  value("-n", integer("-n", &o.iters));
  value("-w", integer("-w", &o.warmup));
  value("-r", integer("-r", &o.root));
  value("-c", on_off("-c", &o.check));
  value("-i", on_off("-i", &o.inplace));
  value("-m", on_off("-m", &o.shared_mem));
  value("-d", [&](const std::string &v) {
    o.dtype = static_cast<smd_datatype_t>(pick(kDtypes, v, "datatype"));
    o.dtype_name = v;
  });
  value("-o", [&](const std::string &v) {
    o.op = static_cast<smd_op_t>(pick(kOps, v, "op"));
    o.op_name = v;
  });
  value("--tensors", integer("--tensors", &o.tensors));
  value("--layers", integer("--layers", &o.layers));
  value("--model", [&](const std::string &v) { o.model = v; });
  flag("--json", &o.json);
  flag("--rss", &o.rss);
  flag("--grouped", &o.grouped);
  flag("--single", &o.single);
  smdtools::add_plain_flag(app, "-h,--help", [] { throw HelpAsked{}; });
  smdtools::add_value_option(app, "--tune", [&](const std::string &v) { o.tune_file = v; });
  app.add_option_function<std::string>("collective", [&](const std::string &v) {
    int k = pick(kColls, v, "collective");
    o.coll = kCollOf[k];
    o.coll_name = kColls[k];
    have_coll = true;
    ++others;
  });
  try {
    smdtools::parse_args(app, args);
  } catch (const HelpAsked &) {
    fputs(kUsage, stdout);
    exit(0);
  } catch (const CLI::ExtrasError &) {
    usage_error("unknown option '" + smdtools::remaining_args(app).front() + "'");
  } catch (const CLI::ParseError &e) {
    usage_error(smdtools::describe_cli_error(
        app, e, args, [](const std::string &name) { return name + " needs a value"; }));
  }
  if (!o.tune_file.empty()) {
    if (others > 0) usage_error("--tune takes one argument, the file to write");
    return o;
  }
  if (!have_coll) usage_error("no collective given");
  if (o.factor <= 1.0 && o.min_bytes != o.max_bytes) usage_error("-f must be greater than 1");
  if (o.min_bytes > o.max_bytes) usage_error("-b is larger than -e");
  if (o.iters < 1 || o.warmup < 0) usage_error("-n must be >= 1 and -w >= 0");
  if (o.tensors < 0 || o.layers < 0) usage_error("--tensors and --layers must be >= 0");
  if (o.many_tensors() && o.coll != Coll::kAllreduce)
    usage_error("--tensors and --model need allreduce");
  if (o.grouped && o.single) usage_error("--grouped and --single exclude each other");
  return o;
}

}  // namespace smdbench
