// gloo_bench: the Gloo edition of smd-bench, for bench/compare.sh.
//
// Ranks are separate processes (launched by smdrun, mpirun or anything that
// sets RANK/WORLD_SIZE, SMD_RANK/SMD_WORLD_SIZE or OMPI_COMM_WORLD_RANK/SIZE)
// that rendezvous through a gloo FileStore in a directory (--store DIR, or
// $TMPDIR/gloo_bench.$SMD_JOB_TOKEN under smdrun) and connect a full mesh of
// gloo's TCP transport on 127.0.0.1.
//
//   gloo_bench COLLECTIVE [-b 8] [-e 64M] [-f 2] [-d float32] [-o sum] [-n 20] [-w 5]
//              [-c 1] [-a ALGO] [--store DIR] [--json]
//
// Same sizes, busbw factors, timing rule (max over ranks of the mean
// per-iteration time, after -w warm-up iterations and a barrier) and JSON keys
// as smd-bench (among them "checked": whether the untimed first call of -c 1
// was checked, and "in_place"), plus "algo" (which Gloo algorithm ran).
//
// Algorithms (-a), all from the installed (2022) libgloo; the first of each is the default:
//   allreduce:      halving_doubling | ring_legacy | ring_chunked | bcube_legacy
//                     (the older algorithm classes, in place on the output buffer)
//                   ring | bcube (gloo::allreduce, the current API, out of place)
//   allgather:      ring_legacy (AllgatherRing) | ring (gloo::allgather)
//   reduce_scatter: halving_doubling (ReduceScatterHalvingDoubling: the only
//                     reduce-scatter in this snapshot, an older class, in place)
//   broadcast:      one_to_all_legacy (BroadcastOneToAll) | one_to_all (gloo::broadcast)
// The current API was 10-1000x slower over TCP here (60 ms for a 64 KiB
// allreduce, seconds for 8 MiB broadcasts), so the older classes are the
// defaults; halving-doubling was the fastest allreduce from 1 MiB up.
// The in-place classes get out-of-place semantics by copying the input into
// the output (work) buffer first, inside the timed call; except broadcast,
// which runs in place on the send buffer (as MPI_Bcast and compare.sh's
// smd-bench -i 1: the root copies nothing), so every rank keeps one buffer.
// Known Gloo issue: ReduceScatterHalvingDoubling copies a rank's own reduced
// block over the region it is still sending (rank != 0), without waiting for
// that send; under load the peer can receive overwritten data (seen at
// 256 MiB: the check counts the wrong elements, the report marks the run E).
#include <gloo/allgather.h>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

enum Coll { kAllreduce, kAllgather, kReduceScatter, kBroadcast };
const char *kCollName[] = {"allreduce", "allgather", "reduce_scatter", "broadcast"};

// smd-bench's test values for op sum (tools/common/values.h): small integers, exact in float32.
double value(int rank, size_t i) {
  uint64_t h = (static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull) ^ (i * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return static_cast<int>(h % 5) - 2;
}
double expected(int p, size_t i) {
  double acc = 0;
  for (int r = 0; r < p; ++r) acc += value(r, i);
  return acc;
}

[[noreturn]] void usage(const std::string &msg) {
  fprintf(
      stderr,
      "gloo_bench: %s\nusage: gloo_bench allreduce|allgather|reduce_scatter|broadcast [-b MIN] [-e "
      "MAX] "
      "[-f FACTOR] [-d float32] [-o sum] [-n ITERS] [-w WARMUP] [-c 0|1] [-a ALGO] [--store DIR] "
      "[--json] [--rss]\n  allreduce ALGO: ring (default) | bcube | ring_legacy | ring_chunked | "
      "halving_doubling | bcube_legacy\n",
      msg.c_str());
  exit(2);
}

size_t parse_size(const std::string &s) {
  char *end = nullptr;
  double v = strtod(s.c_str(), &end);
  if (*end == 'K' || *end == 'k') v *= 1024, ++end;
  else if (*end == 'M' || *end == 'm') v *= 1024 * 1024, ++end;
  else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024, ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end || v < 0) usage("bad size '" + s + "'");
  return static_cast<size_t>(v);
}

int env_int(std::initializer_list<const char *> names, int dflt) {
  for (const char *n : names)
    if (const char *v = getenv(n)) return atoi(v);
  return dflt;
}

// A "Vm...:   N kB" line of /proc/self/status, in KiB (0 if unreadable).
long long proc_status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long long v = 0;
  size_t n = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, n) && line[n] == ':') {
      v = atoll(line + n + 1);
      break;
    }
  fclose(f);
  return v;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Options {
  Coll coll = kAllreduce;
  size_t min_bytes = 8, max_bytes = 64u << 20;
  double factor = 2.0;
  int iters = 20, warmup = 5;
  bool check = true, json = false, rss = false;
  std::string algo, store;
};

Options parse(int argc, char **argv) {
  Options o;
  if (argc < 2) usage("no collective given");
  bool found = false;
  for (int c = 0; c < 4; ++c)
    if (!strcmp(argv[1], kCollName[c])) o.coll = static_cast<Coll>(c), found = true;
  if (!found) usage(std::string("unknown collective '") + argv[1] + "'");
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
      continue;
    }
    if (a == "--rss") {
      o.rss = true;
      continue;
    }
    if (i + 1 >= argc) usage(a + " needs a value");
    std::string v = argv[++i];
    if (a == "-b") o.min_bytes = parse_size(v);
    else if (a == "-e") o.max_bytes = parse_size(v);
    else if (a == "-f") o.factor = atof(v.c_str());
    else if (a == "-n") o.iters = atoi(v.c_str());
    else if (a == "-w") o.warmup = atoi(v.c_str());
    else if (a == "-c") o.check = atoi(v.c_str()) != 0;
    else if (a == "-a") o.algo = v;
    else if (a == "--store") o.store = v;
    else if (a == "-d") {
      if (v != "float32") usage("only float32 is supported");
    } else if (a == "-o") {
      if (v != "sum") usage("only op sum is supported");
    } else usage("unknown option '" + a + "'");
  }
  const std::vector<std::vector<std::string>> algos = {
      {"halving_doubling", "ring", "bcube", "ring_legacy", "ring_chunked", "bcube_legacy"},
      {"ring_legacy", "ring"},
      {"halving_doubling"},
      {"one_to_all_legacy", "one_to_all"}};
  const auto &mine = algos[o.coll];
  if (o.algo.empty()) o.algo = mine[0];  // the default: the first
  if (std::find(mine.begin(), mine.end(), o.algo) == mine.end())
    usage("algorithm '" + o.algo + "' is not available for " + kCollName[o.coll]);
  if (o.factor <= 1.0 && o.min_bytes != o.max_bytes) usage("-f must be greater than 1");
  if (o.min_bytes > o.max_bytes) usage("-b is larger than -e");
  if (o.iters < 1 || o.warmup < 0) usage("-n must be >= 1 and -w >= 0");
  return o;
}

// One size: buffers, the prepared operation, and a run() that performs it once.
struct Point {
  std::vector<float> send, recv;
  std::function<void()> run;
  std::unique_ptr<gloo::Algorithm> legacy;  // the older algorithm classes
  std::unique_ptr<gloo::AllreduceOptions> ar;
  std::unique_ptr<gloo::AllgatherOptions> ag;
  std::unique_ptr<gloo::BroadcastOptions> bc;
};

void prepare(Point &pt, const Options &o, const std::shared_ptr<gloo::Context> &ctx, size_t count,
             uint32_t tag) {
  const int p = ctx->size;
  float *send = pt.send.data(), *recv = pt.recv.data();
  const size_t sbytes = pt.send.size() * sizeof(float);
  auto timeout = std::chrono::milliseconds(300000);
  switch (o.coll) {
    case kAllreduce:
      if (o.algo == "ring" || o.algo == "bcube") {
        pt.ar = std::make_unique<gloo::AllreduceOptions>(ctx);
        pt.ar->setAlgorithm(o.algo == "ring" ? gloo::AllreduceOptions::Algorithm::RING
                                             : gloo::AllreduceOptions::Algorithm::BCUBE);
        pt.ar->setInput(send, count);
        pt.ar->setOutput(recv, count);
        pt.ar->setReduceFunction(
            static_cast<void (*)(void *, const void *, const void *, size_t)>(&gloo::sum<float>));
        pt.ar->setTag(tag);
        pt.ar->setTimeout(timeout);
        pt.run = [&pt] { gloo::allreduce(*pt.ar); };
      } else {
        std::vector<float *> ptrs{recv};
        int n = static_cast<int>(count);
        if (o.algo == "ring_legacy")
          pt.legacy = std::make_unique<gloo::AllreduceRing<float>>(ctx, ptrs, n);
        else if (o.algo == "ring_chunked")
          pt.legacy = std::make_unique<gloo::AllreduceRingChunked<float>>(ctx, ptrs, n);
        else if (o.algo == "halving_doubling")
          pt.legacy = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(ctx, ptrs, n);
        else pt.legacy = std::make_unique<gloo::AllreduceBcube<float>>(ctx, ptrs, n);
        pt.run = [&pt, send, recv, sbytes] {
          memcpy(recv, send, sbytes);
          pt.legacy->run();
        };
      }
      break;
    case kAllgather:
      if (o.algo == "ring_legacy") {
        std::vector<const float *> in{send};
        pt.legacy =
            std::make_unique<gloo::AllgatherRing<float>>(ctx, in, recv, static_cast<int>(count));
        pt.run = [&pt] { pt.legacy->run(); };
        break;
      }
      pt.ag = std::make_unique<gloo::AllgatherOptions>(ctx);
      pt.ag->setInput(send, count);
      pt.ag->setOutput(recv, count * p);
      pt.ag->setTag(tag);
      pt.ag->setTimeout(timeout);
      pt.run = [&pt] { gloo::allgather(*pt.ag); };
      break;
    case kBroadcast:
      // In place: the root's data is already in the one buffer every rank passes.
      if (o.algo == "one_to_all_legacy") {
        std::vector<float *> ptrs{send};
        pt.legacy = std::make_unique<gloo::BroadcastOneToAll<float>>(ctx, ptrs, count, 0);
        pt.run = [&pt] { pt.legacy->run(); };
        break;
      }
      pt.bc = std::make_unique<gloo::BroadcastOptions>(ctx);
      pt.bc->setOutput(send, count);
      pt.bc->setRoot(0);
      pt.bc->setTag(tag);
      pt.bc->setTimeout(timeout);
      pt.run = [&pt] { gloo::broadcast(*pt.bc); };
      break;
    case kReduceScatter: {
      // In place on a work buffer of the whole input; this rank's reduced block
      // lands at its start and is copied to the output (both timed, as above).
      pt.recv.assign(pt.send.size(), 0.0f);  // work buffer: the whole input
      recv = pt.recv.data();
      std::vector<float *> ptrs{recv};
      std::vector<int> recv_elems(p, static_cast<int>(count));
      pt.legacy = std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
          ctx, ptrs, static_cast<int>(count * p), recv_elems);
      pt.run = [&pt, send, recv, sbytes] {
        memcpy(recv, send, sbytes);
        pt.legacy->run();
      };
      break;
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  const int rank = env_int({"RANK", "SMD_RANK", "OMPI_COMM_WORLD_RANK"}, -1);
  const int p = env_int({"WORLD_SIZE", "SMD_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"}, -1);
  if (rank < 0 || p < 1 || rank >= p)
    usage("no rank/size in the environment (run under smdrun or mpirun)");
  std::string store = o.store;
  if (store.empty()) {
    const char *tok = getenv("SMD_JOB_TOKEN");
    if (!tok) usage("--store DIR is needed outside smdrun");
    const char *tmp = getenv("TMPDIR");
    store = std::string(tmp && *tmp ? tmp : "/tmp") + "/gloo_bench." + tok;
  }
  mkdir(store.c_str(), 0700);  // every rank tries; EEXIST is fine

  bool measured = false;  // every size done (and printed by rank 0)
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, p);
    ctx->setTimeout(std::chrono::milliseconds(300000));
    {
      gloo::rendezvous::FileStore fs(store);
      ctx->connectFullMesh(fs, dev);
    }
    std::shared_ptr<gloo::Context> base = ctx;
    gloo::BarrierAllToAll barrier(base);

    // max over ranks of a double, and sum of a count: small allreduces through gloo itself.
    auto allreduce_scalar = [&](double v, bool max, uint32_t tag) {
      double in = v, out = 0;
      gloo::AllreduceOptions opts(base);
      opts.setInput(&in, 1);
      opts.setOutput(&out, 1);
      using Fn = void (*)(void *, const void *, const void *, size_t);
      opts.setReduceFunction(max ? static_cast<Fn>(&gloo::max<double>)
                                 : static_cast<Fn>(&gloo::sum<double>));
      opts.setTag(tag);
      gloo::allreduce(opts);
      return out;
    };

    if (rank == 0 && !o.json) {
      printf(
          "# gloo_bench %s (%s)  ranks %d  dtype float32  op sum  iters %d  warmup %d  tcp "
          "127.0.0.1\n",
          kCollName[o.coll], o.algo.c_str(), p, o.iters, o.warmup);
      printf("# %12s %12s %9s %6s %12s %10s %10s %8s\n", "bytes", "count", "type", "op", "time_us",
             "algbw_GB/s", "busbw_GB/s", "errors");
    }
    uint32_t tag = 100;
    const long long rss_init_kib = o.rss ? proc_status_kib("VmRSS") : 0;
    size_t user_buffer_bytes = 0;  // send + receive buffers of the largest size
    const bool in_place = o.coll == kBroadcast;
    for (size_t bytes = o.min_bytes;;) {
      if (bytes > o.max_bytes) break;
      size_t total = bytes / sizeof(float), count = total, send_elems = total, recv_elems = total;
      double factor = 1.0;
      switch (o.coll) {
        case kAllreduce: factor = 2.0 * (p - 1) / p; break;
        case kAllgather:
          count = send_elems = total / p;
          recv_elems = count * p;
          factor = double(p - 1) / p;
          break;
        case kReduceScatter:
          count = recv_elems = total / p;
          send_elems = count * p;
          factor = double(p - 1) / p;
          break;
        case kBroadcast: break;
      }
      double time_us = 0;
      uint64_t errors = 0;
      if (count >
          0) {  // gloo refuses empty buffers; count 0 (8 B over 4 ranks) is reported as time 0
        Point pt;
        pt.send.assign(std::max<size_t>(send_elems, 1), 0.0f);
        // Broadcast runs in place on the send buffer: no second buffer to touch.
        pt.recv.assign(o.coll == kBroadcast ? 1 : std::max<size_t>(recv_elems, 1), 0.0f);
        if (o.check)
          for (size_t i = 0; i < send_elems; ++i) pt.send[i] = static_cast<float>(value(rank, i));
        prepare(pt, o, base, count, tag++);
        user_buffer_bytes =
            std::max(user_buffer_bytes, (send_elems + (in_place ? 0 : recv_elems)) * sizeof(float));
        const float *out = in_place ? pt.send.data() : pt.recv.data();
        if (o.check) {
          pt.run();
          switch (o.coll) {
            case kAllreduce:
              for (size_t i = 0; i < count; ++i) errors += out[i] != expected(p, i);
              break;
            case kReduceScatter:
              for (size_t i = 0; i < count; ++i) errors += out[i] != expected(p, rank * count + i);
              break;
            case kAllgather:
              for (int r = 0; r < p; ++r)
                for (size_t i = 0; i < count; ++i) errors += out[r * count + i] != value(r, i);
              break;
            case kBroadcast:
              for (size_t i = 0; i < count; ++i) errors += out[i] != value(0, i);
              break;
          }
        }
        for (int i = 0; i < o.warmup; ++i) pt.run();
        barrier.run();
        double t0 = now_s();
        for (int i = 0; i < o.iters; ++i) pt.run();
        double local_us = (now_s() - t0) * 1e6 / o.iters;
        time_us = allreduce_scalar(local_us, true, tag++);
        errors = static_cast<uint64_t>(allreduce_scalar(static_cast<double>(errors), false, tag++));
      }
      double algbw = time_us > 0 ? bytes / time_us / 1e3 : 0, busbw = algbw * factor;
      if (rank == 0) {
        if (o.json)
          printf(
              "{\"collective\": \"%s\", \"bytes\": %zu, \"count\": %zu, \"dtype\": \"float32\", "
              "\"op\": \"sum\", "
              "\"ranks\": %d, \"time_us\": %.3f, \"algbw_gbps\": %.4f, \"busbw_gbps\": %.4f, "
              "\"errors\": %llu, "
              "\"checked\": %d, \"in_place\": %d, \"algo\": \"%s\"}\n",
              kCollName[o.coll], bytes, count, p, time_us, algbw, busbw,
              static_cast<unsigned long long>(errors), o.check && count > 0 ? 1 : 0,
              in_place ? 1 : 0, o.algo.c_str());
        else
          printf("  %12zu %12zu %9s %6s %12.2f %10.3f %10.3f %8llu\n", bytes, count, "float32",
                 "sum", time_us, algbw, busbw, static_cast<unsigned long long>(errors));
        fflush(stdout);
      }
      if (bytes == o.max_bytes) break;
      size_t next = static_cast<size_t>(bytes * o.factor);
      bytes = std::max(next, bytes + 1);
    }
    measured = true;
    if (o.rss) {
      long long hwm = proc_status_kib("VmHWM");
      if (o.json)
        printf(
            "{\"rss\": \"%s\", \"rank\": %d, \"ranks\": %d, \"max_bytes\": %zu, \"rss_peak_kib\": "
            "%lld, "
            "\"rss_init_kib\": %lld, \"user_buffers_kib\": %zu}\n",
            kCollName[o.coll], rank, p, o.max_bytes, hwm, rss_init_kib, user_buffer_bytes / 1024);
      else
        printf("# rank %d: peak resident %lld KiB (after init %lld KiB), user buffers %zu KiB\n",
               rank, hwm, rss_init_kib, user_buffer_bytes / 1024);
      fflush(stdout);
    }
    // A rank that leaves first closes its sockets; under load Gloo's TCP pairs
    // have then reported "Connection closed by peer" on a rank still finishing
    // (all results were in): a failure here is reported but does not fail the run.
    barrier.run();
  } catch (const std::exception &e) {
    fprintf(stderr, "gloo_bench: rank %d: %s%s\n", rank, e.what(),
            measured ? " (while shutting down, after every result: ignored)" : "");
    if (!measured) return 1;
  }
  if (rank == 0 && o.store.empty()) {
    // Under smdrun the store directory is ours: remove it (every rank has left
    // the final barrier, so nobody reads it any more).
    if (DIR *d = opendir(store.c_str())) {
      while (struct dirent *e = readdir(d))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
          unlink((store + "/" + e->d_name).c_str());
      closedir(d);
    }
    rmdir(store.c_str());
  }
  return 0;
}
