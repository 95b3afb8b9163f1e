#include "core/coll/algorithms/blocks/ring.h"

#include <algorithm>
#include <vector>

#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {
namespace {
// Pieces of one ring step: big enough to amortise per-message costs,
// small enough that a reduce overlaps the next transfer; a window bounds
// the temporary memory a step needs.
constexpr size_t kPieceBytes = 1 << 20;
constexpr size_t kWindow = 8;
}  // namespace

std::vector<Range> even_segments(size_t n, int p) {
  std::vector<Range> s(p);
  for (int i = 0; i < p; ++i) s[i] = split(n, p, i);
  return s;
}

void ring_reduce_scatter(Comm &c, const MemoryOps &m, void *buf, const std::vector<Range> &segs,
                         smd_datatype_t dt, Reduction red, uint64_t seq, uint32_t step_base) {
  int p = c.size(), r = c.rank();
  int next = (r + 1) % p, prev = (r + p - 1) % p;
  size_t es = datatype_size(dt);
  size_t max_seg = 0;
  for (auto &s : segs) max_seg = std::max(max_seg, s.len);
  size_t piece = std::max<size_t>(1, kPieceBytes / es);
  size_t window = std::min(kWindow, (max_seg + piece - 1) / piece);
  Scratch tmp(m, std::max<size_t>(1, window) * piece * es);
  for (int s = 0; s < p - 1; ++s) {
    const Range &out = segs[(r - s + 2 * p) % p];
    const Range &in = segs[(r - s - 1 + 2 * p) % p];
    uint64_t tag = coll_tag(c.tag_space(), seq, step_base + s);
    ReqSet sends(c);
    for (size_t off = 0; off < out.len; off += piece)
      sends.add(
          c.isend(next, at(buf, out.off + off, es), std::min(piece, out.len - off) * es, tag));
    // Receive pieces through a window of temporary slots, reducing each as it lands.
    size_t npieces = (in.len + piece - 1) / piece;
    ReqSet recvs(c);
    std::vector<P2PReq *> pending(npieces, nullptr);
    auto post = [&](size_t i) {
      size_t len = std::min(piece, in.len - i * piece);
      pending[i] = &recvs.add(c.irecv(prev, tmp.data() + (i % window) * piece * es, len * es, tag));
    };
    size_t posted = 0;
    for (; posted < npieces && posted < window; ++posted) post(posted);
    for (size_t i = 0; i < npieces; ++i) {
      c.wait(*pending[i], "ring reduce-scatter");
      size_t len = std::min(piece, in.len - i * piece);
      m.reduce2(at(buf, in.off + i * piece, es), at(buf, in.off + i * piece, es),
                tmp.data() + (i % window) * piece * es, len, dt, red.op);
      if (posted < npieces) post(posted++);
    }
    sends.wait_all("ring reduce-scatter");
  }
  if (red.divisor > 1) {
    const Range &mine = segs[(r + 1) % p];
    m.divide(at(buf, mine.off, es), mine.len, dt, red.divisor);
  }
}

void ring_allgather(Comm &c, void *buf, const std::vector<Range> &segs, size_t es, int shift,
                    uint64_t seq, uint32_t step_base) {
  int p = c.size(), r = c.rank();
  int next = (r + 1) % p, prev = (r + p - 1) % p;
  for (int s = 0; s < p - 1; ++s) {
    const Range &out = segs[(r + shift - s + 2 * p) % p];
    const Range &in = segs[(r + shift - s - 1 + 2 * p) % p];
    c.sendrecv(next, at(buf, out.off, es), out.len * es, prev, at(buf, in.off, es), in.len * es,
               coll_tag(c.tag_space(), seq, step_base + s), "ring allgather");
  }
}

}  // namespace smd
