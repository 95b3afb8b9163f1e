#include "schedule_run.h"

#include <smd.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "call_by_name.h"
// The in-process store the scale tests form thread worlds with.
#include "../../src/tool_support/thread_store.h"

namespace smdsim {

namespace {

smd_datatype_t datatype_of(int element_bytes) {
  switch (element_bytes) {
    case 1: return SMD_UINT8;
    case 2: return SMD_FLOAT16;
    case 8: return SMD_FLOAT64;
    default: return SMD_FLOAT32;
  }
}

smd_result_t run_call(const ScheduleCall &c, smd_comm_t *comm, uint8_t *in, uint8_t *out,
                      size_t n) {
  return call_by_name(c.collective, comm, in, out, n, datatype_of(c.element_bytes));
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string temp_file(const char *what) {
  char name[] = "/tmp/smd-sim-XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0) throw std::runtime_error(std::string("cannot make a temporary file for the ") + what);
  close(fd);
  return name;
}

}  // namespace

ScheduleTrace record_schedule(const ScheduleCall &c) {
  const int p = c.ranks;
  const size_t n = size_t(c.bytes) / size_t(c.element_bytes);
  // Buffers of a rank: n elements, or n per rank on the side that holds
  // every rank's block.
  const size_t block = n * size_t(c.element_bytes), all = block * size_t(p);
  const bool gathered_out = c.collective == "allgather" || c.collective == "alltoall";
  const bool scattered_in = c.collective == "reduce_scatter" || c.collective == "alltoall";
  const size_t in_bytes = scattered_in ? all : block, out_bytes = gathered_out ? all : block;
  // Only the values differ between ranks, and the schedule does not depend
  // on them: every rank reads one input (broadcast writes its input, so
  // there each has its own); each writes its own output.
  const bool shared_in = c.collective != "broadcast";
  if ((double(in_bytes) * (shared_in ? 1 : p) + double(out_bytes) * p) > 4e9)
    throw std::runtime_error(
        "the replay's buffers would take more than 4 GB: fewer ranks or "
        "smaller sizes");
  std::vector<uint8_t> common_in(shared_in ? in_bytes : 0, 0);
  const std::string tuning = temp_file("cost model"), trace = temp_file("trace");
  struct Cleanup {
    std::string a, b;
    ~Cleanup() {
      std::remove(a.c_str());
      std::remove(b.c_str());
    }
  } cleanup{tuning, trace};
  std::ofstream(tuning) << c.tuning_text;
  setenv("SMD_TRANSPORT", "inproc", 1);
  setenv("SMD_RANKS_PER_NODE", std::to_string(c.ranks_per_node).c_str(), 1);
  setenv("SMD_TUNING_FILE", tuning.c_str(), 1);
  setenv("SMD_INPROC_TRACE", trace.c_str(), 1);
  if (!c.algorithm.empty()) setenv("SMD_ALGO", (c.collective + "=" + c.algorithm).c_str(), 1);

  scaletest::ThreadStore store;
  const smd_store_ops_t ops = store.ops();
  std::mutex mu;
  std::string failure, algorithm;
  int64_t from_ns = 0, to_ns = 0;
  // Both ends of the recorded call are points where every rank thread has
  // arrived and none has gone on: its messages lie between them.
  std::barrier before(p, [&]() noexcept { from_ns = now_ns(); });
  std::barrier after(p, [&]() noexcept { to_ns = now_ns(); });
  auto rank_main = [&](int rank) {
    auto fail = [&](const char *what) {
      std::lock_guard<std::mutex> lock(mu);
      if (failure.empty())
        failure = "rank " + std::to_string(rank) + ": " + what + ": " + smd_last_error();
    };
    smd_comm_t *comm = nullptr;
    bool ok = scaletest::init_thread_rank(&ops, rank, p, &comm) == SMD_SUCCESS;
    if (!ok) fail("init");
    std::vector<uint8_t> own_in(shared_in ? 0 : in_bytes, 0), out(out_bytes, 0);
    uint8_t *in = shared_in ? common_in.data() : own_in.data();
    if (ok && run_call(c, comm, in, out.data(), n) != SMD_SUCCESS)
      ok = false, fail(c.collective.c_str());
    before.arrive_and_wait();
    if (ok && run_call(c, comm, in, out.data(), n) != SMD_SUCCESS)
      ok = false, fail(c.collective.c_str());
    after.arrive_and_wait();
    smd_comm_stats_t st{};
    st.struct_size = sizeof st;
    if (ok && rank == 0 && smd_comm_get_stats(comm, &st) == SMD_SUCCESS)
      algorithm = st.last_algorithm;
    if (comm) smd_comm_destroy(comm);
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) threads.emplace_back(rank_main, r);
  for (std::thread &t : threads) t.join();
  if (!failure.empty()) throw std::runtime_error(failure);
  ScheduleTrace out;
  out.algorithm = algorithm;
  out.ranks = read_trace(trace, p, from_ns, to_ns);
  // Every collective of 2 or more ranks sends: no message means no
  // recording (an inproc plugin without SMD_INPROC_TRACE), not a free call.
  bool sent = false;
  for (const RankTrace &r : out.ranks) sent = sent || !r.empty();
  if (p > 1 && !sent)
    throw std::runtime_error("the inproc transport recorded no message of the " + c.collective +
                             ": its plugin (SMD_PLUGIN_PATH) does not know SMD_INPROC_TRACE");
  return out;
}

}  // namespace smdsim
