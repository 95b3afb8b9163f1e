// Stream-ordered collectives on device buffers (docs/GPU.md, "Streams"),
// every rank of the world (smdrun -n N) on GPU local_rank % devices:
// for allreduce, allgather, reduce_scatter, broadcast, reduce and alltoall,
// work enqueued on the stream before the call (a delayed host function
// filling pinned memory, then a copy into the input) is what the
// collective reads, and work after it sees the result, on the same stream
// and on another stream after an event recorded after the call; the
// nonblocking form's request; a NULL-stream call after a stream call keeps
// their order, and a nonblocking NULL-stream call before a stream call
// does not deadlock; a call that fails (counts differing between ranks, a
// peer that aborts) releases the stream and fails on every rank, there and
// at the next call;
// destroying a communicator with calls still queued finishes them.
// Point-to-point (pairs of ranks): a send reads what its stream wrote
// before it, a receive's data is there for the stream's later work (same
// stream, or another after an event), the nonblocking forms' requests, and
// a size that differs fails on both sides and releases both streams.
// allgatherv and reduce_scatterv on a stream, blocks of differing counts
// with gaps between them that keep their sentinel.
// A blocking NULL-stream call from another thread between two stream
// calls on a blocking stream finishes (it deadlocked: its copies on the
// legacy default stream waited for the blocking stream, held for the
// stream call queued behind it).
// Groups on a stream: both ranks of a pair send first and an allreduce
// joins them, run as one unit (ungrouped, the sends would wait for each
// other); calls of one group naming different streams are refused.
//
// The delay makes a broken order visible (the input read before it was
// written, the output read before the collective wrote it: both show the
// buffers' sentinel); a correct order passes however long it is. A plain
// program (no GoogleTest on GPU machines); exit 77 without a device.
#include <smd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include "rank_checks.h"

using namespace smd;
using namespace smd::gpu;
using namespace smd::gpu::testing;

namespace {

constexpr float kSentinel = -7.0f;
constexpr size_t kCount = 1027;  // elements per rank (odd)
constexpr int kDelayMs = 40;

enum class Kind { kAllreduce, kAllgather, kReduceScatter, kBroadcast, kReduce, kAlltoall };
constexpr Kind kKinds[] = {Kind::kAllreduce, Kind::kBroadcast,     Kind::kReduce,
                           Kind::kAllgather, Kind::kReduceScatter, Kind::kAlltoall};
const char *name(Kind k) {
  static const char *names[] = {"allreduce", "allgather", "reduce_scatter",
                                "broadcast", "reduce",    "alltoall"};
  return names[int(k)];
}

// Elements of the input and the output on `rank`.
size_t in_elems(Kind k) {
  return k == Kind::kReduceScatter || k == Kind::kAlltoall ? kCount * g_size : kCount;
}
size_t out_elems(Kind k) {
  return k == Kind::kAllgather || k == Kind::kAlltoall ? kCount * g_size : kCount;
}
int root() { return g_size - 1; }

// Input element j of `rank` (small integers: exact in float32).
float input(Kind k, int rank, size_t j) {
  if (k == Kind::kAlltoall) return float(100 * rank + int(j / kCount) + int(j % 5));
  return float(rank + 1 + int(j % 7));
}

// Output element j of this rank; kSentinel where the call writes nothing.
float expected(Kind k, size_t j) {
  float sum = 0;
  switch (k) {
    case Kind::kAllreduce:
      for (int r = 0; r < g_size; ++r) sum += input(k, r, j);
      return sum;
    case Kind::kReduce:
      if (g_rank != root()) return kSentinel;
      for (int r = 0; r < g_size; ++r) sum += input(k, r, j);
      return sum;
    case Kind::kReduceScatter:
      for (int r = 0; r < g_size; ++r) sum += input(k, r, size_t(g_rank) * kCount + j);
      return sum;
    case Kind::kBroadcast: return input(k, root(), j);
    case Kind::kAllgather: return input(k, int(j / kCount), j % kCount);
    case Kind::kAlltoall: return input(k, int(j / kCount), size_t(g_rank) * kCount + j % kCount);
  }
  return 0;
}

smd_result_t call(Kind k, const void *in, void *out, smd_comm_t *comm, void *stream,
                  smd_request_t **req = nullptr, size_t count = kCount) {
  const smd_datatype_t f = SMD_FLOAT32;
  switch (k) {
    case Kind::kAllreduce:
      return req ? smd_iallreduce(in, out, count, f, SMD_SUM, comm, stream, req)
                 : smd_allreduce(in, out, count, f, SMD_SUM, comm, stream);
    case Kind::kAllgather: return smd_allgather(in, out, count, f, comm, stream);
    case Kind::kReduceScatter: return smd_reduce_scatter(in, out, count, f, SMD_SUM, comm, stream);
    case Kind::kBroadcast:
      return smd_broadcast(g_rank == root() ? in : nullptr, out, count, f, root(), comm, stream);
    case Kind::kReduce:
      return smd_reduce(in, g_rank == root() ? out : nullptr, count, f, SMD_SUM, root(), comm,
                        stream);
    case Kind::kAlltoall: return smd_alltoall(in, out, count, f, comm, stream);
  }
  return SMD_ERR_INVALID_ARGUMENT;
}

// Pinned host memory the device reaches, for host functions and copies.
struct Pinned {
  Pinned(const CudaApi &a, size_t n) : a(a) {
    void *p = nullptr;
    check("cudaMallocHost", a.MallocHost(&p, n * sizeof(float)));
    data = static_cast<float *>(p);
  }
  ~Pinned() { a.FreeHost(data); }
  const CudaApi &a;
  float *data;
};

// A host function that, kDelayMs after the stream reaches it, writes the
// values: what a slow kernel producing the input looks like to smd.
struct DelayedFill {
  float *dst;
  std::vector<float> values;
  static void run(void *arg) {
    auto *f = static_cast<DelayedFill *>(arg);
    std::this_thread::sleep_for(std::chrono::milliseconds(kDelayMs));
    std::copy(f->values.begin(), f->values.end(), f->dst);
    delete f;
  }
};

struct World {
  const CudaApi &a;
  smd_comm_t *comm;
  void *stream;  // the caller's stream (blocking)
  void *other;   // a non-blocking stream: no implicit wait for `stream`
};

// Sets `bytes` of device memory to the sentinel, synchronously.
void fill_sentinel(const World &w, void *dev, size_t n) {
  std::vector<float> s(n, kSentinel);
  check("cudaMemcpyAsync", w.a.MemcpyAsync(dev, s.data(), n * 4, kCudaMemcpyDefault, nullptr));
  check("cudaStreamSynchronize", w.a.StreamSynchronize(nullptr));
}

// Enqueues on `stream`: the delayed fill of `host`, then its copy to `dev`.
void enqueue_input(const World &w, Pinned &host, void *dev, std::vector<float> values,
                   void *stream) {
  const size_t n = values.size();
  check("cudaLaunchHostFunc", w.a.LaunchHostFunc(stream, &DelayedFill::run,
                                                 new DelayedFill{host.data, std::move(values)}));
  check("cudaMemcpyAsync", w.a.MemcpyAsync(dev, host.data, n * 4, kCudaMemcpyDefault, stream));
}

bool matches(const float *got, size_t n, const std::function<float(size_t)> &want,
             const std::string &what) {
  for (size_t j = 0; j < n; ++j)
    if (got[j] != want(j)) {
      fprintf(stderr, "[rank %d] %s: element %zu is %g, expected %g\n", g_rank, what.c_str(), j,
              double(got[j]), double(want(j)));
      return false;
    }
  return true;
}

// Copies `n` elements of `dev` to `host` after the work enqueued so far on
// w.stream: on it, or on the other stream after an event recorded there.
void read_after(const World &w, float *host, const void *dev, size_t n, bool other_reader) {
  void *reader = w.stream;
  void *event = nullptr;
  if (other_reader) {
    check("cudaEventCreateWithFlags", w.a.EventCreateWithFlags(&event, kCudaEventDisableTiming));
    check("cudaEventRecord", w.a.EventRecord(event, w.stream));
    check("cudaStreamWaitEvent", w.a.StreamWaitEvent(w.other, event, 0));
    reader = w.other;
  }
  check("cudaMemcpyAsync", w.a.MemcpyAsync(host, dev, n * 4, kCudaMemcpyDefault, reader));
  check("cudaStreamSynchronize", w.a.StreamSynchronize(reader));
  if (event) w.a.EventDestroy(event);
}

// The call between earlier work on its stream and later work on the same
// stream (reader 0) or on the other stream after an event (reader 1).
void ordered_on_stream(const World &w, Kind k, bool other_reader) {
  const std::string what =
      std::string(name(k)) + (other_reader ? ", read on another stream after an event"
                                           : ", read later on the same stream");
  DeviceBuffer in(w.a, in_elems(k) * 4), out(w.a, out_elems(k) * 4);
  Pinned hin(w.a, in_elems(k)), hout(w.a, out_elems(k));
  fill_sentinel(w, in.data(), in_elems(k));
  fill_sentinel(w, out.data(), out_elems(k));
  std::vector<float> values(in_elems(k));
  for (size_t j = 0; j < values.size(); ++j) values[j] = input(k, g_rank, j);
  enqueue_input(w, hin, in.data(), std::move(values), w.stream);
  expect(call(k, in.data(), out.data(), w.comm, w.stream) == SMD_SUCCESS, what + ": enqueued");
  read_after(w, hout.data, out.data(), out_elems(k), other_reader);
  expect(matches(
             hout.data, out_elems(k), [k](size_t j) { return expected(k, j); }, what),
         what);
}

// The nonblocking form: its request completes once the result is in place.
void nonblocking_request(const World &w) {
  DeviceBuffer in(w.a, kCount * 4), out(w.a, kCount * 4);
  Pinned hin(w.a, kCount), hout(w.a, kCount);
  fill_sentinel(w, out.data(), kCount);
  std::vector<float> values(kCount);
  for (size_t j = 0; j < kCount; ++j) values[j] = input(Kind::kAllreduce, g_rank, j);
  enqueue_input(w, hin, in.data(), std::move(values), w.stream);
  smd_request_t *req = nullptr;
  expect(call(Kind::kAllreduce, in.data(), out.data(), w.comm, w.stream, &req) == SMD_SUCCESS,
         "iallreduce on a stream: enqueued");
  expect(smd_request_wait(req) == SMD_SUCCESS, "iallreduce on a stream: its request");
  smd_request_free(req);
  // Read on the non-blocking stream, which does not wait for w.stream: the
  // request alone says the data is there.
  check("cudaMemcpyAsync",
        w.a.MemcpyAsync(hout.data, out.data(), kCount * 4, kCudaMemcpyDefault, w.other));
  check("cudaStreamSynchronize", w.a.StreamSynchronize(w.other));
  expect(matches(
             hout.data, kCount, [](size_t j) { return expected(Kind::kAllreduce, j); },
             "iallreduce on a stream, after its request"),
         "iallreduce on a stream: the result when the request completed");
  check("cudaStreamSynchronize", w.a.StreamSynchronize(w.stream));
}

// In-place allreduces of rank + 1: `stream_calls` on the stream, then
// `null_calls` with a NULL stream; the result says whether every call saw
// the one before.
float in_place_sum(int calls) {
  float v = float(g_size) * float(g_size + 1) / 2;
  for (int i = 1; i < calls; ++i) v *= float(g_size);
  return v;
}

// A nonblocking NULL-stream call queued before a call on a blocking stream:
// the first must not wait on the legacy default stream from the proxy's
// thread (which waits for the blocking stream, held for the second call
// the proxy runs only after the first: a deadlock), yet still see the
// work enqueued before it.
void null_stream_request_then_stream_call(const World &w) {
  DeviceBuffer x(w.a, kCount * 4), y(w.a, kCount * 4);
  Pinned hx(w.a, kCount);
  fill_sentinel(w, x.data(), kCount);
  std::vector<float> ones(kCount, float(g_rank + 1));
  y.upload(0, ones.data(), kCount * 4);
  enqueue_input(w, hx, x.data(), ones, w.stream);  // the NULL-stream call waits for it
  smd_request_t *req = nullptr;
  expect(smd_iallreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, nullptr, &req) ==
             SMD_SUCCESS,
         "NULL-stream request then stream call: the request");
  expect(smd_allreduce(y.data(), y.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, w.stream) ==
             SMD_SUCCESS,
         "NULL-stream request then stream call: the stream call");
  expect(smd_request_wait(req) == SMD_SUCCESS, "NULL-stream request then stream call: waited");
  smd_request_free(req);
  check("cudaStreamSynchronize", w.a.StreamSynchronize(w.stream));
  std::vector<float> gx(kCount), gy(kCount);
  x.download(gx.data(), 0, kCount * 4);
  y.download(gy.data(), 0, kCount * 4);
  const float want = in_place_sum(1);
  expect(matches(
             gx.data(), kCount, [want](size_t) { return want; }, "the NULL-stream request") &&
             matches(
                 gy.data(), kCount, [want](size_t) { return want; }, "the stream call"),
         "a NULL-stream request then a stream call: both right, no deadlock");
}

void stream_then_null_stream(const World &w) {
  DeviceBuffer x(w.a, kCount * 4);
  Pinned hx(w.a, kCount);
  fill_sentinel(w, x.data(), kCount);
  // On the non-blocking stream: the legacy default stream of the NULL-stream
  // call does not wait for it, so only the communicator's order keeps the
  // NULL-stream call after the stream call.
  enqueue_input(w, hx, x.data(), std::vector<float>(kCount, float(g_rank + 1)), w.other);
  expect(smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, w.other) ==
             SMD_SUCCESS,
         "stream then NULL stream: the stream call");
  expect(smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, nullptr) ==
             SMD_SUCCESS,
         "stream then NULL stream: the NULL-stream call");
  std::vector<float> got(kCount);
  x.download(got.data(), 0, kCount * 4);
  const float want = in_place_sum(2);
  expect(matches(
             got.data(), kCount, [want](size_t) { return want; }, "stream then NULL stream"),
         "a NULL-stream call after a stream call runs after it");
}

// Counts differing between ranks: every rank fails, the stream goes on, and
// the communicator's next call reports the failure.
void failing_call_releases_stream(const World &w, bool with_request) {
  const std::string what =
      std::string("counts differing between ranks on a stream") + (with_request ? " (i-form)" : "");
  smd_comm_t *comm = dup_comm(w.comm, what);
  DeviceBuffer in(w.a, (kCount + 1) * 4), out(w.a, (kCount + 1) * 4);
  const size_t count = g_rank == 0 ? kCount + 1 : kCount;
  smd_request_t *req = nullptr;
  expect(call(Kind::kAllreduce, in.data(), out.data(), comm, w.stream,
              with_request ? &req : nullptr, count) == SMD_SUCCESS,
         what + ": enqueued");
  if (req) {
    expect(smd_request_wait(req) == SMD_ERR_MISMATCH, what + ": the request fails");
    smd_request_free(req);
  }
  // Returns (the stream was released) rather than hanging to the timeout.
  expect(w.a.StreamSynchronize(w.stream) == 0, what + ": the stream goes on");
  expect(smd_barrier(comm, nullptr) == SMD_ERR_MISMATCH, what + ": the next call fails");
  smd_comm_destroy(comm);
}

// A peer that ends the communicator (smd_comm_abort) while the others'
// calls wait on their stream: their streams go on, and every rank's next
// call fails.
void aborted_peer_releases_stream(const World &w) {
  smd_comm_t *comm = dup_comm(w.comm, "aborted peer");
  DeviceBuffer x(w.a, kCount * 4);
  Pinned hx(w.a, kCount);
  if (g_rank == g_size - 1) {
    expect(smd_comm_abort(comm) == SMD_SUCCESS, "aborted peer: abort");
  } else {
    // The abort may be known here already (the call then fails at once) or
    // only once the proxy runs the call: either way the stream goes on.
    enqueue_input(w, hx, x.data(), std::vector<float>(kCount, 1.0f), w.stream);
    const smd_result_t rc =
        smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, comm, w.stream);
    expect(rc == SMD_SUCCESS || rc == SMD_ERR_ABORTED, "aborted peer: enqueued or refused");
    expect(w.a.StreamSynchronize(w.stream) == 0, "aborted peer: the stream goes on");
  }
  expect(smd_barrier(comm, nullptr) != SMD_SUCCESS, "aborted peer: the next call fails");
  smd_comm_destroy(comm);
}

// Destroying a communicator finishes its queued stream calls first.
void destroy_with_queued_calls(const World &w) {
  smd_comm_t *comm = dup_comm(w.comm, "destroy with queued calls");
  DeviceBuffer x(w.a, kCount * 4);
  Pinned hx(w.a, kCount);
  fill_sentinel(w, x.data(), kCount);
  enqueue_input(w, hx, x.data(), std::vector<float>(kCount, float(g_rank + 1)), w.stream);
  for (int i = 0; i < 3; ++i)
    expect(smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, comm, w.stream) ==
               SMD_SUCCESS,
           "destroy with queued calls: enqueued");
  expect(smd_comm_destroy(comm) == SMD_SUCCESS, "destroy with queued calls: destroyed");
  std::vector<float> got(kCount);
  check("cudaStreamSynchronize", w.a.StreamSynchronize(w.stream));
  x.download(got.data(), 0, kCount * 4);
  const float want = in_place_sum(3);
  expect(matches(
             got.data(), kCount, [want](size_t) { return want; }, "destroy with queued calls"),
         "destroying a communicator finishes its queued stream calls");
}

// This rank's partner in the point-to-point checks (an even world).
int partner() { return g_rank ^ 1; }
float p2p_value(int rank, size_t j) { return float(1000 * rank + int(j % 11)); }

// An input of this rank's p2p_values written on w.stream by a delayed host
// function, and an output of sentinels, with pinned memory to read it.
struct RankValues {
  RankValues(const World &w, size_t in_n, size_t out_n)
      : in(w.a, in_n * 4), out(w.a, out_n * 4), hin(w.a, in_n), hout(w.a, out_n) {
    fill_sentinel(w, in.data(), in_n);
    fill_sentinel(w, out.data(), out_n);
    std::vector<float> values(in_n);
    for (size_t j = 0; j < in_n; ++j) values[j] = p2p_value(g_rank, j);
    enqueue_input(w, hin, in.data(), std::move(values), w.stream);
  }
  DeviceBuffer in, out;
  Pinned hin, hout;
};

// Lower rank of a pair sends then receives, the higher one receives then
// sends (each proxy runs its calls in issue order): both directions cross.
void p2p_ordered_on_stream(const World &w, bool other_reader, bool nonblocking) {
  const std::string what = std::string("send/recv") + (nonblocking ? " (i-forms)" : "") +
                           (other_reader ? ", read on another stream after an event"
                                         : ", read later on the same stream");
  RankValues bufs(w, kCount, kCount);
  DeviceBuffer &in = bufs.in, &out = bufs.out;
  Pinned &hout = bufs.hout;
  smd_request_t *reqs[2] = {nullptr, nullptr};
  std::function<smd_result_t(smd_request_t **)> send = [&](smd_request_t **r) {
    return r ? smd_isend(in.data(), kCount, SMD_FLOAT32, partner(), 5, w.comm, w.stream, r)
             : smd_send(in.data(), kCount, SMD_FLOAT32, partner(), 5, w.comm, w.stream);
  };
  std::function<smd_result_t(smd_request_t **)> recv = [&](smd_request_t **r) {
    return r ? smd_irecv(out.data(), kCount, SMD_FLOAT32, partner(), 5, w.comm, w.stream, r)
             : smd_recv(out.data(), kCount, SMD_FLOAT32, partner(), 5, w.comm, w.stream);
  };
  const bool lower = g_rank < partner();
  expect((lower ? send : recv)(nonblocking ? &reqs[0] : nullptr) == SMD_SUCCESS,
         what + ": first call enqueued");
  expect((lower ? recv : send)(nonblocking ? &reqs[1] : nullptr) == SMD_SUCCESS,
         what + ": second call enqueued");
  for (smd_request_t *r : reqs)
    if (r) {
      expect(smd_request_wait(r) == SMD_SUCCESS, what + ": request");
      smd_request_free(r);
    }
  read_after(w, hout.data, out.data(), kCount, other_reader);
  expect(matches(
             hout.data, kCount, [](size_t j) { return p2p_value(partner(), j); }, what),
         what);
  check("cudaStreamSynchronize", w.a.StreamSynchronize(w.stream));
}

// The lower rank sends one element more (or fewer) than its partner
// receives: both requests fail, both streams go on, and the next call on
// the communicator fails on both ranks.
void p2p_size_mismatch(const World &w, bool longer) {
  const std::string what = std::string("send/recv with the message ") +
                           (longer ? "longer" : "shorter") + " than the receive";
  smd_comm_t *comm = nullptr;
  expect(smd_comm_dup(w.comm, &comm) == SMD_SUCCESS, what + ": dup");
  DeviceBuffer buf(w.a, (kCount + 1) * 4);
  smd_request_t *req = nullptr;
  const size_t sent = longer ? kCount + 1 : kCount - 1;
  const smd_result_t rc =
      g_rank < partner()
          ? smd_isend(buf.data(), sent, SMD_FLOAT32, partner(), 6, comm, w.stream, &req)
          : smd_irecv(buf.data(), kCount, SMD_FLOAT32, partner(), 6, comm, w.stream, &req);
  expect(rc == SMD_SUCCESS, what + ": enqueued");
  if (req) {
    const smd_result_t want = longer ? SMD_ERR_TRUNCATED : SMD_ERR_MISMATCH;
    const smd_result_t got = smd_request_wait(req);
    if (got != want)
      fprintf(stderr, "[rank %d] %s: the request gave %s, expected %s\n", g_rank, what.c_str(),
              smd_result_string(got), smd_result_string(want));
    expect(got == want, what + ": the request fails on both ranks");
    smd_request_free(req);
  }
  expect(w.a.StreamSynchronize(w.stream) == 0, what + ": the stream goes on");
  expect(smd_barrier(comm, nullptr) != SMD_SUCCESS, what + ": the next call fails");
  smd_comm_destroy(comm);
}

// Rank r's block: kCount + r elements, at r * (kCount + g_size + 3) (gaps).
void v_collectives_on_stream(const World &w) {
  std::vector<size_t> counts, displs;
  for (int r = 0; r < g_size; ++r) {
    counts.push_back(kCount + size_t(r));
    displs.push_back(size_t(r) * (kCount + size_t(g_size) + 3));
  }
  const size_t extent = displs.back() + counts.back(), own = counts[size_t(g_rank)];
  auto block_of = [&](size_t j) {  // the rank whose block holds element j, or -1
    for (int r = 0; r < g_size; ++r)
      if (j >= displs[size_t(r)] && j < displs[size_t(r)] + counts[size_t(r)]) return r;
    return -1;
  };
  for (bool scatter : {false, true}) {
    const std::string what = scatter ? "reduce_scatterv on a stream" : "allgatherv on a stream";
    const size_t in_n = scatter ? extent : own, out_n = scatter ? own : extent;
    RankValues bufs(w, in_n, out_n);
    DeviceBuffer &in = bufs.in, &out = bufs.out;
    Pinned &hout = bufs.hout;
    const smd_result_t rc =
        scatter ? smd_reduce_scatterv(in.data(), out.data(), counts.data(), displs.data(),
                                      SMD_FLOAT32, SMD_SUM, w.comm, w.stream)
                : smd_allgatherv(in.data(), out.data(), counts.data(), displs.data(), SMD_FLOAT32,
                                 w.comm, w.stream);
    expect(rc == SMD_SUCCESS, what + ": enqueued");
    read_after(w, hout.data, out.data(), out_n, scatter);
    expect(matches(
               hout.data, out_n,
               [&](size_t j) {
                 if (scatter) {
                   float t = 0;
                   for (int r = 0; r < g_size; ++r) t += p2p_value(r, displs[size_t(g_rank)] + j);
                   return t;
                 }
                 const int r = block_of(j);
                 return r < 0 ? kSentinel : p2p_value(r, j - displs[size_t(r)]);
               },
               what),
           what);
  }
}

// alltoallv on a stream: rank r sends kCount + p elements to rank p, at
// p * (kCount + g_size + 3) of its input, and receives from rank q at the
// same offset of its output (gaps keep their sentinels).
void alltoallv_on_stream(const World &w) {
  const std::string what = "alltoallv on a stream";
  const size_t stride = kCount + size_t(g_size) + 3, me = size_t(g_rank);
  std::vector<size_t> scounts, rcounts, displs;
  for (int p = 0; p < g_size; ++p) {
    scounts.push_back(kCount + size_t(p));
    rcounts.push_back(kCount + me);
    displs.push_back(size_t(p) * stride);
  }
  const size_t in_n = displs.back() + scounts.back(), out_n = displs.back() + rcounts.back();
  RankValues bufs(w, in_n, out_n);
  expect(smd_alltoallv(bufs.in.data(), scounts.data(), displs.data(), bufs.out.data(),
                       rcounts.data(), displs.data(), SMD_FLOAT32, w.comm, w.stream) == SMD_SUCCESS,
         what + ": enqueued");
  read_after(w, bufs.hout.data, bufs.out.data(), out_n, false);
  expect(matches(
             bufs.hout.data, out_n,
             [&](size_t j) {
               const size_t q = j / stride, at = j % stride;
               return at < kCount + me ? p2p_value(int(q), me * stride + at) : kSentinel;
             },
             what),
         what);
}

// The main thread queues a stream call (busy for kDelayMs waiting for its
// input), another thread makes a blocking NULL-stream call (queued behind
// it), then the main thread a second stream call. The pause only keeps the
// three in the same order on every rank (a rank that lost the race would
// see SMD_ERR_MISMATCH, not a pass); a deadlock is ended by smdrun's
// --timeout, a failure.
void null_stream_call_beside_stream_calls(const World &w) {
  const std::string what = "a blocking NULL-stream call from another thread between stream calls";
  smd_comm_t *comm = nullptr;
  expect(smd_comm_dup(w.comm, &comm) == SMD_SUCCESS, what + ": dup");
  DeviceBuffer x(w.a, kCount * 4), y(w.a, kCount * 4);
  Pinned hx(w.a, kCount);
  fill_sentinel(w, x.data(), kCount);
  std::vector<float> ones(kCount, float(g_rank + 1));
  y.upload(0, ones.data(), kCount * 4);
  enqueue_input(w, hx, x.data(), ones, w.stream);
  expect(smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, comm, w.stream) ==
             SMD_SUCCESS,
         what + ": first stream call");
  smd_result_t null_rc = SMD_ERR_INTERNAL;
  std::thread other([&] {
    null_rc = smd_allreduce(y.data(), y.data(), kCount, SMD_FLOAT32, SMD_SUM, comm, nullptr);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(kDelayMs / 2));
  expect(smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, comm, w.stream) ==
             SMD_SUCCESS,
         what + ": second stream call");
  other.join();
  expect(null_rc == SMD_SUCCESS, what + ": the NULL-stream call");
  check("cudaStreamSynchronize", w.a.StreamSynchronize(w.stream));
  std::vector<float> gx(kCount), gy(kCount);
  x.download(gx.data(), 0, kCount * 4);
  y.download(gy.data(), 0, kCount * 4);
  const float one = in_place_sum(1), two = in_place_sum(2);
  expect(matches(
             gx.data(), kCount, [two](size_t) { return two; }, what + ": stream calls") &&
             matches(
                 gy.data(), kCount, [one](size_t) { return one; }, what + ": NULL-stream call"),
         what);
  smd_comm_destroy(comm);
}

// Both ranks of a pair send, then receive, then allreduce, in one group on
// the stream: the input is the stream's earlier work, the outputs are
// there for its later work.
void group_on_stream(const World &w) {
  const std::string what = "a group on a stream (crossing sends and an allreduce)";
  DeviceBuffer in(w.a, kCount * 4), out(w.a, kCount * 4), sum(w.a, kCount * 4);
  Pinned hin(w.a, kCount), hout(w.a, kCount), hsum(w.a, kCount);
  fill_sentinel(w, in.data(), kCount);
  fill_sentinel(w, out.data(), kCount);
  fill_sentinel(w, sum.data(), kCount);
  std::vector<float> values(kCount);
  for (size_t j = 0; j < kCount; ++j) values[j] = p2p_value(g_rank, j);
  enqueue_input(w, hin, in.data(), std::move(values), w.stream);
  smd_request_t *req = nullptr;
  expect(smd_group_start() == SMD_SUCCESS, what + ": start");
  expect(smd_send(in.data(), kCount, SMD_FLOAT32, partner(), 7, w.comm, w.stream) == SMD_SUCCESS,
         what + ": send queued");
  expect(smd_irecv(out.data(), kCount, SMD_FLOAT32, partner(), 7, w.comm, w.stream, &req) ==
             SMD_SUCCESS,
         what + ": receive queued");
  expect(smd_allreduce(in.data(), sum.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, w.stream) ==
             SMD_SUCCESS,
         what + ": allreduce queued");
  expect(smd_group_end() == SMD_SUCCESS, what + ": end");
  read_after(w, hout.data, out.data(), kCount, false);
  read_after(w, hsum.data, sum.data(), kCount, true);
  expect(smd_request_wait(req) == SMD_SUCCESS, what + ": the receive's request");
  smd_request_free(req);
  expect(
      matches(
          hout.data, kCount, [](size_t j) { return p2p_value(partner(), j); }, what + ": received"),
      what + ": received");
  expect(matches(
             hsum.data, kCount,
             [](size_t j) {
               float t = 0;
               for (int r = 0; r < g_size; ++r) t += p2p_value(r, j);
               return t;
             },
             what + ": allreduce"),
         what + ": allreduce");
}

// A group whose calls name different streams runs nothing, on any rank.
void group_with_two_streams(const World &w) {
  DeviceBuffer x(w.a, kCount * 4);
  expect(smd_group_start() == SMD_SUCCESS, "group with two streams: start");
  smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, w.stream);
  smd_allreduce(x.data(), x.data(), kCount, SMD_FLOAT32, SMD_SUM, w.comm, w.other);
  expect(smd_group_end() == SMD_ERR_INVALID_ARGUMENT,
         "a group whose calls name different streams is refused");
  expect(smd_barrier(w.comm, nullptr) == SMD_SUCCESS, "group with two streams: comm usable");
}

}  // namespace

int main() {
  const CudaApi &a = require_device("gpu-streams");
  if (!a.LaunchHostFunc) {
    printf("SKIP gpu-streams: the CUDA runtime lacks cudaLaunchHostFunc\n");
    return 77;
  }
  smd_comm_t *comm = init_world(a);
  if (!comm) return 1;
  World w{a, comm, nullptr, nullptr};
  check("cudaStreamCreateWithFlags", a.StreamCreateWithFlags(&w.stream, 0));
  check("cudaStreamCreateWithFlags", a.StreamCreateWithFlags(&w.other, kCudaStreamNonBlocking));
  for (Kind k : kKinds) {
    ordered_on_stream(w, k, false);
    ordered_on_stream(w, k, true);
  }
  nonblocking_request(w);
  stream_then_null_stream(w);
  null_stream_request_then_stream_call(w);
  destroy_with_queued_calls(w);
  null_stream_call_beside_stream_calls(w);
  v_collectives_on_stream(w);
  alltoallv_on_stream(w);
  if (g_size % 2 == 0) {
    for (bool nonblocking : {false, true}) {
      p2p_ordered_on_stream(w, false, nonblocking);
      p2p_ordered_on_stream(w, true, nonblocking);
    }
    p2p_size_mismatch(w, true);
    p2p_size_mismatch(w, false);
    group_on_stream(w);
  }
  group_with_two_streams(w);
  if (g_size > 1) {
    failing_call_releases_stream(w, true);
    failing_call_releases_stream(w, false);
    aborted_peer_releases_stream(w);
  }
  smd_comm_destroy(comm);
  a.StreamDestroy(w.stream);
  a.StreamDestroy(w.other);
  if (g_rank == 0)
    printf("gpu-streams: %d rank(s), %s\n", g_size, g_failures ? "FAILED" : "passed");
  return g_failures ? 1 : 0;
}
