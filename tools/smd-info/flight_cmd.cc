// smd-info flight DIR: reads every rank's flight recorder dump
// (smd-flight.*.json, written under SMD_DUMP_DIR), and for each
// communicator prints how far each rank got, names the laggard (the first
// rank whose progress is behind the others') and the calls ranks
// disagreed on (same sequence number, different kind, datatype, op, count
// or root).
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "json_value.h"
#include "text_out.h"

namespace smdinfo {
namespace {

struct Call {
  int64_t seq = -1;
  std::string kind, datatype, op, algorithm, state, result;
  int64_t count = 0, root = 0;
  std::string signature() const {
    return kind + "(" + datatype + ", " + op + ", count " + std::to_string(count) + ", root " +
           std::to_string(root) + ")";
  }
};

struct Dump {
  std::string file, reason;
  int world_rank = 0, comm_rank = 0;
  std::vector<Call> calls;
  // Highest sequence number it entered (ran or finished) and finished.
  int64_t reached = -1, last_done = -1;
  const Call *find(int64_t seq) const {
    for (const Call &c : calls)
      if (c.seq == seq) return &c;
    return nullptr;
  }
};

struct CommDumps {
  int64_t id = 0, first_member = 0, size = 0;
  std::vector<Dump> dumps;  // by comm rank once sorted
};

std::vector<std::string> dump_files(const std::string &dir) {
  std::vector<std::string> files;
  DIR *d = opendir(dir.c_str());
  if (!d) throw JsonError{"cannot open directory " + dir};
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("smd-flight.", 0) == 0 && name.size() > 5 &&
        name.compare(name.size() - 5, 5, ".json") == 0)
      files.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

// Limits no real dump passes: a world or communicator of at most 2^24
// ranks, and at most SMD_FLIGHT_RECORDER's largest ring (2^20 entries).
constexpr int64_t kMaxRanks = int64_t(1) << 24;
constexpr size_t kMaxEntries = size_t(1) << 20;
// About 400 bytes an entry: a full ring's dump is well below this.
constexpr size_t kMaxDumpBytes = size_t(1) << 30;

// "" when the dump's numbers are ones smd writes; else the first that is
// not, so that a crafted file is refused instead of sizing the report.
std::string dump_problem(const Json &v) {
  auto outside = [&](const char *key, int64_t lo, int64_t hi) -> std::string {
    int64_t x = int_of(v, key, lo - 1);
    if (x >= lo && x < hi) return "";
    const Json *raw = member(v, key);
    std::string shown = raw ? raw->dump(-1, ' ', false, Json::error_handler_t::replace) : "missing";
    return std::string(key) + " " + shown + " is not in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + ")";
  };
  std::string p;
  if (!(p = outside("world_size", 1, kMaxRanks + 1)).empty()) return p;
  if (!(p = outside("world_rank", 0, int_of(v, "world_size"))).empty()) return p;
  if (!(p = outside("comm_size", 1, kMaxRanks + 1)).empty()) return p;
  if (!(p = outside("comm_rank", 0, int_of(v, "comm_size"))).empty()) return p;
  if (!(p = outside("comm", 0, INT64_MAX)).empty()) return p;
  if (!(p = outside("comm_first_member", 0, int_of(v, "world_size"))).empty()) return p;
  const Json *entries = member(v, "entries");
  if (!entries || !entries->is_array()) return "entries is not a list";
  if (entries->size() > kMaxEntries)
    return "entries has " + std::to_string(entries->size()) + " calls, more than a ring holds (" +
           std::to_string(kMaxEntries) + ")";
  for (const Json &e : *entries) {
    if (!e.is_object()) return "an entry is not an object";
    if (int_of(e, "seq", -1) < 0 || int_of(e, "count", -1) < 0)
      return "an entry has a negative or missing seq or count";
    int64_t root = int_of(e, "root", -1);
    if (root < 0 || root >= int_of(v, "comm_size"))
      return "entry with seq " + std::to_string(int_of(e, "seq")) + " has root " +
             std::to_string(root) + ", not a rank of the communicator";
  }
  return "";
}

Dump read_dump(const std::string &path, const Json &v) {
  Dump d;
  d.file = path;
  d.reason = string_of(v, "reason");
  d.world_rank = static_cast<int>(int_of(v, "world_rank"));
  d.comm_rank = static_cast<int>(int_of(v, "comm_rank"));
  if (const Json *entries = member(v, "entries"))
    for (const Json &e : *entries) {
      Call c;
      c.seq = int_of(e, "seq", -1);
      c.kind = string_of(e, "kind");
      c.datatype = string_of(e, "datatype");
      c.op = string_of(e, "op");
      c.algorithm = string_of(e, "algorithm");
      c.state = string_of(e, "state");
      c.result = string_of(e, "result");
      c.count = int_of(e, "count");
      c.root = int_of(e, "root");
      if (c.state != "queued") d.reached = std::max(d.reached, c.seq);
      if (c.state == "done") d.last_done = std::max(d.last_done, c.seq);
      d.calls.push_back(std::move(c));
    }
  return d;
}

std::string call_name(const Dump &d, int64_t seq) {
  if (seq < 0) return "none";
  const Call *c = d.find(seq);
  return "#" + std::to_string(seq) + (c ? " " + c->kind : "");
}

void report(const CommDumps &cd) {
  printf("comm %lld (first member world rank %lld, %lld ranks): dumps from %zu\n",
         static_cast<long long>(cd.id), static_cast<long long>(cd.first_member),
         static_cast<long long>(cd.size), cd.dumps.size());
  std::vector<std::vector<std::string>> table = {
      {"  world rank", "comm rank", "reason", "last done", "reached", "state"}};
  for (const Dump &d : cd.dumps) {
    const Call *at = d.find(d.reached);
    table.push_back({"  " + std::to_string(d.world_rank), std::to_string(d.comm_rank), d.reason,
                     call_name(d, d.last_done), call_name(d, d.reached),
                     at ? at->state + (at->result != "SMD_SUCCESS" ? " " + at->result : "") : "-"});
  }
  for (const std::string &line : align_columns(table)) puts(line.c_str());

  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(cd.size, 0)), false);
  for (const Dump &d : cd.dumps)
    if (d.comm_rank >= 0 && d.comm_rank < cd.size) seen[static_cast<size_t>(d.comm_rank)] = true;
  std::vector<int> missing;
  for (size_t r = 0; r < seen.size(); ++r)
    if (!seen[r]) missing.push_back(static_cast<int>(r));
  if (!missing.empty())
    printf(
        "  no dump from comm ranks %s (killed with SIGKILL, or never failed without SMD_DUMP_DIR "
        "set)\n",
        plain_list(missing).c_str());

  // The laggard: the first rank (in comm rank order) that entered fewer
  // calls than the furthest rank; on a tie in entered calls, finished fewer.
  const Dump *ahead = nullptr;
  for (const Dump &d : cd.dumps)
    if (!ahead || d.reached > ahead->reached ||
        (d.reached == ahead->reached && d.last_done > ahead->last_done))
      ahead = &d;
  const Dump *laggard = nullptr;
  for (const Dump &d : cd.dumps)
    if (d.reached < ahead->reached ||
        (d.reached == ahead->reached && d.last_done < ahead->last_done)) {
      laggard = &d;
      break;
    }
  if (laggard)
    printf(
        "  laggard: world rank %d (comm rank %d): last completed %s, entered %s, while world rank "
        "%d "
        "entered %s\n",
        laggard->world_rank, laggard->comm_rank, call_name(*laggard, laggard->last_done).c_str(),
        call_name(*laggard, laggard->reached).c_str(), ahead->world_rank,
        call_name(*ahead, ahead->reached).c_str());
  else if (cd.dumps.size() > 1)
    printf("  laggard: none among the dumps (every rank reached %s)\n",
           call_name(*ahead, ahead->reached).c_str());

  // Calls the ranks disagree on, by sequence number, each pair named once.
  std::map<int64_t, std::vector<std::pair<const Dump *, const Call *>>> by_seq;
  for (const Dump &d : cd.dumps)
    for (const Call &c : d.calls) by_seq[c.seq].push_back({&d, &c});
  int mismatches = 0;
  for (const auto &[seq, calls] : by_seq) {
    const auto &[d0, c0] = calls.front();
    for (const auto &[d, c] : calls)
      if (c->signature() != c0->signature()) {
        printf("  mismatch at call #%lld: world rank %d %s vs world rank %d %s\n",
               static_cast<long long>(seq), d0->world_rank, c0->signature().c_str(), d->world_rank,
               c->signature().c_str());
        ++mismatches;
      }
  }
  if (!mismatches && cd.dumps.size() > 1) puts("  mismatched calls: none");
}

}  // namespace

int run_flight(const Options &o) {
  std::map<std::pair<int64_t, int64_t>, CommDumps> comms;
  int unreadable = 0;
  for (const std::string &path : dump_files(o.paths[0])) {
    try {
      Json v = read_json_file(path, kMaxDumpBytes);
      if (!member(v, "smd_flight_recorder")) continue;
      std::string problem = dump_problem(v);
      if (!problem.empty())
        throw JsonError{path + ": not a flight recorder dump smd wrote: " + problem};
      auto key = std::make_pair(int_of(v, "comm"), int_of(v, "comm_first_member"));
      CommDumps &cd = comms[key];
      if (!cd.dumps.empty() && cd.size != int_of(v, "comm_size"))
        throw JsonError{path + ": comm_size " + std::to_string(int_of(v, "comm_size")) +
                        " differs from the " + std::to_string(cd.size) + " of " + cd.dumps[0].file +
                        " (same communicator)"};
      cd.id = key.first;
      cd.first_member = key.second;
      cd.size = int_of(v, "comm_size");
      cd.dumps.push_back(read_dump(path, v));
    } catch (const JsonError &e) {
      fprintf(stderr, "smd-info: %s\n", e.message.c_str());
      ++unreadable;
    }
  }
  if (comms.empty()) {
    fprintf(stderr, "smd-info: no flight recorder dumps (smd-flight.*.json) in %s\n",
            o.paths[0].c_str());
    return 1;
  }
  for (auto &[key, cd] : comms) {
    std::sort(cd.dumps.begin(), cd.dumps.end(),
              [](const Dump &a, const Dump &b) { return a.comm_rank < b.comm_rank; });
    report(cd);
  }
  return unreadable ? 1 : 0;
}

}  // namespace smdinfo
