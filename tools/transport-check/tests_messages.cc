// Tagged messages of every size: small round trips, empty messages, large
// transfers.
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "pattern.h"
#include "registry.h"
#include "system_info.h"

namespace tcheck {

void test_pingpong(Env &e) {
  std::vector<size_t> sizes = {1, 3, 1000, 4097, 12345};
  for (size_t s = 1; s <= 65536; s *= 2) sizes.push_back(s);
  std::vector<unsigned char> out(65536), in(65536);
  int pair = 0;
  char what[160];
  // Pairs in one global order, so no rank waits on one that is busy
  // with a pair later in the order.
  for (int a = 0; a < e.nranks; ++a)
    for (int b = a + 1; b < e.nranks; ++b, ++pair) {
      if (e.rank != a && e.rank != b) continue;
      int other = e.rank == a ? b : a;
      for (size_t k = 0; k < sizes.size(); ++k) {
        size_t n = sizes[k];
        uint64_t tag = e.tag(uint64_t(pair) * 64 + k);
        pattern_fill(out.data(), n, pattern_seed(e.rank, tag, 0));
        snprintf(what, sizeof what, "%zu-byte message from rank %d", n, other);
        if (e.rank == a) {
          void *r = e.irecv(other, in.data(), n, tag);
          e.expect_ok(e.isend(other, out.data(), n, tag), "send");
          Completion c = e.expect_ok(r, what);
          if (c.size != n) e.fail("%s: received %zu B", what, c.size);
        } else {
          Completion c = e.expect_ok(e.irecv(other, in.data(), n, tag), what);
          if (c.size != n) e.fail("%s: received %zu B", what, c.size);
          e.expect_ok(e.isend(other, out.data(), n, tag), "send");
        }
        e.check_pattern(in.data(), n, pattern_seed(other, tag, 0), what);
      }
    }
}

void test_zero_byte(Env &e) {
  struct Pending {
    void *req;
    int peer;
    bool with_buffer;
  };
  std::vector<Pending> recvs, sends;
  std::vector<unsigned char> guard(size_t(e.nranks) * 16, 0xab);
  unsigned char dummy = 0;
  for (int p = 0; p < e.nranks; ++p) {
    if (p == e.rank) continue;
    recvs.push_back({e.irecv(p, nullptr, 0, e.tag(1)), p, false});
    recvs.push_back({e.irecv(p, &guard[size_t(p) * 16], 16, e.tag(2)), p, true});
  }
  for (int p = 0; p < e.nranks; ++p) {
    if (p == e.rank) continue;
    sends.push_back({e.isend(p, nullptr, 0, e.tag(1)), p, false});
    sends.push_back({e.isend(p, &dummy, 0, e.tag(2)), p, true});
  }
  for (const Pending &s : sends) e.expect_ok(s.req, "0-byte send");
  char what[120];
  for (const Pending &r : recvs) {
    snprintf(what, sizeof what, "0-byte message from rank %d into a %s", r.peer,
             r.with_buffer ? "16-byte buffer" : "NULL buffer");
    Completion c = e.expect_ok(r.req, what);
    if (c.size != 0) e.fail("%s: reported %zu bytes", what, c.size);
  }
  for (unsigned char b : guard)
    if (b != 0xab) e.fail("a 0-byte message wrote into the receive buffer");
}

namespace {

// An anonymous private mapping (large buffers without the heap).
struct Mapping {
  void *p = nullptr;
  size_t n = 0;
  explicit Mapping(size_t bytes) : n(bytes) {
    p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
    if (p == MAP_FAILED) p = nullptr;
  }
  ~Mapping() {
    if (p != nullptr) munmap(p, n);
  }
  Mapping(const Mapping &) = delete;
  Mapping &operator=(const Mapping &) = delete;
  unsigned char *data() const { return static_cast<unsigned char *>(p); }
};

// Every rank sends `n` bytes to every other and receives from each.
void all_to_all(Env &e, size_t n, uint64_t tag) {
  Mapping out(n);
  std::vector<std::unique_ptr<Mapping>> in(size_t(e.nranks));
  if (out.p == nullptr) e.fail("cannot map %zu B", n);
  pattern_fill(out.data(), n, pattern_seed(e.rank, tag, 0));
  std::vector<void *> recvs(size_t(e.nranks), nullptr), sends = recvs;
  for (int p = 0; p < e.nranks; ++p) {
    if (p == e.rank) continue;
    in[size_t(p)] = std::make_unique<Mapping>(n);
    if (in[size_t(p)]->p == nullptr) e.fail("cannot map %zu B", n);
    recvs[size_t(p)] = e.irecv(p, in[size_t(p)]->data(), n, tag);
  }
  for (int p = 0; p < e.nranks; ++p)
    if (p != e.rank) sends[size_t(p)] = e.isend(p, out.data(), n, tag);
  char what[120];
  for (int p = 0; p < e.nranks; ++p) {
    if (p == e.rank) continue;
    snprintf(what, sizeof what, "%zu-byte send to rank %d", n, p);
    e.expect_ok(sends[size_t(p)], what);
    snprintf(what, sizeof what, "%zu-byte message from rank %d", n, p);
    Completion c = e.expect_ok(recvs[size_t(p)], what);
    if (c.size != n) e.fail("%s: received %zu B", what, c.size);
    e.check_pattern(in[size_t(p)]->data(), n, pattern_seed(p, tag, 0), what);
  }
}

}  // namespace

void test_large(Env &e) {
  all_to_all(e, size_t(1) << 20, e.tag(1));
  all_to_all(e, size_t(64) << 20, e.tag(2));

  // 1 GiB from rank 0 to rank 1, if the machine has room for both copies.
  const size_t n = size_t(1) << 30;
  uint64_t tag = e.tag(3);
  if (e.rank == 0) {
    uint64_t avail = memory_available_bytes();
    uint32_t go = avail >= 2 * n + (size_t(512) << 20) ? 1 : 0;
    e.publish(&go, sizeof go);
    if (!go)
      e.note("1 GiB transfer skipped: only %llu MiB of memory available",
             (unsigned long long)(avail >> 20));
  }
  e.barrier();
  std::vector<unsigned char> decision = e.fetch(0);
  uint32_t go = 0;
  memcpy(&go, decision.data(), sizeof go);
  if (!go || e.rank > 1) return;
  Mapping buf(n);
  if (buf.p == nullptr) e.fail("cannot map 1 GiB");
  if (e.rank == 0) {
    pattern_fill(buf.data(), n, pattern_seed(0, tag, 0));
    double t0 = now_seconds();
    e.expect_ok(e.isend(1, buf.data(), n, tag), "1 GiB send to rank 1");
    e.note("1 GiB sent in %.2f s", now_seconds() - t0);
  } else {
    memset(buf.data(), 0, n);
    Completion c = e.expect_ok(e.irecv(0, buf.data(), n, tag), "1 GiB message from rank 0");
    if (c.size != n) e.fail("1 GiB message from rank 0: received %zu B", c.size);
    e.check_pattern(buf.data(), n, pattern_seed(0, tag, 0), "1 GiB message from rank 0");
  }
}

}  // namespace tcheck
