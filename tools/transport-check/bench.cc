// --bench: one-way latency (half a round trip) and streaming bandwidth
// between ranks 0 and 1, through the plugin table alone. Each point is
// the median of several repetitions; the loops call test() directly so
// the harness's bookkeeping stays out of the numbers.
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "registry.h"

namespace tcheck {

namespace {

struct Raw {
  Env &e;
  void *ep;
  void *mr = nullptr;     // the buffer's registration, if the plugin needs one
  bool blocking = false;  // wait() between tests instead of spinning

  void finish(void *req) {
    int done = 0;
    size_t size = 0;
    for (;;) {
      e.last_error.clear();
      smd_transport_status_t s = e.t.test(e.ctx, req, &done, &size);
      if (done) {
        if (s != SMD_TRANSPORT_OK)
          e.fail("bench request completed with %s", describe(s, e.last_error).c_str());
        return;
      }
      if (blocking) e.t.wait(e.ctx, 1000);
    }
  }
  void *send(const void *buf, size_t n, uint64_t tag) {
    void *req = nullptr;
    e.check(e.t.isend(e.ctx, ep, buf, n, mr, tag, &req), "bench isend");
    return req;
  }
  void *recv(void *buf, size_t n, uint64_t tag) {
    void *req = nullptr;
    e.check(e.t.irecv(e.ctx, ep, buf, n, mr, tag, &req), "bench irecv");
    return req;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double lowest(const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); }
double highest(const std::vector<double> &v) { return *std::max_element(v.begin(), v.end()); }

// Microseconds one way for `iters` round trips of n bytes.
double pingpong(Raw &raw, unsigned char *buf, size_t n, int iters, uint64_t tag) {
  bool first = raw.e.rank == 0;
  double t0 = now_seconds();
  for (int i = 0; i < iters; ++i) {
    if (first) {
      void *r = raw.recv(buf, n, tag);
      raw.finish(raw.send(buf, n, tag));
      raw.finish(r);
    } else {
      raw.finish(raw.recv(buf, n, tag));
      raw.finish(raw.send(buf, n, tag));
    }
  }
  return (now_seconds() - t0) * 1e6 / iters / 2;
}

// GB/s for `iters` windows of `window` n-byte messages from 0 to 1.
double stream(Raw &raw, unsigned char *buf, size_t n, int window, int iters, uint64_t tag) {
  std::vector<void *> reqs(static_cast<size_t>(window));
  double t0 = now_seconds();
  for (int i = 0; i < iters; ++i) {
    for (int w = 0; w < window; ++w)
      reqs[size_t(w)] = raw.e.rank == 0 ? raw.send(buf, n, tag) : raw.recv(buf, n, tag);
    for (void *r : reqs) raw.finish(r);
  }
  if (raw.e.rank == 0) raw.finish(raw.recv(buf, 1, tag + 1));
  else raw.finish(raw.send(buf, 1, tag + 1));
  return double(n) * window * iters / (now_seconds() - t0) / 1e9;
}

}  // namespace

void run_bench(Env &e) {
  if (e.rank > 1) {
    e.barrier();
    return;
  }
  Raw raw{e, e.ep[size_t(1 - e.rank)]};
  const size_t max = size_t(256) << 20;
  auto *buf = static_cast<unsigned char *>(
      mmap(nullptr, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (buf == MAP_FAILED) e.fail("cannot map 256 MiB");
  for (size_t i = 0; i < max; i += 4096) buf[i] = 1;
  if (e.has(SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED))
    e.check(e.t.mem_register(e.ctx, buf, max, 0, &raw.mr), "mem_register of the bench buffer");
  const int kReps = 5;
  bool print = e.rank == 0;
  if (print)
    printf(
        "bench: %s, ranks 0 and 1, %d runs per point (median and best)\n"
        "  one-way latency (half round trip)\n"
        "  %10s %8s %10s %10s\n",
        e.t.name, kReps, "bytes", "iters", "usec", "best");
  uint64_t tag = e.tag(1);
  for (size_t n : {size_t(0), size_t(8), size_t(64), size_t(512), size_t(4096), size_t(16384),
                   size_t(32768), size_t(65536), size_t(262144), size_t(1) << 20}) {
    int iters = n <= 4096 ? 20000 : n <= 65536 ? 4000 : 400;
    pingpong(raw, buf, n, iters / 10, tag);  // warm-up
    std::vector<double> us;
    for (int r = 0; r < kReps; ++r) us.push_back(pingpong(raw, buf, n, iters, tag));
    if (print) printf("  %10zu %8d %10.3f %10.3f\n", n, iters, median(us), lowest(us));
    fflush(stdout);
  }
  if (e.t.wait != nullptr) {
    raw.blocking = true;
    std::vector<double> us;
    for (int r = 0; r < kReps; ++r) us.push_back(pingpong(raw, buf, 8, 2000, tag));
    if (print)
      printf("  %10d %8d %10.3f %10.3f   (wait(1 ms) between tests)\n", 8, 2000, median(us),
             lowest(us));
    raw.blocking = false;
  }
  if (print)
    printf("  bandwidth, rank 0 -> 1\n  %10s %8s %10s %10s\n", "bytes", "window", "GB/s", "best");
  for (size_t n : {size_t(16384), size_t(65536), size_t(262144), size_t(1) << 20, size_t(4) << 20,
                   size_t(16) << 20, size_t(64) << 20, size_t(256) << 20}) {
    int window = n <= (size_t(1) << 20) ? 16 : n <= (size_t(16) << 20) ? 4 : 1;
    int iters = int(std::max<size_t>(2, (size_t(256) << 20) / (n * size_t(window))));
    iters = std::min(iters, 2000);
    std::vector<double> gbs;
    for (int r = 0; r < kReps; ++r) gbs.push_back(stream(raw, buf, n, window, iters, tag + 2));
    if (print) printf("  %10zu %8d %10.2f %10.2f\n", n, window, median(gbs), highest(gbs));
    fflush(stdout);
  }
  if (raw.mr != nullptr) e.t.mem_deregister(e.ctx, raw.mr);
  munmap(buf, max);
  e.barrier();
}

}  // namespace tcheck
