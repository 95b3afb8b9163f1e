// What of the GPU support can be checked without a GPU: pointer
// classification and its cache over a fake CUDA, the nearest-NIC rule,
// the loader's answers on a machine without a device, and that host
// collectives are unchanged with CUDA looked for. Device-only checks
// skip with the reason.
#include <gtest/gtest.h>
#include <smd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/coll/algorithms/device_staging.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/gpu_topology.h"
#include "core/gpu/kernel_module.h"
#include "core/gpu/pointer_kind.h"

using namespace smd::gpu;

namespace {

// A fake CUDA: allocations at made-up addresses, counting the questions.
struct FakeAllocation {
  uintptr_t base;
  size_t size;
  PointerKind kind;
  int device;
};
std::vector<FakeAllocation> g_allocations;
int g_fail_queries = 0;

int fake_query(const void *p, PointerInfo *info) {
  if (g_fail_queries) return 1;  // cudaErrorInvalidValue
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (const auto &f : g_allocations)
    if (a >= f.base && a < f.base + f.size) {
      info->kind = f.kind;
      info->device = f.device;
      return 0;
    }
  info->kind = PointerKind::kHost;
  return 0;
}

bool fake_range(const void *p, uintptr_t *base, size_t *size) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (const auto &f : g_allocations)
    if (a >= f.base && a < f.base + f.size) {
      *base = f.base;
      *size = f.size;
      return true;
    }
  return false;
}

const void *at(uintptr_t a) { return reinterpret_cast<const void *>(a); }

class PointerClassifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fail_queries = 0;
    g_allocations = {{0x7000000000, 1 << 20, PointerKind::kDevice, 0},
                     {0x7100000000, 4096, PointerKind::kManaged, 1},
                     {0x7200000000, 8192, PointerKind::kPinnedHost, -1}};
  }
  PointerClassifier c{PointerOracle{fake_query, fake_range}};
};

TEST_F(PointerClassifierTest, KindsAndDevices) {
  EXPECT_EQ(c.classify(at(0x7000000010)).kind, PointerKind::kDevice);
  EXPECT_EQ(c.classify(at(0x7000000010)).device, 0);
  PointerInfo m = c.classify(at(0x7100000000));
  EXPECT_EQ(m.kind, PointerKind::kManaged);
  EXPECT_EQ(m.device, 1);
  EXPECT_TRUE(on_device(m.kind));
  EXPECT_EQ(c.classify(at(0x7200000100)).kind, PointerKind::kPinnedHost);
  EXPECT_FALSE(on_device(PointerKind::kPinnedHost));
  int local = 0;
  EXPECT_EQ(c.classify(&local).kind, PointerKind::kHost);
  EXPECT_STREQ(pointer_kind_name(PointerKind::kManaged), "managed");
}

TEST_F(PointerClassifierTest, OneQueryPerAllocation) {
  // Any pointer inside a known allocation is answered from the cache.
  PointerInfo first = c.classify(at(0x7000000000));
  EXPECT_EQ(first.base, 0x7000000000u);
  EXPECT_EQ(first.size, size_t(1 << 20));
  for (uintptr_t off = 0; off < (1 << 20); off += 4096) c.classify(at(0x7000000000 + off));
  EXPECT_EQ(c.queries(), 1u);
  // Just past its end is another question.
  EXPECT_EQ(c.classify(at(0x7000000000 + (1 << 20))).kind, PointerKind::kHost);
  EXPECT_EQ(c.queries(), 2u);
}

TEST_F(PointerClassifierTest, HostPointersCachedByAddress) {
  std::vector<char> buf(64);
  c.classify(buf.data());
  c.classify(buf.data());
  EXPECT_EQ(c.queries(), 1u);
  c.classify(buf.data() + 1);  // no extent is known for plain host memory
  EXPECT_EQ(c.queries(), 2u);
}

TEST_F(PointerClassifierTest, FullCacheReplacesRoundRobin) {
  for (int i = 0; i < PointerClassifier::kEntries; ++i) c.classify(at(0x1000 + 16 * i));
  EXPECT_EQ(c.queries(), uint64_t(PointerClassifier::kEntries));
  c.classify(at(0x7000000000));  // replaces the oldest, 0x1000
  c.classify(at(0x1010));        // still cached
  EXPECT_EQ(c.queries(), uint64_t(PointerClassifier::kEntries) + 1);
  c.classify(at(0x1000));
  EXPECT_EQ(c.queries(), uint64_t(PointerClassifier::kEntries) + 2);
}

TEST_F(PointerClassifierTest, CudaErrorIsReportedAndNotCached) {
  g_fail_queries = 1;
  PointerInfo refused = c.classify(at(0x7000000000));
  EXPECT_EQ(refused.cuda_error, 1);
  EXPECT_FALSE(on_device(refused.kind));
  g_fail_queries = 0;
  PointerInfo known = c.classify(at(0x7000000000));
  EXPECT_EQ(known.kind, PointerKind::kDevice);
  EXPECT_EQ(known.cuda_error, 0);
}

TEST(GpuTopology, NearestDeviceByPciTree) {
  const std::string gpu = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0";
  std::vector<PciDevice> nics = {
      {"far", "/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0"},
      {"switch", "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:03:00.0"},
      {"other_root", "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0"},
  };
  int hops = 0;
  EXPECT_EQ(nearest_device(gpu, nics, &hops), "switch");
  EXPECT_EQ(hops, 2);
  EXPECT_EQ(nearest_device(gpu, {nics[2]}, &hops), "");
  EXPECT_EQ(hops, -1);
  EXPECT_EQ(nearest_device(gpu, {}, &hops), "");
}

TEST(GpuTopology, NetworkDevicesHavePciPaths) {
  for (const auto &d : pci_network_devices()) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_NE(d.path.find("/pci"), std::string::npos) << d.name;
  }
}

TEST(CudaLoader, StatusIsClear) {
  const CudaStatus &s = cuda_status();
  if (s.devices > 0) {
    EXPECT_TRUE(s.loaded);
    EXPECT_TRUE(s.reason.empty());
    GTEST_SKIP() << "a CUDA device is present (" << s.devices
                 << "): the no-device answers are not checked";
  }
  // No device: the reason says so and names what CUDA answered.
  EXPECT_FALSE(s.reason.empty());
  if (s.loaded) EXPECT_NE(s.reason.find("no CUDA device"), std::string::npos) << s.reason;
  else EXPECT_NE(s.reason.find("CUDA runtime"), std::string::npos) << s.reason;
  std::string why;
  EXPECT_TRUE(list_gpus(&why).empty());
  EXPECT_EQ(why, s.reason);
  // Without a device, the kernel module is not opened, and says why.
  EXPECT_EQ(kernel_module().table, nullptr);
  EXPECT_FALSE(kernel_module().reason.empty());
}

TEST(CudaLoader, HostProcessDoesNotUseCuda) {
  // This test program never loads the CUDA driver itself; with SMD_CUDA
  // unset (auto) smd must not count it as a CUDA process, so host
  // pointers are classified without any question to CUDA.
  if (getenv("SMD_CUDA")) GTEST_SKIP() << "SMD_CUDA is set in the environment";
  if (cuda_status().devices > 0)
    GTEST_SKIP() << "a CUDA device is present: auto may well be active";
  EXPECT_FALSE(cuda_active());
  int x = 0;
  EXPECT_EQ(classify_pointer(&x).kind, PointerKind::kHost);
}

TEST(CudaLoader, DeviceOnly) {
  if (cuda_status().devices == 0) GTEST_SKIP() << cuda_status().reason;
  std::string why;
  auto gpus = list_gpus(&why);
  ASSERT_EQ(int(gpus.size()), cuda_status().devices);
  EXPECT_FALSE(gpus[0].pci_bus_id.empty());
}

// What the staged route copies in and out, and how in-place calls share
// one host block.
TEST(DeviceStaging, Shapes) {
  alignas(16) static char buf[4096];
  smd::CollArgs a;
  a.datatype = SMD_FLOAT32;
  a.count = 10;
  a.kind = smd::CollKind::kAllreduce;
  a.sendbuf = buf;
  a.recvbuf = buf + 1024;
  smd::StagedShape s = smd::staged_shape(a, 0, 4);
  EXPECT_EQ(s.send_bytes, 40u);
  EXPECT_EQ(s.recv_bytes, 40u);
  EXPECT_FALSE(s.overlap);

  a.recvbuf = buf;  // in place
  s = smd::staged_shape(a, 0, 4);
  EXPECT_TRUE(s.overlap);
  EXPECT_EQ(s.block, 40u);
  EXPECT_EQ(s.send_at, 0u);
  EXPECT_EQ(s.recv_at, 0u);

  a.kind = smd::CollKind::kAllgather;  // rank 2's input is block 2 of the output
  a.sendbuf = buf + 80;
  s = smd::staged_shape(a, 2, 4);
  EXPECT_EQ(s.send_bytes, 40u);
  EXPECT_EQ(s.recv_bytes, 160u);
  EXPECT_TRUE(s.overlap);
  EXPECT_EQ(s.block, 160u);
  EXPECT_EQ(s.send_at, 80u);
  EXPECT_EQ(s.recv_at, 0u);

  a.kind = smd::CollKind::kReduceScatter;  // the output is block 1 of the input
  a.sendbuf = buf;
  a.recvbuf = buf + 40;
  s = smd::staged_shape(a, 1, 4);
  EXPECT_EQ(s.send_bytes, 160u);
  EXPECT_EQ(s.recv_bytes, 40u);
  EXPECT_TRUE(s.overlap);
  EXPECT_EQ(s.recv_at, 40u);
  EXPECT_EQ(s.block, 160u);

  a.kind = smd::CollKind::kBroadcast;
  a.root = 0;
  a.recvbuf = buf + 2048;
  EXPECT_EQ(smd::staged_shape(a, 1, 4).send_bytes, 0u);  // only the root sends
  EXPECT_EQ(smd::staged_shape(a, 0, 4).send_bytes, 40u);

  a.kind = smd::CollKind::kReduce;
  a.recvbuf = nullptr;  // not the root
  s = smd::staged_shape(a, 1, 4);
  EXPECT_EQ(s.recv_bytes, 0u);
  EXPECT_FALSE(s.overlap);

  a.kind = smd::CollKind::kAlltoall;
  a.recvbuf = buf + 2048;
  s = smd::staged_shape(a, 0, 4);
  EXPECT_EQ(s.send_bytes, 160u);
  EXPECT_EQ(s.recv_bytes, 160u);
}

// A one-rank world: host collectives behave as before whatever SMD_CUDA
// says (the world is formed anew under each setting in its own process:
// see meson.build, which runs this test with SMD_CUDA=on and =off too).
TEST(HostPath, AllreduceUnchanged) {
  smd_comm_t *world = nullptr;
  ASSERT_EQ(smd_comm_init(nullptr, &world), SMD_SUCCESS) << smd_last_error();
  std::vector<float> in(1000, 1.5f), out(1000, 0.0f);
  EXPECT_EQ(smd_allreduce(in.data(), out.data(), in.size(), SMD_FLOAT32, SMD_SUM, world, nullptr),
            SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(out[999], 1.5f);
  // A stream without CUDA in use: not supported, with a reason (with CUDA
  // in use the stream is CUDA's to judge: gpu_streams_test.cc).
  if (!smd::gpu::cuda_active()) {
    int fake_stream = 0;
    EXPECT_EQ(
        smd_allreduce(in.data(), out.data(), in.size(), SMD_FLOAT32, SMD_SUM, world, &fake_stream),
        SMD_ERR_NOT_SUPPORTED);
    EXPECT_NE(std::string(smd_last_error()).find("stream"), std::string::npos) << smd_last_error();
  }
  EXPECT_EQ(smd_comm_destroy(world), SMD_SUCCESS);
}

}  // namespace
