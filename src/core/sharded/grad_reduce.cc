#include "core/sharded/grad_reduce.h"

#include <algorithm>
#include <memory>

#include "core/coll/block_layout.h"
#include "core/coll/collective.h"
#include "core/comm/communicator.h"
#include "core/sharded/float_elements.h"
#include "core/util/dtype.h"

namespace smd::sharded {

namespace {

// The part of [begin, end) that rank r owns: [lo, hi), possibly empty.
struct Owned {
  size_t lo, hi;
};
Owned owned_part(const GradTarget &t, const GradSlice &s, int r) {
  size_t first = static_cast<size_t>(r) * t.chunk;
  size_t last = std::min(first + t.chunk, t.count);
  size_t lo = std::max(s.begin, first), hi = std::min(s.end, last);
  return lo < hi ? Owned{lo, hi} : Owned{0, 0};
}

void allreduce_in_place(Comm &c, void *buf, size_t count, smd_datatype_t dt, uint32_t subject) {
  CollArgs a{CollKind::kAllreduce, buf, buf, count, dt, SMD_SUM, 0};
  a.subject = subject;
  run_collective(c, a);
}

void run_on_replicas(const Config &cfg, void *buf, size_t count, smd_datatype_t dt,
                     uint32_t subject) {
  if (!cfg.replicas || cfg.replicas->size() == 1 || count == 0) return;
  Comm &r = *cfg.replicas;
  r.executor().run_blocking([&] { allreduce_in_place(r, buf, count, dt, subject); });
}

// Which parameters' elements a bucket carries, in order.
uint32_t subject_of(const std::vector<GradTarget> &targets, const GradBucket &b) {
  std::vector<uint64_t> values;
  values.reserve(b.slices.size() * 3);
  for (const GradSlice &s : b.slices)
    for (uint64_t v :
         {static_cast<uint64_t>(targets[s.target].id), uint64_t(s.begin), uint64_t(s.end)})
      values.push_back(v);
  return parameter_subject(values);
}

}  // namespace

std::vector<GradBucket> plan_buckets(const std::vector<GradTarget> &targets, const Config &cfg) {
  std::vector<GradBucket> buckets;
  GradBucket open;
  auto close = [&] {
    if (open.elements) buckets.push_back(std::move(open));
    open = GradBucket{};
  };
  for (size_t i = 0; i < targets.size(); ++i) {
    const GradTarget &t = targets[i];
    smd_datatype_t wire = t.datatype == SMD_FLOAT32 && cfg.wire >= 0
                              ? static_cast<smd_datatype_t>(cfg.wire)
                              : t.datatype;
    for (size_t begin = 0; begin < t.count;) {
      if (open.elements && (open.persistent != t.persistent || open.datatype != t.datatype ||
                            open.elements == cfg.bucket))
        close();
      open.persistent = t.persistent;
      open.datatype = t.datatype;
      open.wire = wire;
      size_t end = std::min<size_t>(t.count, begin + (cfg.bucket - open.elements));
      open.slices.push_back(GradSlice{i, begin, end});
      open.elements += end - begin;
      begin = end;
    }
  }
  close();
  return buckets;
}

void reduce_bucket(Comm &comm, const std::vector<GradTarget> &targets, const GradBucket &b,
                   const Config &cfg) {
  size_t wire_elem = datatype_size(b.wire);
  int size = comm.size(), me = comm.rank();
  double replicas = cfg.replicas ? cfg.replicas->size() : 1;
  double scale = cfg.average ? 1.0 / (size * replicas) : 1.0;
  // A bucket of one slice that travels in its own type is, rank by rank,
  // a contiguous run of its gradient already: it is sent from there, with
  // no packed copy of it beside the gradient.
  const GradTarget &first_target = targets[b.slices.front().target];
  bool direct = !b.persistent && b.slices.size() == 1 && b.wire == first_target.datatype;
  std::unique_ptr<char[]> send(direct ? nullptr : new char[b.elements * wire_elem]);
  uint32_t subject = subject_of(targets, b);
  if (b.persistent) {
    size_t at = 0;
    for (const GradSlice &s : b.slices) {
      const GradTarget &t = targets[s.target];
      size_t n = s.end - s.begin;
      convert_scaled(send.get() + at * wire_elem, b.wire,
                     static_cast<const char *>(t.full_grad) + s.begin * datatype_size(t.datatype),
                     t.datatype, n, 1.0);
      at += n;
    }
    allreduce_in_place(comm, send.get(), b.elements, b.wire, subject);
    run_on_replicas(cfg, send.get(), b.elements, b.wire, subject);
    at = 0;
    for (const GradSlice &s : b.slices) {
      const GradTarget &t = targets[s.target];
      size_t n = s.end - s.begin;
      convert_scaled(t.shard_grad + s.begin * datatype_size(t.datatype), t.datatype,
                     send.get() + at * wire_elem, b.wire, n, scale);
      at += n;
    }
    return;
  }
  // Rank by rank, the pieces each owns, in slice order.
  auto layout = std::make_shared<BlockLayout>();
  size_t at = 0;
  for (int r = 0; r < size; ++r) {
    layout->displs.push_back(at);
    for (const GradSlice &s : b.slices) {
      const GradTarget &t = targets[s.target];
      Owned o = owned_part(t, s, r);
      if (o.hi == o.lo) continue;
      if (!direct)
        convert_scaled(send.get() + at * wire_elem, b.wire,
                       static_cast<const char *>(t.full_grad) + o.lo * datatype_size(t.datatype),
                       t.datatype, o.hi - o.lo, 1.0);
      at += o.hi - o.lo;
    }
    layout->counts.push_back(at - layout->displs.back());
  }
  finish_layout(*layout);
  size_t mine = layout->counts[static_cast<size_t>(me)];
  std::unique_ptr<char[]> recv(new char[std::max<size_t>(mine, 1) * wire_elem]);
  const void *from = direct ? static_cast<const char *>(first_target.full_grad) +
                                  b.slices.front().begin * wire_elem
                            : send.get();
  CollArgs a{CollKind::kReduceScatterv,       from, recv.get(), layout->total, b.wire, SMD_SUM,
             static_cast<int>(layout->digest)};
  a.blocks = layout;
  a.subject = subject;
  run_collective(comm, a);
  run_on_replicas(cfg, recv.get(), mine, b.wire, subject);
  at = 0;
  for (const GradSlice &s : b.slices) {
    const GradTarget &t = targets[s.target];
    Owned o = owned_part(t, s, me);
    if (o.hi == o.lo) continue;
    size_t first = static_cast<size_t>(me) * t.chunk;
    convert_scaled(t.shard_grad + (o.lo - first) * datatype_size(t.datatype), t.datatype,
                   recv.get() + at * wire_elem, b.wire, o.hi - o.lo, scale);
    at += o.hi - o.lo;
  }
}

}  // namespace smd::sharded
