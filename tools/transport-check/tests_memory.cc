// Memory: registrations, sends from registered buffers, one-sided reads
// (mem_pack + iget) and shared segments.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "pattern.h"
#include "registry.h"

namespace tcheck {

namespace {

void *reg(Env &e, void *p, size_t n, const char *what) {
  void *mr = nullptr;
  e.last_error.clear();
  smd_transport_status_t s = e.t.mem_register(e.ctx, p, n, 0, &mr);
  if (s != SMD_TRANSPORT_OK)
    e.fail("mem_register of %s (%zu B) returned %s", what, n, describe(s, e.last_error).c_str());
  return mr;
}

void dereg(Env &e, void *mr, const char *what) {
  e.last_error.clear();
  smd_transport_status_t s = e.t.mem_deregister(e.ctx, mr);
  if (s != SMD_TRANSPORT_OK)
    e.fail("mem_deregister of %s returned %s", what, describe(s, e.last_error).c_str());
}

// What a rank publishes for its peers' igets.
struct RmaOffer {
  uint64_t registered;    // address of the registered buffer
  uint64_t unregistered;  // address of a plain heap buffer
  uint64_t rkey_size;
  unsigned char rkey[8192];
};

std::vector<unsigned char> pack(Env &e, void *mr) {
  unsigned char probe[1];
  size_t need = 0;
  e.last_error.clear();
  smd_transport_status_t s = e.t.mem_pack(e.ctx, mr, probe, &need);
  if (s == SMD_TRANSPORT_OK && need == 0) return {};
  if (s != SMD_TRANSPORT_ERR_INVALID || need == 0)
    e.fail(
        "mem_pack with a 0-byte buffer returned %s and size %zu; expected "
        "ERR_INVALID and the size needed",
        describe(s, e.last_error).c_str(), need);
  if (need > sizeof(RmaOffer::rkey))
    e.fail("remote key of %zu B is larger than %zu B", need, sizeof(RmaOffer::rkey));
  std::vector<unsigned char> key(need);
  size_t size = need;
  e.check(e.t.mem_pack(e.ctx, mr, key.data(), &size), "mem_pack");
  key.resize(size);
  return key;
}

void get(Env &e, int peer, void *local, void *local_mr, uint64_t remote, const void *rkey,
         size_t rkey_size, size_t n, const char *what) {
  void *req = nullptr;
  e.last_error.clear();
  smd_transport_status_t s =
      e.t.iget(e.ctx, e.ep[size_t(peer)], local, local_mr, remote, rkey, rkey_size, n, &req);
  if (s != SMD_TRANSPORT_OK)
    e.fail("%s: iget returned %s", what, describe(s, e.last_error).c_str());
  if (req != nullptr) e.expect_ok(req, what);
}

}  // namespace

void test_registration(Env &e) {
  // Registration of assorted memory, released in another order.
  std::vector<unsigned char> heap(size_t(1) << 20);
  unsigned char stack[256];
  void *mapped =
      mmap(nullptr, size_t(4) << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) e.fail("cannot map 4 MiB");
  void *mrs[5] = {reg(e, heap.data(), heap.size(), "a heap buffer"),
                  reg(e, stack, sizeof stack, "a stack buffer"),
                  reg(e, mapped, size_t(4) << 20, "an mmap'd region"),
                  reg(e, heap.data() + 7, 1, "one byte"),
                  reg(e, heap.data(), heap.size(), "a heap buffer again")};
  for (int i : {3, 0, 4, 2, 1}) dereg(e, mrs[i], "a registration");
  munmap(mapped, size_t(4) << 20);

  // Messages between registered buffers.
  const size_t n = 65536 + 100;
  int to = e.next(), from = e.prev();
  std::vector<unsigned char> out(n), in(n);
  uint64_t tag = e.tag(1);
  pattern_fill(out.data(), n, pattern_seed(e.rank, tag, 0));
  void *out_mr = reg(e, out.data(), n, "a send buffer");
  void *in_mr = reg(e, in.data(), n, "a receive buffer");
  void *r = e.irecv(from, in.data(), n, tag, in_mr);
  e.expect_ok(e.isend(to, out.data(), n, tag, out_mr), "send with mr");
  e.expect_ok(r, "receive with mr");
  e.check_pattern(in.data(), n, pattern_seed(from, tag, 0), "receive with mr");

  if (!e.has(SMD_TRANSPORT_CAP_RMA)) {
    dereg(e, out_mr, "the send buffer");
    dereg(e, in_mr, "the receive buffer");
    e.note("no RMA: mem_pack and iget not tested");
    return;
  }
  // One-sided reads of the next rank's buffers.
  const size_t rn = (size_t(3) << 20) + 5;
  uint64_t rtag = e.tag(2), atag = e.tag(3);
  std::vector<unsigned char> exposed(rn), plain(100000), local(rn);
  pattern_fill(exposed.data(), rn, pattern_seed(e.rank, rtag, 0));
  pattern_fill(plain.data(), plain.size(), pattern_seed(e.rank, atag, 0));
  void *exposed_mr = reg(e, exposed.data(), rn, "an exposed buffer");
  void *local_mr = reg(e, local.data(), rn, "an iget target");
  RmaOffer offer{};
  offer.registered = reinterpret_cast<uintptr_t>(exposed.data());
  offer.unregistered = reinterpret_cast<uintptr_t>(plain.data());
  std::vector<unsigned char> key = pack(e, exposed_mr);
  offer.rkey_size = key.size();
  memcpy(offer.rkey, key.data(), key.size());
  e.publish(&offer, sizeof offer);
  e.barrier();

  int peer = e.next();
  std::vector<unsigned char> theirs = e.fetch(peer);
  RmaOffer o;
  memcpy(&o, theirs.data(), sizeof o);
  const void *rkey = o.rkey_size != 0 ? o.rkey : nullptr;
  get(e, peer, local.data(), local_mr, o.registered, rkey, o.rkey_size, rn,
      "iget of a registered 3 MiB buffer");
  e.check_pattern(local.data(), rn, pattern_seed(peer, rtag, 0),
                  "iget of a registered 3 MiB buffer");
  memset(local.data(), 0, 2000);
  get(e, peer, local.data(), local_mr, o.registered + 12345, rkey, o.rkey_size, 1000,
      "iget of 1000 B inside a registration");
  e.check_pattern(local.data(), 1000, pattern_seed(peer, rtag, 0),
                  "iget of 1000 B inside a registration", 12345);
  if (e.has(SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS)) {
    get(e, peer, local.data(), local_mr, o.unregistered, nullptr, 0, plain.size(),
        "iget of an unregistered buffer without rkey");
    e.check_pattern(local.data(), plain.size(), pattern_seed(peer, atag, 0),
                    "iget of an unregistered buffer without rkey");
  }
  e.barrier();  // peers are done reading our buffers
  for (void *mr : {out_mr, in_mr, exposed_mr, local_mr}) dereg(e, mr, "a buffer");
}

void test_segments(Env &e) {
  if (!e.has(SMD_TRANSPORT_CAP_SEGMENTS)) e.skip("plugin lacks SEGMENTS");
  size_t n = (size_t(1) << 20) + size_t(e.rank) * 4096 + 123;
  uint64_t tag = e.tag(1);
  unsigned char handle[kMaxBlob];
  size_t need = 0;
  void *ptr = nullptr, *seg = nullptr;
  e.last_error.clear();
  smd_transport_status_t s = e.t.segment_create(e.ctx, n, &ptr, &seg, handle, &need);
  if (s != SMD_TRANSPORT_ERR_INVALID || need == 0 || need > sizeof handle)
    e.fail(
        "segment_create with a 0-byte handle buffer returned %s and size "
        "%zu; expected ERR_INVALID and the size needed (at most %zu)",
        describe(s, e.last_error).c_str(), need, sizeof handle);
  size_t hsize = need;
  e.check(e.t.segment_create(e.ctx, n, &ptr, &seg, handle, &hsize), "segment_create");
  auto *mine = static_cast<unsigned char *>(ptr);
  for (size_t i = 0; i < n; ++i)
    if (mine[i] != 0) e.fail("new segment is not zero-filled at byte %zu", i);
  e.publish(handle, hsize);
  e.barrier();

  // Attach the next rank's segment and fill it; our creator's view is
  // checked after the barrier.
  int peer = e.next();
  std::vector<unsigned char> theirs = e.fetch(peer);
  void *tptr = nullptr, *tseg = nullptr;
  size_t tsize = 0;
  e.last_error.clear();
  s = e.t.segment_attach(e.ctx, e.ep[size_t(peer)], theirs.data(), theirs.size(), &tptr, &tsize,
                         &tseg);
  if (s != SMD_TRANSPORT_OK)
    e.fail("segment_attach of rank %d's segment returned %s", peer,
           describe(s, e.last_error).c_str());
  size_t expect = (size_t(1) << 20) + size_t(peer) * 4096 + 123;
  if (tsize < expect)
    e.fail("segment_attach reports %zu B for rank %d's %zu-byte segment", tsize, peer, expect);
  pattern_fill(tptr, expect, pattern_seed(e.rank, tag, 0));
  e.barrier();
  e.check_pattern(mine, n, pattern_seed(e.prev(), tag, 0), "own segment after the peer wrote it");
  e.check(e.t.segment_release(e.ctx, tseg), "segment_release (attached)");
  e.barrier();
  e.check(e.t.segment_release(e.ctx, seg), "segment_release (created)");
}

}  // namespace tcheck
