// Collectives on device buffers through the public ABI, every rank of the
// world (smdrun -n N, or alone) on GPU local_rank % devices: allreduce (out
// of place, in place, nonblocking), allgather (in place too),
// reduce_scatter, broadcast, reduce, alltoall, for float32, float64, int32
// and bfloat16, against values computed on the host; and the answers to
// bad input (mixed memory kinds); calls that disagree between ranks; device
// point-to-point on the NULL stream; and host memory on one rank with device
// memory on the others (streams:
// gpu_streams_test.cc). A plain program (no GoogleTest on GPU machines); exit 77
// without a device.
#include <smd.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/reduce/half.h"
#include "core/util/dtype.h"
#include "rank_checks.h"

using namespace smd;
using namespace smd::gpu;
using namespace smd::gpu::testing;

namespace {

// Small integers, exact in every datatype tested (sums stay below 256).
double value(int rank, size_t i) { return double((rank + 1) * int(i % 7 + 1)); }

void store(unsigned char *p, smd_datatype_t dt, double v) {
  switch (dt) {
    case SMD_FLOAT32: {
      float f = float(v);
      memcpy(p, &f, 4);
      break;
    }
    case SMD_FLOAT64: memcpy(p, &v, 8); break;
    case SMD_INT32: {
      int32_t x = int32_t(v);
      memcpy(p, &x, 4);
      break;
    }
    default: {
      uint16_t b = reduce::float_to_bfloat16(float(v));
      memcpy(p, &b, 2);
      break;
    }
  }
}

std::vector<unsigned char> host_vector(smd_datatype_t dt, size_t count, int rank,
                                       size_t first = 0) {
  std::vector<unsigned char> v(count * datatype_size(dt));
  for (size_t i = 0; i < count; ++i) store(&v[i * datatype_size(dt)], dt, value(rank, first + i));
  return v;
}

using Counter = int (*)();

struct World {
  smd_comm_t *comm;
  const CudaApi &a;
};

bool same(const DeviceBuffer &d, const std::vector<unsigned char> &want) {
  std::vector<unsigned char> got(want.size());
  d.download(got.data(), 0, got.size());
  return got == want;
}

void run_dtype(const World &w, smd_datatype_t dt) {
  const size_t es = datatype_size(dt), n = 1003, bytes = n * es;
  const std::string name = datatype_name(dt);
  // allreduce sum: sum over ranks of value(r, i).
  std::vector<unsigned char> sum(bytes), maxv(bytes);
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (int r = 0; r < g_size; ++r) s += value(r, i);
    store(&sum[i * es], dt, s);
    store(&maxv[i * es], dt, value(g_size - 1, i));
  }
  DeviceBuffer in(w.a, bytes * g_size), out(w.a, bytes * g_size);
  in.upload(0, host_vector(dt, n, g_rank).data(), bytes);
  expect(smd_allreduce(in.data(), out.data(), n, dt, SMD_SUM, w.comm, nullptr) == SMD_SUCCESS &&
             same(out, sum),
         "allreduce sum " + name);
  expect(smd_allreduce(in.data(), out.data(), n, dt, SMD_MAX, w.comm, nullptr) == SMD_SUCCESS &&
             same(out, maxv),
         "allreduce max " + name);
  smd_request_t *req = nullptr;
  expect(
      smd_iallreduce(in.data(), out.data(), n, dt, SMD_SUM, w.comm, nullptr, &req) == SMD_SUCCESS &&
          smd_request_wait(req) == SMD_SUCCESS && same(out, sum),
      "iallreduce sum " + name);
  if (req) smd_request_free(req);
  expect(smd_allreduce(in.data(), in.data(), n, dt, SMD_SUM, w.comm, nullptr) == SMD_SUCCESS &&
             same(in, sum),
         "allreduce in place " + name);

  // allgather: block r is rank r's vector; in place from block `rank`.
  std::vector<unsigned char> gathered;
  for (int r = 0; r < g_size; ++r) {
    auto v = host_vector(dt, n, r);
    gathered.insert(gathered.end(), v.begin(), v.end());
  }
  in.upload(0, host_vector(dt, n, g_rank).data(), bytes);
  expect(smd_allgather(in.data(), out.data(), n, dt, w.comm, nullptr) == SMD_SUCCESS &&
             same(out, gathered),
         "allgather " + name);
  out.upload(g_rank * bytes, host_vector(dt, n, g_rank).data(), bytes);
  expect(smd_allgather(out.data() + g_rank * bytes, out.data(), n, dt, w.comm, nullptr) ==
                 SMD_SUCCESS &&
             same(out, gathered),
         "allgather in place " + name);

  // reduce_scatter: every rank sends the same pattern shifted by block.
  std::vector<unsigned char> rs_in;
  for (int b = 0; b < g_size; ++b) {
    auto v = host_vector(dt, n, g_rank, size_t(b) * n);
    rs_in.insert(rs_in.end(), v.begin(), v.end());
  }
  std::vector<unsigned char> rs_want(bytes);
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (int r = 0; r < g_size; ++r) s += value(r, size_t(g_rank) * n + i);
    store(&rs_want[i * es], dt, s);
  }
  in.upload(0, rs_in.data(), rs_in.size());
  DeviceBuffer rs_out(w.a, bytes);
  expect(smd_reduce_scatter(in.data(), rs_out.data(), n, dt, SMD_SUM, w.comm, nullptr) ==
                 SMD_SUCCESS &&
             same(rs_out, rs_want),
         "reduce_scatter " + name);

  // broadcast from rank 0, reduce to the last rank.
  DeviceBuffer b(w.a, bytes);
  b.upload(0, host_vector(dt, n, g_rank).data(), bytes);
  expect(smd_broadcast(b.data(), b.data(), n, dt, 0, w.comm, nullptr) == SMD_SUCCESS &&
             same(b, host_vector(dt, n, 0)),
         "broadcast " + name);
  in.upload(0, host_vector(dt, n, g_rank).data(), bytes);
  const int root = g_size - 1;
  expect(smd_reduce(in.data(), out.data(), n, dt, SMD_SUM, root, w.comm, nullptr) == SMD_SUCCESS &&
             (g_rank != root || same(out, sum)),
         "reduce " + name);

  // alltoall: block p of rank r's input goes to rank p as block r.
  std::vector<unsigned char> a2a_in, a2a_want;
  for (int p = 0; p < g_size; ++p) {
    auto v = host_vector(dt, n, g_rank, size_t(p) * n);
    a2a_in.insert(a2a_in.end(), v.begin(), v.end());
    auto wv = host_vector(dt, n, p, size_t(g_rank) * n);
    a2a_want.insert(a2a_want.end(), wv.begin(), wv.end());
  }
  in.upload(0, a2a_in.data(), a2a_in.size());
  expect(smd_alltoall(in.data(), out.data(), n, dt, w.comm, nullptr) == SMD_SUCCESS &&
             same(out, a2a_want),
         "alltoall " + name);
}

// Rank 0 passes host memory, the others device memory. The staged route
// runs this correctly (each rank stages its own buffers); the device
// routes (SMD_GPU_IPC=1, which reads peers' buffers in place, and
// SMD_GPU_DIRECT=on, where ranks on host memory choose otherwise) make it
// SMD_ERR_MISMATCH on every rank, as docs/GPU.md's contract says. On a
// duplicate of the world: a mismatch leaves its communicator unusable.
void kinds_differing_between_ranks(const World &w) {
  smd_comm_t *comm = dup_comm(w.comm, "kinds differing");
  if (!comm) return;
  const char *ipc = getenv("SMD_GPU_IPC");
  const char *direct = getenv("SMD_GPU_DIRECT");
  const bool device_route =
      (ipc && std::string(ipc) == "1") || (direct && std::string(direct) == "on");
  const size_t n = 257;
  std::vector<float> want(n);
  for (size_t i = 0; i < n; ++i) {
    want[i] = 0;
    for (int r = 0; r < g_size; ++r) want[i] += float(value(r, i));
  }
  std::vector<float> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = float(value(g_rank, i));
  std::unique_ptr<DeviceBuffer> d;
  smd_result_t rc;
  bool right;
  if (g_rank == 0) {
    rc = smd_allreduce(in.data(), out.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr);
    right = out == want;
  } else {
    d = std::make_unique<DeviceBuffer>(w.a, n * 4);
    d->upload(0, in.data(), n * 4);
    rc = smd_allreduce(d->data(), d->data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr);
    right =
        same(*d, std::vector<unsigned char>(reinterpret_cast<unsigned char *>(want.data()),
                                            reinterpret_cast<unsigned char *>(want.data() + n)));
  }
  if (device_route)
    expect(rc == SMD_ERR_MISMATCH,
           "host memory on rank 0, device memory elsewhere: a mismatch on every rank");
  else
    expect(rc == SMD_SUCCESS && right,
           "host memory on rank 0, device memory elsewhere: staged, correct");
  smd_comm_destroy(comm);
}

// Calls that disagree between ranks: SMD_ERR_MISMATCH on every rank, on
// every route (the IPC route compares the calls before it maps a peer's
// buffer). Each on a duplicate of the world, which the mismatch fails.
void disagreeing_calls_fail(const World &w) {
  if (g_size < 2) return;
  const size_t n = 513;
  DeviceBuffer in(w.a, (n + 1) * 4 * size_t(g_size)), out(w.a, (n + 1) * 4 * size_t(g_size));
  const bool first = g_rank == 0;
  const struct {
    const char *what;
    smd_result_t (*call)(void *in, void *out, size_t n, bool first, smd_comm_t *comm);
    bool late = false;  // a root may see it at its next call
  } calls[] = {
      {"allgather counts differing",
       [](void *i, void *o, size_t k, bool f, smd_comm_t *c) {
         return smd_allgather(i, o, f ? k + 1 : k, SMD_FLOAT32, c, nullptr);
       },
       false},
      {"reduce_scatter ops differing",
       [](void *i, void *o, size_t k, bool f, smd_comm_t *c) {
         return smd_reduce_scatter(i, o, k, SMD_FLOAT32, f ? SMD_MAX : SMD_SUM, c, nullptr);
       },
       false},
      {"broadcast roots differing",
       [](void *i, void *o, size_t k, bool f, smd_comm_t *c) {
         return smd_broadcast(i, o, k, SMD_FLOAT32, f ? 0 : 1, c, nullptr);
       },
       true},
      {"reduce on one rank, allreduce on the others",
       [](void *i, void *o, size_t k, bool f, smd_comm_t *c) {
         return f ? smd_reduce(i, o, k, SMD_FLOAT32, SMD_SUM, 0, c, nullptr)
                  : smd_allreduce(i, o, k, SMD_FLOAT32, SMD_SUM, c, nullptr);
       },
       false},
  };
  for (const auto &call : calls) {
    smd_comm_t *comm = dup_comm(w.comm, call.what);
    if (!comm) return;
    smd_result_t rc = call.call(in.data(), out.data(), n, first, comm);
    // A broadcast root may return before its receivers (smd.h): it learns of
    // the disagreement at its next call.
    if (rc == SMD_SUCCESS && call.late) rc = smd_barrier(comm, nullptr);
    expect(rc == SMD_ERR_MISMATCH, std::string(call.what) + ": SMD_ERR_MISMATCH on every rank");
    smd_comm_destroy(comm);
  }
}

// Managed memory on rank 0, which CUDA IPC cannot share: with
// SMD_GPU_IPC=1 every rank sees it in the call's exchange and stages the
// call instead, correctly (no rank maps a peer's buffer: the stand-in
// counts the mappings).
void unshareable_memory_stages(const World &w) {
  const char *ipc = getenv("SMD_GPU_IPC");
  if (g_size < 2 || !ipc || std::string(ipc) != "1") return;
  void *lib = dlopen(cuda_status().library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  using MallocManaged = int (*)(void **, size_t, unsigned);
  auto managed = lib ? reinterpret_cast<MallocManaged>(dlsym(lib, "cudaMallocManaged")) : nullptr;
  auto mappings =
      lib ? reinterpret_cast<Counter>(dlsym(lib, "smd_cuda_standin_ipc_mappings")) : nullptr;
  smd_comm_t *comm = managed ? dup_comm(w.comm, "unshareable memory") : nullptr;
  if (!comm) {
    if (lib) dlclose(lib);
    return;
  }
  const size_t n = 1003;
  std::vector<unsigned char> want(n * 4);
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (int r = 0; r < g_size; ++r) s += value(r, i);
    store(&want[i * 4], SMD_FLOAT32, s);
  }
  std::unique_ptr<DeviceBuffer> plain;
  void *buf = nullptr;
  if (g_rank == 0) {
    expect(managed(&buf, n * 4, 1) == 0, "cudaMallocManaged");  // cudaMemAttachGlobal
  } else {
    plain = std::make_unique<DeviceBuffer>(w.a, n * 4);
    buf = plain->data();
  }
  const std::vector<unsigned char> mine = host_vector(SMD_FLOAT32, n, g_rank);
  std::vector<unsigned char> got(n * 4);
  w.a.MemcpyAsync(buf, mine.data(), n * 4, kCudaMemcpyDefault, nullptr);
  w.a.StreamSynchronize(nullptr);
  const int before = mappings ? mappings() : 0;
  const smd_result_t rc = smd_allreduce(buf, buf, n, SMD_FLOAT32, SMD_SUM, comm, nullptr);
  w.a.MemcpyAsync(got.data(), buf, n * 4, kCudaMemcpyDefault, nullptr);
  w.a.StreamSynchronize(nullptr);
  expect(rc == SMD_SUCCESS && got == want && (!mappings || mappings() == before),
         "managed memory on one rank with SMD_GPU_IPC=1: staged on every rank, correct");
  smd_comm_destroy(comm);
  if (g_rank == 0) w.a.Free(buf);
  dlclose(lib);
}

void bad_input(const World &w) {
  DeviceBuffer d(w.a, 64);
  std::vector<float> h(16);
  expect(smd_allreduce(h.data(), d.data(), 16, SMD_FLOAT32, SMD_SUM, w.comm, nullptr) ==
             SMD_ERR_INVALID_ARGUMENT,
         "host sendbuf with device recvbuf is refused");
}

// Device memory point to point with a NULL stream: host-synchronous, as a
// collective's, alone and in a group; each rank sends to the next.
void device_p2p_null_stream(const World &w) {
  if (g_size < 2) return;
  const size_t n = 1003;
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  std::vector<unsigned char> mine = host_vector(SMD_FLOAT32, n, g_rank),
                             theirs = host_vector(SMD_FLOAT32, n, prev);
  DeviceBuffer send(w.a, n * 4), recv(w.a, n * 4);
  send.upload(0, mine.data(), n * 4);
  smd_request_t *req = nullptr;
  smd_status_t status = SMD_STATUS_INIT;
  expect(smd_isend(send.data(), n, SMD_FLOAT32, next, 7, w.comm, nullptr, &req) == SMD_SUCCESS &&
             smd_recv_status(recv.data(), n, SMD_FLOAT32, SMD_ANY_SOURCE, 7, w.comm, nullptr,
                             &status) == SMD_SUCCESS &&
             smd_request_wait(req) == SMD_SUCCESS && same(recv, theirs),
         "device isend and recv_status on the NULL stream move the data");
  expect(status.source == prev && status.tag == 7 && status.count == n,
         "the status of a device receive names its sender, tag and count");
  smd_request_free(req);
  // Nonblocking both ways: the receive lands in device memory at its wait.
  smd_request_t *rreq = nullptr;
  recv.upload(0, mine.data(), n * 4);  // anything but the expected values
  expect(
      smd_irecv(recv.data(), n, SMD_FLOAT32, prev, 6, w.comm, nullptr, &rreq) == SMD_SUCCESS &&
          smd_isend(send.data(), n, SMD_FLOAT32, next, 6, w.comm, nullptr, &req) == SMD_SUCCESS &&
          smd_request_wait(rreq) == SMD_SUCCESS && smd_request_wait(req) == SMD_SUCCESS &&
          same(recv, theirs),
      "device irecv and isend on the NULL stream move the data by the receive's wait");
  smd_request_free(req);
  smd_request_free(rreq);
  recv.upload(0, mine.data(), n * 4);  // anything but the expected values
  smd_group_start();
  smd_send(send.data(), n, SMD_FLOAT32, next, 8, w.comm, nullptr);
  smd_recv(recv.data(), n, SMD_FLOAT32, prev, 8, w.comm, nullptr);
  expect(smd_group_end() == SMD_SUCCESS && same(recv, theirs),
         "device send and recv in a NULL-stream group move the data by smd_group_end");
  // A receive shorter than the message: SMD_ERR_TRUNCATED there, as with
  // host memory (the sender is not failed: the host rules).
  smd_result_t rs = smd_isend(send.data(), n, SMD_FLOAT32, next, 9, w.comm, nullptr, &req);
  smd_result_t rr = smd_recv(recv.data(), n - 1, SMD_FLOAT32, prev, 9, w.comm, nullptr);
  if (rs == SMD_SUCCESS) rs = smd_request_wait(req);
  smd_request_free(req);
  expect(rr == SMD_ERR_TRUNCATED && rs == SMD_SUCCESS,
         "a device receive shorter than its message is SMD_ERR_TRUNCATED, as on host memory");
}

}  // namespace

// SMD_GPU_IPC=1: each collective that reads peers' buffers in place maps
// them, on a communicator of its own (whose mappings are new), on the ranks
// that read (a broadcast's receivers, a reduce's root; none in an alltoall
// in place, which stages): the host stand-in counts the mappings open.
void ipc_route_taken(const World &w, Counter mappings) {
  const size_t n = 4096;
  DeviceBuffer in(w.a, n * 4 * size_t(g_size)), out(w.a, n * 4 * size_t(g_size));
  const struct {
    const char *name;
    smd_result_t (*call)(void *in, void *out, size_t n, smd_comm_t *comm);
    bool reads;
  } calls[] = {
      {"allreduce",
       [](void *i, void *o, size_t k, smd_comm_t *c) {
         return smd_allreduce(i, o, k, SMD_FLOAT32, SMD_SUM, c, nullptr);
       },
       true},
      {"allgather",
       [](void *i, void *o, size_t k, smd_comm_t *c) {
         return smd_allgather(i, o, k, SMD_FLOAT32, c, nullptr);
       },
       true},
      {"reduce_scatter",
       [](void *i, void *o, size_t k, smd_comm_t *c) {
         return smd_reduce_scatter(i, o, k, SMD_FLOAT32, SMD_SUM, c, nullptr);
       },
       true},
      {"broadcast",
       [](void *i, void *o, size_t k, smd_comm_t *c) {
         return smd_broadcast(i, o, k, SMD_FLOAT32, 0, c, nullptr);
       },
       g_rank != 0},
      {"reduce",
       [](void *i, void *o, size_t k, smd_comm_t *c) {
         return smd_reduce(i, o, k, SMD_FLOAT32, SMD_SUM, 0, c, nullptr);
       },
       g_rank == 0},
      {"alltoall",
       [](void *i, void *o, size_t k, smd_comm_t *c) {
         return smd_alltoall(i, o, k / size_t(g_size), SMD_FLOAT32, c, nullptr);
       },
       true},
      {"alltoall in place (staged)",
       [](void *i, void *, size_t k, smd_comm_t *c) {
         return smd_alltoall(i, i, k / size_t(g_size), SMD_FLOAT32, c, nullptr);
       },
       false},
  };
  for (const auto &call : calls) {
    smd_comm_t *comm = dup_comm(w.comm, call.name);
    if (!comm) return;
    const int before = mappings();
    expect(call.call(in.data(), out.data(), n, comm) == SMD_SUCCESS &&
               (mappings() > before) == call.reads,
           std::string(call.name) + (call.reads ? " read its peers' buffers through CUDA IPC"
                                                : " mapped no peer's buffer (it reads none)"));
    smd_comm_destroy(comm);
  }
}

// Which route device calls took, where the test says (SMD_TEST_ROUTE) and
// the runtime is the host stand-in, which counts kernel launches, event
// records and IPC mappings: the direct route reduces with the kernels, the
// staged one on the host, staging in chunks records an event per chunk (the
// whole-buffer staging none), and the IPC route maps its peers' buffers.
void route_taken(const World &w) {
  const char *route = getenv("SMD_TEST_ROUTE");
  void *lib = dlopen(cuda_status().library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto counter = [&](const char *name) {
    return lib ? reinterpret_cast<Counter>(dlsym(lib, name)) : nullptr;
  };
  auto launches = counter("smd_cuda_standin_kernel_launches");
  auto events = counter("smd_cuda_standin_event_records");
  auto mappings = counter("smd_cuda_standin_ipc_mappings");
  if (route && std::string(route) == "ipc" && mappings && g_size > 1) {
    ipc_route_taken(w, mappings);
    dlclose(lib);
    return;
  }
  // On a fresh duplicate: a communicator that has queued calls on its
  // stream proxy (the nonblocking calls above) records events for its
  // blocking device calls too.
  smd_comm_t *comm = nullptr;
  if (route && launches && events && g_size > 1 && smd_comm_dup(w.comm, &comm) == SMD_SUCCESS) {
    const std::string want(route);
    const size_t n = 4096;
    DeviceBuffer buf(w.a, n * 4);
    const int launched = launches(), recorded = events();
    expect(smd_allreduce(buf.data(), buf.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr) ==
               SMD_SUCCESS,
           "allreduce for the route check");
    const bool on_device = launches() > launched, in_chunks = events() > recorded;
    expect(on_device == (want == "direct") && in_chunks == (want == "pipelined"),
           "the allreduce took the " + want + " route");
    smd_comm_destroy(comm);
  }
  if (lib) dlclose(lib);
}

int main() {
  const CudaApi &a = require_device("gpu-collectives");
  smd_comm_t *comm = init_world(a);
  if (!comm) return 1;
  World w{comm, a};
  for (smd_datatype_t dt : {SMD_FLOAT32, SMD_FLOAT64, SMD_INT32, SMD_BFLOAT16}) run_dtype(w, dt);
  route_taken(w);
  if (g_size > 1) kinds_differing_between_ranks(w);
  disagreeing_calls_fail(w);
  unshareable_memory_stages(w);
  bad_input(w);
  device_p2p_null_stream(w);
  smd_comm_destroy(comm);
  if (g_rank == 0)
    printf("gpu-collectives: %d rank(s), %s\n", g_size, g_failures ? "FAILED" : "passed");
  return g_failures ? 1 : 0;
}
