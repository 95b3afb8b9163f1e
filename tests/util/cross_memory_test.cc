// Cross-memory reads (src/core/comm/cross_memory.h) against real
// processes: a copy of a child's memory, reads that stop at an unmapped
// page, and a child killed before the read, which must be an
// SMD_ERR_PEER_FAILURE naming the peer, never a crash.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/comm/cross_memory.h"
#include "core/util/error.h"

using namespace smd;

namespace {

// A child holding `bytes` of a known pattern at the same address as in
// the parent (fork copies the address space), until killed.
struct Holder {
  explicit Holder(size_t bytes) : data(bytes) {
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
    pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
  }
  ~Holder() { stop(); }
  void stop() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
  uint64_t address() const { return reinterpret_cast<uintptr_t>(data.data()); }
  std::vector<uint8_t> data;
  pid_t pid = -1;
};

// Whether this machine lets a process read a sibling's memory at all (it
// reads its child's here; Yama's ptrace_scope 1 allows that much only).
bool can_read(pid_t pid, uint64_t address) {
  uint8_t b;
  return cross_memory_read(pid, address, &b, 1) == 0;
}

TEST(CrossMemory, CopiesAChildsBufferAtAnyLength) {
  Holder h((size_t(8) << 20) + 13);
  if (!can_read(h.pid, h.address())) GTEST_SKIP() << "cross-memory reads are not allowed here";
  for (size_t len : {size_t(0), size_t(1), size_t(4095), size_t(65537), h.data.size()}) {
    std::vector<uint8_t> got(len + 1, 0xEE);
    cross_memory_copy(h.pid, h.address(), got.data(), len, "test", "rank 1");
    EXPECT_EQ(memcmp(got.data(), h.data.data(), len), 0) << len;
    EXPECT_EQ(got[len], 0xEE) << "wrote past the end at " << len;
  }
}

TEST(CrossMemory, AReadThatReachesUnmappedMemoryFails) {
  // Two pages, the second unmapped: the kernel copies the first and
  // reports it (a partial read), the continuation finds the hole.
  long page = sysconf(_SC_PAGESIZE);
  void *map =
      mmap(nullptr, size_t(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  memset(map, 0x5A, size_t(page));
  ASSERT_EQ(munmap(static_cast<uint8_t *>(map) + page, size_t(page)), 0);
  std::vector<uint8_t> got(size_t(2 * page), 0);
  uint64_t at = reinterpret_cast<uintptr_t>(map);
  EXPECT_EQ(cross_memory_read(getpid(), at, got.data(), size_t(2 * page)), EFAULT);
  EXPECT_EQ(got[size_t(page) - 1], 0x5A) << "the readable part was not copied";
  try {
    cross_memory_copy(getpid(), at, got.data(), size_t(2 * page), "allgather", "rank 3");
    ADD_FAILURE() << "read unmapped memory";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), SMD_ERR_PEER_FAILURE);
    EXPECT_NE(e.message().find("allgather: rank 3"), std::string::npos) << e.message();
  }
  munmap(map, size_t(page));
}

TEST(CrossMemory, AKilledPeerIsAPeerFailureNamingIt) {
  Holder h(1 << 20);
  if (!can_read(h.pid, h.address())) GTEST_SKIP() << "cross-memory reads are not allowed here";
  pid_t dead = h.pid;
  h.stop();
  std::vector<uint8_t> got(h.data.size());
  try {
    cross_memory_copy(dead, h.address(), got.data(), got.size(), "broadcast", "rank 2");
    ADD_FAILURE() << "read a dead process";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), SMD_ERR_PEER_FAILURE) << e.message();
    EXPECT_NE(e.message().find("broadcast: rank 2"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("No such process"), std::string::npos) << e.message();
  }
}

TEST(CrossMemory, DeniedReadsSayWhy) {
  EXPECT_NE(cross_memory_denied(EPERM).find("ptrace_scope"), std::string::npos);
  EXPECT_NE(cross_memory_denied(ENOSYS).find("seccomp"), std::string::npos);
}

}  // namespace
