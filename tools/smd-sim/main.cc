// smd-sim: what smd's engine would do on a cluster that is not here. For
// each collective and size, the algorithm the registry chooses and the
// time its cost model predicts, on a communicator of N nodes described in
// a JSON file; for data-parallel training steps, the step time and the
// scaling efficiency over the description's node counts; and how each
// world size stands against the tag and rank limits. docs/SCALE.md
// (Simulator) says what the prediction is and is not.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster.h"
#include "dp_step.h"
#include "engine_adapter.h"
#include "replay.h"
#include "schedule_run.h"

using namespace smdsim;

namespace {

const char kUsage[] =
    "usage: smd-sim COMMAND --cluster FILE [options]\n"
    "\n"
    "Predicts smd's automatic algorithm choice and its time on a described\n"
    "cluster, with the engine's own registry and cost model.\n"
    "\n"
    "commands:\n"
    "  collectives  per node count, collective and size: the chosen\n"
    "               algorithm and its predicted time\n"
    "  step         per workload and node count: the data-parallel step time\n"
    "               and the scaling efficiency (against 1 node and against\n"
    "               compute alone)\n"
    "  limits       per node count: ranks, the tag's step and sequence bits,\n"
    "               the tag bits a transport must match\n"
    "  tuning       the cost model as SMD_TUNING_FILE text (give it to a real\n"
    "               run to make it choose with the same parameters)\n"
    "  replay-one   one row of collectives --replay (what --replay starts\n"
    "               once per row): prints algorithm,replay_us,messages,\n"
    "               inter_node_bytes\n"
    "\n"
    "options:\n"
    "  --cluster FILE        JSON cluster description (docs/SCALE.md, Simulator)\n"
    "  --nodes N[,N...]      node counts (default: the description's \"nodes\")\n"
    "  --ranks-per-node N    instead of the description's (1: what a hierarchical\n"
    "                        algorithm's rail, one rank per node, chooses)\n"
    "  --sizes B[,B...]      bytes per call, K/M/G suffixes (powers of 2); for\n"
    "                        allgather and reduce_scatter one rank's block\n"
    "                        (default 8,1K,64K,1M,16M,256M)\n"
    "  --collectives C[,C...] (default allreduce,allgather,reduce_scatter,\n"
    "                        broadcast,reduce,alltoall,barrier)\n"
    "  --element-bytes N     1, 2, 4 or 8 (default 4)\n"
    "  --all                 collectives: a row for every algorithm that applies\n"
    "                        (as SMD_ALGO would force it), the choice marked\n"
    "  --replay              collectives: also run the chosen algorithm for real\n"
    "                        (rank threads, inproc transport) and time the\n"
    "                        messages it sent over the described links\n"
    "                        (replay_us); worlds of up to 512 ranks\n"
    "  --algorithm NAME      with --replay: run NAME (as SMD_ALGO forces it)\n"
    "  --format csv|json     (default csv)\n"
    "  -h, --help\n";

struct Options {
  std::string command, cluster, format = "csv";
  std::vector<int> nodes;
  std::vector<double> sizes{8, 1024, 65536, 1 << 20, 16 << 20, 256 << 20};
  std::vector<std::string> collectives;
  int element_bytes = 4;
  int ranks_per_node = 0;  // 0: the description's
  bool all = false;
  bool replay = false;
  std::string algorithm;  // --replay's forced algorithm
};

// Worlds beyond this are the cost model's alone: a replay runs every rank
// as a thread of this process.
constexpr int kMaxReplayRanks = 512;

struct UsageError {
  std::string message;
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

double parse_bytes(const std::string &s) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string unit = end ? end : "";
  double scale = unit.empty()  ? 1
                 : unit == "K" ? 1024.0
                 : unit == "M" ? 1048576.0
                 : unit == "G" ? 1073741824.0
                               : -1;
  if (end == s.c_str() || scale < 0 || !(v >= 0) || v * scale > 1e15)
    throw UsageError{"bad size '" + s + "' (bytes, with an optional K, M or G)"};
  return v * scale;
}

int parse_int(const std::string &s, int lo, int hi, const char *what) {
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < lo || v > hi)
    throw UsageError{std::string("bad ") + what + " '" + s + "'"};
  return int(v);
}

Options parse_options(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{a + " needs a value"};
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      o.command = "help";
      return o;
    } else if (a == "--cluster") {
      o.cluster = value();
    } else if (a == "--nodes") {
      o.nodes.clear();
      for (const std::string &n : split(value()))
        o.nodes.push_back(parse_int(n, 1, 65536, "node count"));
    } else if (a == "--all") {
      o.all = true;
    } else if (a == "--replay") {
      o.replay = true;
    } else if (a == "--algorithm") {
      o.algorithm = value();
    } else if (a == "--ranks-per-node") {
      o.ranks_per_node = parse_int(value(), 1, 1024, "ranks per node");
    } else if (a == "--sizes") {
      o.sizes.clear();
      for (const std::string &s : split(value())) o.sizes.push_back(parse_bytes(s));
    } else if (a == "--collectives") {
      o.collectives = split(value());
    } else if (a == "--element-bytes") {
      o.element_bytes = parse_int(value(), 1, 8, "element size");
    } else if (a == "--format") {
      o.format = value();
      if (o.format != "csv" && o.format != "json") throw UsageError{"--format is csv or json"};
    } else if (!a.empty() && a[0] != '-' && o.command.empty()) {
      o.command = a;
    } else {
      throw UsageError{"unknown argument '" + a + "'"};
    }
  }
  if (o.command.empty()) throw UsageError{"no command"};
  if (o.command != "collectives" && o.command != "step" && o.command != "limits" &&
      o.command != "tuning" && o.command != "replay-one")
    throw UsageError{"unknown command '" + o.command + "'"};
  if (o.cluster.empty()) throw UsageError{"--cluster FILE is required"};
  if ((o.replay || !o.algorithm.empty()) && o.command != "collectives" && o.command != "replay-one")
    throw UsageError{"--replay and --algorithm go with collectives"};
  if (!o.algorithm.empty() && !o.replay && o.command != "replay-one")
    throw UsageError{"--algorithm needs --replay"};
  if (o.replay && o.all) throw UsageError{"--replay replays the chosen algorithm: no --all"};
  if (o.collectives.empty())
    o.collectives = {"allreduce", "allgather", "reduce_scatter", "broadcast",
                     "reduce",    "alltoall",  "barrier"};
  return o;
}

// Rows of named columns, written as CSV or as a JSON array of objects.
class Table {
 public:
  explicit Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  void add(std::vector<nlohmann::json> row) { rows_.push_back(std::move(row)); }
  void write(const std::string &format) const {
    if (format == "json") {
      nlohmann::json out = nlohmann::json::array();
      for (const auto &row : rows_) {
        nlohmann::json o;
        for (size_t i = 0; i < columns_.size(); ++i) o[columns_[i]] = row[i];
        out.push_back(o);
      }
      std::printf("%s\n", out.dump(1).c_str());
      return;
    }
    for (size_t i = 0; i < columns_.size(); ++i)
      std::printf("%s%s", i ? "," : "", columns_[i].c_str());
    std::printf("\n");
    for (const auto &row : rows_) {
      for (size_t i = 0; i < row.size(); ++i) {
        std::string cell = row[i].is_string() ? row[i].get<std::string>() : row[i].dump();
        std::printf("%s%s", i ? "," : "", cell.c_str());
      }
      std::printf("\n");
    }
  }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<nlohmann::json>> rows_;
};

// v to `decimals` places, as the double nearest that decimal (which JSON
// and CSV then print without a tail of binary digits).
double rounded(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

// The path of this executable, to start it again (replay_in_child).
std::string self_path;

std::string shell_quoted(const std::string &s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

struct ReplayRow {
  std::string algorithm;
  double time_us = 0;
  long messages = 0;
  double inter_node_bytes = 0;
};

// One replay in a process of its own (schedule_run.h: smd's settings are
// read once per process): smd-sim replay-one, which prints one line.
ReplayRow replay_in_child(const Options &o, int nodes, int ranks_per_node, const std::string &coll,
                          double bytes) {
  if (nodes * ranks_per_node > kMaxReplayRanks)
    throw std::runtime_error("--replay runs every rank as a thread: up to " +
                             std::to_string(kMaxReplayRanks) + " ranks (" +
                             std::to_string(nodes * ranks_per_node) +
                             " asked); beyond that the prediction is the cost model's "
                             "(predicted_us, without --replay)");
  std::string cmd = shell_quoted(self_path) + " replay-one --cluster " + shell_quoted(o.cluster) +
                    " --nodes " + std::to_string(nodes) + " --ranks-per-node " +
                    std::to_string(ranks_per_node) + " --collectives " + shell_quoted(coll) +
                    " --sizes " + std::to_string((long long)bytes) + " --element-bytes " +
                    std::to_string(o.element_bytes);
  if (!o.algorithm.empty()) cmd += " --algorithm " + shell_quoted(o.algorithm);
  FILE *f = popen(cmd.c_str(), "r");
  if (f == nullptr) throw std::runtime_error("cannot start " + self_path);
  char line[512] = {0};
  bool got = std::fgets(line, sizeof line, f) != nullptr;
  int status = pclose(f);
  ReplayRow r;
  char algo[128] = {0};
  if (!got || status != 0 ||
      std::sscanf(line, "%127[^,],%lf,%ld,%lf", algo, &r.time_us, &r.messages,
                  &r.inter_node_bytes) != 4)
    throw std::runtime_error("the replay of " + coll + " of " + std::to_string((long long)bytes) +
                             " bytes on " + std::to_string(nodes) + " nodes failed");
  r.algorithm = algo;
  return r;
}

// replay-one: records one call's schedule and replays it; prints
// "algorithm,replay_us,messages,inter_node_bytes".
int run_replay_one(const Options &o, const Cluster &c, const Engine &engine) {
  if (o.nodes.size() != 1 || o.collectives.size() != 1 || o.sizes.size() != 1)
    throw UsageError{"replay-one takes one node count, collective and size"};
  ScheduleCall call;
  call.collective = o.collectives[0];
  call.bytes = o.sizes[0];
  call.element_bytes = o.element_bytes;
  call.ranks_per_node = c.ranks_per_node;
  call.ranks = o.nodes[0] * c.ranks_per_node;
  call.tuning_text = engine.tuning_text();
  call.algorithm = o.algorithm;
  ScheduleTrace trace = record_schedule(call);
  ReplayNetwork net;
  net.ranks_per_node = c.ranks_per_node;
  net.rails = c.rails;
  net.intra = c.intra_node;
  net.inter = c.inter_rail;
  ReplayResult r = replay(trace.ranks, net);
  std::printf("%s,%.4f,%ld,%.0f\n", trace.algorithm.c_str(), r.time_us, r.messages,
              r.inter_node_bytes);
  return 0;
}

int run_collectives(const Options &o, const Cluster &c, const Engine &engine) {
  std::vector<std::string> columns{"nodes", "ranks",     "collective",
                                   "bytes", "algorithm", "predicted_us"};
  if (o.all) columns.push_back("chosen");
  if (o.replay) {
    columns.insert(columns.end(),
                   {"replayed_algorithm", "replay_us", "messages", "inter_node_bytes"});
  }
  Table t(columns);
  for (int n : o.nodes)
    for (const std::string &coll : o.collectives)
      for (double bytes : o.sizes) {
        const double count = bytes / o.element_bytes;
        EngineChoice ch;
        std::string err;
        if (!engine.choose(coll, count, o.element_bytes, c.shape(n), &ch, &err))
          throw std::runtime_error(err);
        std::vector<EngineChoice> rows{ch};
        if ((o.all || !o.algorithm.empty()) &&
            !engine.candidates(coll, count, o.element_bytes, c.shape(n), &rows, &err))
          throw std::runtime_error(err);
        if (!o.algorithm.empty()) {
          // The forced algorithm's prediction beside its replay.
          auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const EngineChoice &r) { return r.algorithm == o.algorithm; });
          if (it == rows.end())
            throw std::runtime_error(o.algorithm + " does not apply to " + coll + " of " +
                                     std::to_string((long long)bytes) + " bytes on " +
                                     std::to_string(n) + " nodes");
          rows = {*it};
        }
        for (const EngineChoice &r : rows) {
          std::vector<nlohmann::json> row{n,           n * c.ranks_per_node,
                                          coll,        (long long)bytes,
                                          r.algorithm, rounded(r.predicted_us, 2)};
          if (o.all) row.push_back(r.algorithm == ch.algorithm);
          if (o.replay) {
            ReplayRow rr = replay_in_child(o, n, c.ranks_per_node, coll, bytes);
            row.insert(row.end(), {rr.algorithm, rounded(rr.time_us, 2), rr.messages,
                                   (long long)rr.inter_node_bytes});
          }
          t.add(row);
        }
      }
  t.write(o.format);
  return 0;
}

int run_step(const Options &o, const Cluster &c, const Engine &engine) {
  if (c.workloads.empty()) throw std::runtime_error("the cluster description has no workloads");
  Table t({"workload", "mode", "nodes", "ranks", "step_ms", "compute_ms", "communication_ms",
           "exposed_ms", "efficiency_vs_1_node", "efficiency_vs_compute", "algorithms"});
  for (const Workload &w : c.workloads) {
    auto step_on = [&](int n) {
      EngineShape shape = c.shape(n);
      CollectiveTime time_of = [&](const std::string &coll, double count, std::string *algo) {
        EngineChoice ch;
        std::string err;
        if (!engine.choose(coll, count, w.element_bytes, shape, &ch, &err))
          throw std::runtime_error(err);
        *algo = ch.algorithm;
        return ch.predicted_us;
      };
      return simulate_step(w, n * c.ranks_per_node, time_of);
    };
    const double one_node_ms = step_on(1).step_ms;
    for (int n : o.nodes) {
      StepTime s = step_on(n);
      t.add({w.name, w.mode, n, n * c.ranks_per_node, rounded(s.step_ms, 2),
             rounded(s.compute_ms, 2), rounded(s.communication_ms, 2), rounded(s.exposed_ms, 2),
             rounded(one_node_ms / s.step_ms, 3), rounded(s.compute_ms / s.step_ms, 3),
             s.algorithms});
    }
  }
  t.write(o.format);
  return 0;
}

int run_limits(const Options &o, const Cluster &c) {
  Table t({"nodes", "ranks", "within_rank_limit", "step_bits", "sequence_bits",
           "efa_tag_bits_needed", "ucx_within_world_limit"});
  for (int n : o.nodes) {
    int ranks = n * c.ranks_per_node;
    TagBudget b = engine_tag_budget(ranks);
    int world_bits = 0;
    while ((1LL << world_bits) < ranks) ++world_bits;
    // docs/SCALE.md, Limits: the EFA plugin without directed receives
    // matches the core's tag bits plus the sender's rank; UCX carries the
    // sender above the core's bits, up to 2^20 ranks.
    t.add({n, ranks, ranks <= b.max_ranks, b.step_bits, b.sequence_bits,
           int(b.transport_tag_bits) + world_bits, ranks <= (1 << 20)});
  }
  t.write(o.format);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    Options o = parse_options(argc, argv);
    {
      char buf[4096];
      ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
      self_path = len > 0 ? std::string(buf, size_t(len)) : argv[0];
    }
    if (o.command == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    Cluster c = read_cluster(o.cluster);
    if (o.nodes.empty()) o.nodes = c.nodes;
    for (int n : o.nodes)
      if (double(n) * (o.ranks_per_node ? o.ranks_per_node : c.ranks_per_node) > 65536)
        throw std::runtime_error("more than 65,536 ranks at " + std::to_string(n) + " nodes");
    // The links of the described nodes, whose ranks share the rails even
    // when --ranks-per-node asks for one rank per node (a rail).
    Engine engine(c.engine_links());
    if (o.ranks_per_node) c.ranks_per_node = o.ranks_per_node;
    if (o.command == "tuning") {
      std::fputs(engine.tuning_text().c_str(), stdout);
      return 0;
    }
    if (o.command == "collectives") return run_collectives(o, c, engine);
    if (o.command == "replay-one") return run_replay_one(o, c, engine);
    if (o.command == "step") return run_step(o, c, engine);
    return run_limits(o, c);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "smd-sim: %s\nrun 'smd-sim --help' for usage\n", e.message.c_str());
    return 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "smd-sim: %s\n", e.what());
    return 1;
  }
}
