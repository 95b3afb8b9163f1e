// smd's device code paths over the host stand-in for CUDA (cuda_standin/,
// suite gpu-standin, two stand-in devices): classification of real
// allocations of every kind, freed memory and copies past an allocation's
// end as clear errors, the staged route's ordering after the blocking
// streams' earlier work (on the buffers' device, also from the worker
// thread of a nonblocking call), a stream-ordered call on the stream's
// device, the device operations and a kernel's fault. These check smd's logic against CUDA's
// documented behaviour as the stand-in plays it, not CUDA itself.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <smd.h>

#include <string>
#include <vector>

#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/kernel_module.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/error.h"
#include "smd_cuda_standin.h"

using namespace smd::gpu;

namespace {

// The stand-in's entry points smd does not resolve itself.
struct Extra {
  int (*MallocManaged)(void **, size_t, unsigned);
  int (*HostRegister)(void *, size_t, unsigned);
  int (*HostUnregister)(void *);
  int (*delay)(void *, unsigned);
  int (*live)(int);
};

class StandinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(cuda_api(), nullptr) << cuda_status().reason;
    ASSERT_NE(cuda_status().library.find("standin"), std::string::npos)
        << "run through meson (suite gpu-standin), which points SMD_CUDA_LIBRARY at the stand-in";
    ASSERT_EQ(cuda_status().devices, 2) << "meson runs this test with SMD_CUDA_STANDIN_DEVICES=2";
    a = cuda_api();
    void *lib = dlopen(cuda_status().library.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib, nullptr);
    x.MallocManaged = reinterpret_cast<decltype(x.MallocManaged)>(dlsym(lib, "cudaMallocManaged"));
    x.HostRegister = reinterpret_cast<decltype(x.HostRegister)>(dlsym(lib, "cudaHostRegister"));
    x.HostUnregister =
        reinterpret_cast<decltype(x.HostUnregister)>(dlsym(lib, "cudaHostUnregister"));
    x.delay = reinterpret_cast<decltype(x.delay)>(dlsym(lib, "smd_cuda_standin_delay"));
    x.live = reinterpret_cast<decltype(x.live)>(dlsym(lib, "smd_cuda_standin_live_allocations"));
    dlclose(lib);
    ASSERT_EQ(a->SetDevice(0), 0);
    ASSERT_EQ(smd_comm_init(nullptr, &world), SMD_SUCCESS) << smd_last_error();
  }
  void TearDown() override {
    if (world) smd_comm_destroy(world);
    if (a) a->SetDevice(0);
  }
  void *dev(size_t bytes) {
    void *p = nullptr;
    EXPECT_EQ(a->Malloc(&p, bytes), 0);
    return p;
  }
  void put(void *dst, const void *src, size_t bytes, void *stream = nullptr) {
    ASSERT_EQ(a->MemcpyAsync(dst, src, bytes, kCudaMemcpyDefault, stream), 0);
    ASSERT_EQ(a->StreamSynchronize(stream), 0);
  }
  std::vector<float> get(const void *src, size_t n) {
    std::vector<float> v(n);
    EXPECT_EQ(a->MemcpyAsync(v.data(), src, n * 4, kCudaMemcpyDefault, nullptr), 0);
    EXPECT_EQ(a->StreamSynchronize(nullptr), 0);
    return v;
  }
  const CudaApi *a = nullptr;
  Extra x{};
  smd_comm_t *world = nullptr;
};

TEST_F(StandinTest, ClassifiesEveryKindOfAllocation) {
  EXPECT_TRUE(cuda_active());  // SMD_CUDA=auto: the stand-in plays the driver
  void *d = dev(4096);
  PointerInfo di = classify_pointer(static_cast<char *>(d) + 100);
  EXPECT_EQ(di.kind, PointerKind::kDevice);
  EXPECT_EQ(di.device, 0);
  EXPECT_EQ(di.base, reinterpret_cast<uintptr_t>(d));  // cuMemGetAddressRange
  EXPECT_EQ(di.size, 4096u);

  ASSERT_EQ(a->SetDevice(1), 0);
  void *m = nullptr;
  ASSERT_EQ(x.MallocManaged(&m, 256, 1), 0);
  PointerInfo mi = classify_pointer(m);
  EXPECT_EQ(mi.kind, PointerKind::kManaged);
  EXPECT_EQ(mi.device, 1);
  EXPECT_TRUE(on_device(mi.kind));
  ASSERT_EQ(a->SetDevice(0), 0);

  void *pinned = nullptr;
  ASSERT_EQ(a->MallocHost(&pinned, 512), 0);
  EXPECT_EQ(classify_pointer(pinned).kind, PointerKind::kPinnedHost);
  std::vector<char> registered(8192), plain(64);
  ASSERT_EQ(x.HostRegister(registered.data(), registered.size(), 0), 0);
  EXPECT_EQ(classify_pointer(registered.data() + 10).kind, PointerKind::kPinnedHost);
  EXPECT_EQ(classify_pointer(plain.data()).kind, PointerKind::kHost);
  EXPECT_EQ(classify_pointer(plain.data()).cuda_error, 0);
  EXPECT_EQ(x.HostUnregister(registered.data()), 0);
  EXPECT_EQ(a->Free(d), 0);
  EXPECT_EQ(a->Free(m), 0);
  EXPECT_EQ(a->FreeHost(pinned), 0);
}

TEST_F(StandinTest, FreedDeviceMemoryIsAClearError) {
  void *d = dev(4096);
  ASSERT_EQ(a->Free(d), 0);
  // Never classified while it lived: CUDA refuses it, smd says so.
  EXPECT_NE(classify_pointer(d).cuda_error, 0);
  EXPECT_EQ(smd_allreduce(d, d, 16, SMD_FLOAT32, SMD_SUM, world, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("CUDA does not know"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_send(d, 16, SMD_FLOAT32, 0, 0, world, nullptr), SMD_ERR_INVALID_ARGUMENT);
  // A refused buffer does not spoil the communicator.
  std::vector<float> in(16, 2.0f), out(16);
  EXPECT_EQ(smd_allreduce(in.data(), out.data(), 16, SMD_FLOAT32, SMD_SUM, world, nullptr),
            SMD_SUCCESS)
      << smd_last_error();
}

TEST_F(StandinTest, DeviceMemoryFreedAfterUseIsCudasError) {
  float *d = static_cast<float *>(dev(4096));
  EXPECT_EQ(smd_allreduce(d, d, 16, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_SUCCESS)
      << smd_last_error();
  ASSERT_EQ(a->Free(d), 0);
  // The classifier's cache still says device: the staged copy fails with
  // CUDA's error, and the communicator is poisoned as after any failure
  // half-way.
  EXPECT_EQ(smd_allreduce(d, d, 16, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_ERR_SYSTEM);
  EXPECT_NE(std::string(smd_last_error()).find("cudaMemcpyAsync"), std::string::npos)
      << smd_last_error();
}

TEST_F(StandinTest, CountPastTheAllocationIsCudasError) {
  void *d = dev(64);
  EXPECT_EQ(smd_allreduce(d, d, 1000, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_ERR_SYSTEM);
  EXPECT_NE(std::string(smd_last_error()).find("invalid argument"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(a->Free(d), 0);
}

// The staged route copies its input on the legacy default stream, which
// waits for earlier work of the device's blocking streams: an input still
// being written there (after a pause) must be the one reduced.
void staged_waits_for_blocking_stream(const CudaApi *a, const Extra &x, smd_comm_t *world,
                                      int device, bool nonblocking_call) {
  ASSERT_EQ(a->SetDevice(device), 0);
  const size_t n = 1 << 16;
  float *in = nullptr, *out = nullptr;
  ASSERT_EQ(a->Malloc(reinterpret_cast<void **>(&in), n * 4), 0);
  ASSERT_EQ(a->Malloc(reinterpret_cast<void **>(&out), n * 4), 0);
  std::vector<float> old_values(n, 1.0f), new_values(n, 5.0f);
  ASSERT_EQ(a->MemcpyAsync(in, old_values.data(), n * 4, kCudaMemcpyDefault, nullptr), 0);
  ASSERT_EQ(a->StreamSynchronize(nullptr), 0);
  void *s = nullptr;
  ASSERT_EQ(a->StreamCreateWithFlags(&s, 0), 0);  // blocking
  ASSERT_EQ(x.delay(s, 100000), 0);
  ASSERT_EQ(a->MemcpyAsync(in, new_values.data(), n * 4, kCudaMemcpyDefault, s), 0);
  // The call comes from device 0's thread: smd makes the buffers' device
  // current itself.
  ASSERT_EQ(a->SetDevice(0), 0);
  if (nonblocking_call) {
    smd_request_t *req = nullptr;
    ASSERT_EQ(smd_iallreduce(in, out, n, SMD_FLOAT32, SMD_SUM, world, nullptr, &req), SMD_SUCCESS);
    ASSERT_EQ(smd_request_wait(req), SMD_SUCCESS) << smd_last_error();
    smd_request_free(req);
  } else {
    ASSERT_EQ(smd_allreduce(in, out, n, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_SUCCESS)
        << smd_last_error();
  }
  // Host-synchronous: the output is in place when the call returns, even
  // for a reader on a non-blocking stream (no implicit wait).
  void *reader = nullptr;
  ASSERT_EQ(a->StreamCreateWithFlags(&reader, kCudaStreamNonBlocking), 0);
  std::vector<float> got(n);
  ASSERT_EQ(a->MemcpyAsync(got.data(), out, n * 4, kCudaMemcpyDefault, reader), 0);
  ASSERT_EQ(a->StreamSynchronize(reader), 0);
  EXPECT_EQ(got.front(), 5.0f);
  EXPECT_EQ(got.back(), 5.0f);
  EXPECT_EQ(a->StreamDestroy(s), 0);
  EXPECT_EQ(a->StreamDestroy(reader), 0);
  EXPECT_EQ(a->Free(in), 0);
  EXPECT_EQ(a->Free(out), 0);
}

TEST_F(StandinTest, StagingWaitsForBlockingStreams) {
  staged_waits_for_blocking_stream(a, x, world, 0, false);
}

TEST_F(StandinTest, StagingUsesTheBuffersDevice) {
  staged_waits_for_blocking_stream(a, x, world, 1, false);
}

TEST_F(StandinTest, NonblockingStagingUsesTheBuffersDevice) {
  staged_waits_for_blocking_stream(a, x, world, 1, true);
}

TEST_F(StandinTest, ManagedAndPinnedBuffers) {
  const size_t n = 1000;
  void *m = nullptr, *p = nullptr;
  ASSERT_EQ(x.MallocManaged(&m, n * 4, 1), 0);
  ASSERT_EQ(a->MallocHost(&p, n * 4), 0);
  std::vector<float> v(n, 3.0f);
  put(m, v.data(), n * 4);
  EXPECT_EQ(smd_allreduce(m, m, n, SMD_FLOAT32, SMD_MAX, world, nullptr), SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(get(m, n).back(), 3.0f);
  // Pinned host memory is host memory: no staging, and it mixes with
  // plain host memory.
  EXPECT_EQ(smd_allreduce(v.data(), p, n, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(static_cast<float *>(p)[n - 1], 3.0f);
  EXPECT_EQ(smd_allreduce(m, v.data(), n, SMD_FLOAT32, SMD_SUM, world, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a->Free(m), 0);
  EXPECT_EQ(a->FreeHost(p), 0);
}

TEST_F(StandinTest, PinnedStagingMemoryIsKept) {
  const int before = x.live(1);
  for (size_t n : {size_t(10), size_t(1000), size_t(100000), size_t(50)}) {
    void *d = dev(n * 4);
    EXPECT_EQ(smd_allreduce(d, d, n, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_SUCCESS)
        << smd_last_error();
    EXPECT_EQ(a->Free(d), 0);
  }
  // One block per calling thread, grown in place of the old one.
  EXPECT_LE(x.live(1), before + 1);
  EXPECT_EQ(x.live(2), 0);  // no device memory left behind
}

// A stream-ordered call with the stream and the buffers on device 1: the
// proxy (the communicator's worker thread, whose current device is 0)
// waits for the stream's earlier work, stages on a stream of device 1, and
// the stream's later work sees the result. Host memory with a stream runs
// after the stream's earlier work, host-synchronously.
TEST_F(StandinTest, StreamOrderedCallsOnTheStreamsDevice) {
  ASSERT_EQ(a->SetDevice(1), 0);
  void *s = nullptr;
  ASSERT_EQ(a->StreamCreateWithFlags(&s, 0), 0);
  const size_t n = 1000;
  void *in = dev(n * 4), *out = dev(n * 4);
  std::vector<float> zeros(n, 0.0f), ones(n, 1.5f), got(n, -1.0f);
  put(in, zeros.data(), n * 4);
  put(out, zeros.data(), n * 4);
  ASSERT_EQ(x.delay(s, 30000), 0);
  ASSERT_EQ(a->MemcpyAsync(in, ones.data(), n * 4, kCudaMemcpyDefault, s), 0);
  EXPECT_EQ(smd_allreduce(in, out, n, SMD_FLOAT32, SMD_SUM, world, s), SMD_SUCCESS)
      << smd_last_error();
  ASSERT_EQ(a->MemcpyAsync(got.data(), out, n * 4, kCudaMemcpyDefault, s), 0);
  ASSERT_EQ(a->StreamSynchronize(s), 0);
  EXPECT_EQ(got, ones) << "the stream-ordered allreduce on device 1";

  std::vector<float> host_in(n, 0.0f), host_out(n, -1.0f);
  ASSERT_EQ(x.delay(s, 30000), 0);
  ASSERT_EQ(a->MemcpyAsync(host_in.data(), ones.data(), n * 4, kCudaMemcpyDefault, s), 0);
  EXPECT_EQ(smd_allreduce(host_in.data(), host_out.data(), n, SMD_FLOAT32, SMD_SUM, world, s),
            SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(host_out, ones) << "host memory with a stream, after the stream's earlier work";

  // alltoallv on the stream: one rank's block to itself.
  const size_t counts[1] = {16};
  put(out, zeros.data(), n * 4);
  EXPECT_EQ(smd_alltoallv(in, counts, nullptr, out, counts, nullptr, SMD_FLOAT32, world, s),
            SMD_SUCCESS)
      << smd_last_error();
  ASSERT_EQ(a->StreamSynchronize(s), 0);
  std::vector<float> want(n, 0.0f);
  std::fill(want.begin(), want.begin() + 16, 1.5f);
  EXPECT_EQ(get(out, n), want) << "alltoallv on the stream";
  // Device memory point to point on the NULL stream: staged through host
  // copies, host-synchronous (the receive lands on the buffer's device 1).
  void *landed = dev(16 * 4);
  smd_request_t *sreq = nullptr;
  EXPECT_EQ(smd_isend(in, 16, SMD_FLOAT32, 0, 0, world, nullptr, &sreq), SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(smd_recv(landed, 16, SMD_FLOAT32, 0, 0, world, nullptr), SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(smd_request_wait(sreq), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(smd_request_free(sreq), SMD_SUCCESS);
  EXPECT_EQ(get(landed, 16), std::vector<float>(16, 1.5f)) << "a NULL-stream device send to self";
  EXPECT_EQ(a->Free(landed), 0);
  // A group's calls name one stream, or it does not run.
  ASSERT_EQ(smd_group_start(), SMD_SUCCESS);
  EXPECT_EQ(smd_allreduce(in, out, n, SMD_FLOAT32, SMD_SUM, world, s), SMD_SUCCESS);
  EXPECT_EQ(smd_allreduce(in, out, n, SMD_FLOAT32, SMD_SUM, world, nullptr), SMD_SUCCESS);
  EXPECT_EQ(smd_group_end(), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("must name the same one"), std::string::npos)
      << smd_last_error();
  // A send to self and its receive, grouped on the stream (ungrouped, the
  // send would wait for a receive queued behind it): the stream's later
  // work sees the message.
  std::vector<float> twos(n, 2.0f), back(n, 0.0f);
  ASSERT_EQ(x.delay(s, 30000), 0);
  ASSERT_EQ(a->MemcpyAsync(in, twos.data(), n * 4, kCudaMemcpyDefault, s), 0);
  smd_request_t *recv = nullptr;
  ASSERT_EQ(smd_group_start(), SMD_SUCCESS);
  EXPECT_EQ(smd_irecv(out, n, SMD_FLOAT32, 0, 3, world, s, &recv), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(smd_send(in, n, SMD_FLOAT32, 0, 3, world, s), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(smd_group_end(), SMD_SUCCESS) << smd_last_error();
  ASSERT_EQ(a->MemcpyAsync(back.data(), out, n * 4, kCudaMemcpyDefault, s), 0);
  ASSERT_EQ(a->StreamSynchronize(s), 0);
  EXPECT_EQ(smd_request_wait(recv), SMD_SUCCESS) << smd_last_error();
  smd_request_free(recv);
  EXPECT_EQ(back, twos) << "a grouped stream-ordered send to self, on device 1";
  EXPECT_EQ(a->StreamDestroy(s), 0);
  EXPECT_EQ(a->Free(in), 0);
  EXPECT_EQ(a->Free(out), 0);
}

TEST_F(StandinTest, DeviceOperations) {
  const size_t n = 333;
  float *x0 = static_cast<float *>(dev(n * 4)), *x1 = static_cast<float *>(dev(n * 4));
  float *y = static_cast<float *>(device_alloc(n * 4));
  std::vector<float> v0(n, 1.5f), v1(n, 2.0f);
  put(x0, v0.data(), n * 4);
  put(x1, v1.data(), n * 4);
  device_reduce2(y, x0, x1, n, SMD_FLOAT32, SMD_SUM);
  EXPECT_EQ(get(y, n).back(), 3.5f);
  device_divide(y, n, SMD_FLOAT32, 2);
  EXPECT_EQ(get(y, n).front(), 1.75f);
  device_copy(x0, y, n * 4);
  EXPECT_EQ(get(x0, n)[n / 2], 1.75f);
  // A kernel given host memory faults on the device: CUDA's error, thrown.
  std::vector<float> host(n);
  try {
    device_reduce2(host.data(), x0, x1, n, SMD_FLOAT32, SMD_SUM);
    ADD_FAILURE() << "a kernel on host memory succeeded";
  } catch (const smd::Error &e) {
    EXPECT_EQ(e.code(), SMD_ERR_SYSTEM);
    EXPECT_NE(e.message().find("illegal memory access"), std::string::npos) << e.message();
  }
  // Misaligned input: the kernel refuses it at launch.
  try {
    device_reduce2(y, reinterpret_cast<char *>(x0) + 1, x1, 4, SMD_FLOAT32, SMD_SUM);
    ADD_FAILURE() << "a misaligned input was accepted";
  } catch (const smd::Error &e) {
    EXPECT_NE(e.message().find("reduce kernel"), std::string::npos) << e.message();
  }
  device_release(y);
  EXPECT_EQ(a->Free(x0), 0);
  EXPECT_EQ(a->Free(x1), 0);
}

}  // namespace
