// smd-bench: nccl-tests-style bandwidth and latency of smd's collectives.
// Run under a launcher: smdrun -n 4 build/tools/smd-bench allreduce -b 8 -e 256M
#include <smd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/values.h"
#include "bench_options.h"
#include "bench_tensors.h"
#include "bench_tune.h"
#include "bench_util.h"

using namespace smdbench;

namespace {

// A benchmark buffer: ordinary memory, or smd_mem_alloc's (-m 1).
class UserBuffer {
 public:
  UserBuffer(smd_comm_t *comm, bool shared, size_t bytes) : bytes_(bytes) {
    if (shared) CHECK(smd_mem_alloc(comm, bytes, &shared_));
    else plain_.resize(bytes);
  }
  ~UserBuffer() {
    if (shared_) smd_mem_free(shared_);
  }
  UserBuffer(const UserBuffer &) = delete;
  UserBuffer &operator=(const UserBuffer &) = delete;
  void *data() { return shared_ ? shared_ : plain_.data(); }
  size_t size() const { return bytes_; }

 private:
  size_t bytes_;
  void *shared_ = nullptr;
  std::vector<uint8_t> plain_;
};

struct Shape {
  size_t count;       // the count argument of the call
  size_t send_elems;  // elements in the send buffer
  size_t recv_elems;  // elements in the receive buffer
  double busbw_factor;
};

Shape shape_of(Coll c, size_t bytes, size_t es, int p) {
  size_t total = bytes / es;
  switch (c) {
    case Coll::kAllreduce: return {total, total, total, 2.0 * (p - 1) / p};
    case Coll::kBroadcast: return {total, total, total, 1.0};
    case Coll::kReduce: return {total, total, total, 1.0};
    case Coll::kAllgather: return {total / p, total / p, (total / p) * p, double(p - 1) / p};
    case Coll::kReduceScatter: return {total / p, (total / p) * p, total / p, double(p - 1) / p};
    case Coll::kAlltoall: return {total / p, (total / p) * p, (total / p) * p, double(p - 1) / p};
  }
  return {};
}

smd_result_t run_once(const Options &o, const Shape &s, const void *send, void *recv,
                      smd_comm_t *comm) {
  switch (o.coll) {
    case Coll::kAllreduce: return smd_allreduce(send, recv, s.count, o.dtype, o.op, comm, nullptr);
    case Coll::kAllgather: return smd_allgather(send, recv, s.count, o.dtype, comm, nullptr);
    case Coll::kReduceScatter:
      return smd_reduce_scatter(send, recv, s.count, o.dtype, o.op, comm, nullptr);
    case Coll::kBroadcast:
      return smd_broadcast(send, recv, s.count, o.dtype, o.root, comm, nullptr);
    case Coll::kReduce:
      return smd_reduce(send, recv, s.count, o.dtype, o.op, o.root, comm, nullptr);
    case Coll::kAlltoall: return smd_alltoall(send, recv, s.count, o.dtype, comm, nullptr);
  }
  return SMD_ERR_INVALID_ARGUMENT;
}

// Fill the send buffer with this rank's test values.
void fill(const Options &o, const Shape &s, void *send, int rank) {
  for (size_t i = 0; i < s.send_elems; ++i)
    smdvals::store(send, i, o.dtype, smdvals::value(rank, i, o.op, o.dtype));
}

// Count wrong elements of the receive buffer after one run.
size_t count_errors(const Options &o, const Shape &s, const void *recv, int rank, int p) {
  size_t wrong = 0;
  auto expect_reduced = [&](size_t out_i, size_t in_i) {
    double want = smdvals::expected(p, in_i, o.op, o.dtype);
    if (!smdvals::close_enough(smdvals::load(recv, out_i, o.dtype), want, o.dtype, o.op)) ++wrong;
  };
  auto expect_value = [&](size_t out_i, int from, size_t in_i) {
    if (smdvals::load(recv, out_i, o.dtype) != smdvals::load_value(from, in_i, o.op, o.dtype))
      ++wrong;
  };
  switch (o.coll) {
    case Coll::kAllreduce:
      for (size_t i = 0; i < s.count; ++i) expect_reduced(i, i);
      break;
    case Coll::kReduce:
      if (rank == o.root)
        for (size_t i = 0; i < s.count; ++i) expect_reduced(i, i);
      break;
    case Coll::kReduceScatter:
      for (size_t i = 0; i < s.count; ++i) expect_reduced(i, rank * s.count + i);
      break;
    case Coll::kBroadcast:
      for (size_t i = 0; i < s.count; ++i) expect_value(i, o.root, i);
      break;
    case Coll::kAllgather:
      for (int r = 0; r < p; ++r)
        for (size_t i = 0; i < s.count; ++i) expect_value(r * s.count + i, r, i);
      break;
    case Coll::kAlltoall:
      for (int r = 0; r < p; ++r)
        for (size_t i = 0; i < s.count; ++i) expect_value(r * s.count + i, r, rank * s.count + i);
      break;
  }
  return wrong;
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

}  // namespace

int main(int argc, char **argv) {
  Options o = parse_options(argc, argv);
  smd_comm_t *world = nullptr;
  CHECK(smd_comm_init(nullptr, &world));
  if (!o.tune_file.empty() || o.many_tensors()) {
    int status = o.many_tensors() ? run_tensors(world, o) : run_tune(world, o.tune_file);
    CHECK(smd_comm_destroy(world));
    return status;
  }
  int rank = 0, p = 1;
  CHECK(smd_comm_rank(world, &rank));
  CHECK(smd_comm_size(world, &p));
  if (o.root < 0 || o.root >= p) {
    if (rank == 0) fprintf(stderr, "smd-bench: root %d is not a rank (size %d)\n", o.root, p);
    smd_comm_destroy(world);
    return 2;
  }
  size_t es = smdvals::dtype_size(o.dtype);
  // Resident memory after initialisation, before any benchmark buffer (--rss).
  const long long rss_init_kib = o.rss ? proc_status_kib("VmRSS") : 0;
  size_t user_buffer_bytes = 0;  // send + receive buffers of the largest size
  if (rank == 0 && !o.json) {
    printf("# smd-bench %s  ranks %d  dtype %s  op %s  iters %d  warmup %d  %s\n",
           o.coll_name.c_str(), p, o.dtype_name.c_str(), o.op_name.c_str(), o.iters, o.warmup,
           o.inplace ? "in-place" : "out-of-place");
    printf("# %12s %12s %9s %6s %12s %10s %10s %8s\n", "bytes", "count", "type", "op", "time_us",
           "algbw_GB/s", "busbw_GB/s", "errors");
  }
  for (size_t bytes = o.min_bytes;;
       bytes = std::max(bytes + 1, static_cast<size_t>(bytes * o.factor))) {
    if (bytes > o.max_bytes) break;
    Shape s = shape_of(o.coll, bytes, es, p);
    UserBuffer sendv(
        world, o.shared_mem,
        std::max<size_t>(1,
                         (o.inplace ? std::max(s.send_elems, s.recv_elems) : s.send_elems) * es));
    UserBuffer recvv(world, o.shared_mem, std::max<size_t>(1, s.recv_elems * es));
    void *send = sendv.data();
    void *recv = recvv.data();
    user_buffer_bytes = std::max(user_buffer_bytes, (o.inplace ? 0 : recvv.size()) + sendv.size());
    if (o.inplace) {
      recv = send;
      if (o.coll == Coll::kAllgather) send = static_cast<uint8_t *>(recv) + rank * s.count * es;
      if (o.coll == Coll::kReduceScatter) recv = static_cast<uint8_t *>(send) + rank * s.count * es;
    }
    size_t errors = 0;
    if (o.check) {
      if (o.inplace && o.coll == Coll::kAllgather) {
        for (size_t i = 0; i < s.count; ++i)
          smdvals::store(send, i, o.dtype, smdvals::value(rank, i, o.op, o.dtype));
      } else {
        fill(o, s, send, rank);
      }
      CHECK(run_once(o, s, send, recv, world));
      errors = count_errors(o, s, recv, rank, p);
    }
    for (int i = 0; i < o.warmup; ++i) CHECK(run_once(o, s, send, recv, world));
    CHECK(smd_barrier(world, nullptr));
    smd_comm_stats_t before, after;
    before.struct_size = after.struct_size = sizeof before;
    CHECK(smd_comm_get_stats(world, &before));
    double t0 = now_s();
    for (int i = 0; i < o.iters; ++i) CHECK(run_once(o, s, send, recv, world));
    double local_us = (now_s() - t0) * 1e6 / o.iters;
    CHECK(smd_comm_get_stats(world, &after));
    // Bytes this rank sent to other nodes per call; the busiest rank's.
    uint64_t local_inter =
        o.iters > 0 ? (after.inter_node_bytes_sent - before.inter_node_bytes_sent) / o.iters : 0;
    uint64_t inter_node_bytes = 0;
    CHECK(smd_allreduce(&local_inter, &inter_node_bytes, 1, SMD_UINT64, SMD_MAX, world, nullptr));
    // The slowest rank's mean decides (nccl-tests averages over ranks by
    // default; mpi_bench and gloo_bench take the maximum as this does).
    double time_us = 0;
    CHECK(smd_allreduce(&local_us, &time_us, 1, SMD_FLOAT64, SMD_MAX, world, nullptr));
    uint64_t local_err = errors, total_err = 0;
    CHECK(smd_allreduce(&local_err, &total_err, 1, SMD_UINT64, SMD_SUM, world, nullptr));
    double algbw = time_us > 0 ? bytes / time_us / 1e3 : 0;
    double busbw = algbw * s.busbw_factor;
    if (rank == 0) {
      if (o.json)
        printf(
            "{\"collective\": \"%s\", \"bytes\": %zu, \"count\": %zu, \"dtype\": \"%s\", \"op\": "
            "\"%s\", "
            "\"ranks\": %d, \"time_us\": %.3f, \"algbw_gbps\": %.4f, \"busbw_gbps\": %.4f, "
            "\"errors\": %llu, "
            "\"checked\": %d, \"in_place\": %d, \"algo\": \"%s\", \"inter_node_bytes\": %llu, "
            "\"predicted_us\": %.3f}\n",
            o.coll_name.c_str(), bytes, s.count, o.dtype_name.c_str(), o.op_name.c_str(), p,
            time_us, algbw, busbw, static_cast<unsigned long long>(total_err), o.check ? 1 : 0,
            o.inplace ? 1 : 0, after.last_algorithm,
            static_cast<unsigned long long>(inter_node_bytes), after.last_predicted_us);
      else
        printf("  %12zu %12zu %9s %6s %12.2f %10.3f %10.3f %8llu\n", bytes, s.count,
               o.dtype_name.c_str(), o.op_name.c_str(), time_us, algbw, busbw,
               static_cast<unsigned long long>(total_err));
      fflush(stdout);
    }
    if (bytes == o.max_bytes) break;
  }
  if (o.rss) {
    // Peak resident memory of this rank (VmHWM counts the shared-memory pages
    // it has touched too), next to the user's buffers, one line per rank.
    CHECK(smd_barrier(world, nullptr));
    long long hwm = proc_status_kib("VmHWM");
    if (o.json)
      printf(
          "{\"rss\": \"%s\", \"rank\": %d, \"ranks\": %d, \"max_bytes\": %zu, \"rss_peak_kib\": "
          "%lld, "
          "\"rss_init_kib\": %lld, \"user_buffers_kib\": %zu}\n",
          o.coll_name.c_str(), rank, p, o.max_bytes, hwm, rss_init_kib, user_buffer_bytes / 1024);
    else
      printf(
          "# rank %d: peak resident %lld KiB (after init %lld KiB), user buffers %zu KiB, beyond "
          "them %lld KiB\n",
          rank, hwm, rss_init_kib, user_buffer_bytes / 1024,
          hwm - static_cast<long long>(user_buffer_bytes / 1024));
    fflush(stdout);
  }
  CHECK(smd_comm_destroy(world));
  return 0;
}
