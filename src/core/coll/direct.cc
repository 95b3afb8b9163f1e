#include "core/coll/direct.h"

#include <string>

#include "core/util/dtype.h"
#include "core/util/error.h"

namespace smd {

size_t direct_eager_limit(int nranks, size_t chunk) {
  // Each member reads nranks inputs: keep that in the first-level caches.
  size_t limit = (64 * 1024) / static_cast<size_t>(nranks > 2 ? nranks / 2 : 1);
  return limit < chunk ? limit : chunk;
}

DirectOp::DirectOp(Comm &comm, const CollArgs &args, uint64_t rounds, const char *what)
    : comm_(comm),
      args_(args),
      arena_(*comm.arena()),
      waiter_(comm, what, SleepOn::kArena),
      first_(arena_.reserve_rounds(rounds)),
      srcs_(comm.size()) {
  int by = arena_.aborted_by();
  if (by >= 0)
    fail(SMD_ERR_ABORTED, "%s on %s: rank %d aborted the communicator", what, comm.where().c_str(), by);
  waiter_.set_pending([this] {
    std::string s;
    for (int r : arena_.not_posted(arena_.reserve_rounds(0) - 1)) {
      s += ' ';
      s += std::to_string(r);
    }
    return s.empty() ? std::string() : "ranks that have not reached the last step:" + s;
  });
}

uint8_t *DirectOp::begin(uint64_t k) {
  arena_.wait_reusable(round(k), waiter_);
  return arena_.buf(arena_.rank(), round(k));
}

void DirectOp::post_and_wait(uint64_t k, int from) {
  uint64_t r = round(k);
  if (k == 0) {
    OpDesc &d = arena_.desc(arena_.rank(), r);
    d.round = r;
    d.kind = static_cast<uint32_t>(args_.kind);
    d.datatype = static_cast<uint32_t>(args_.datatype);
    d.op = static_cast<uint32_t>(args_.op);
    d.root = args_.root;
    d.count = args_.count;
  }
  arena_.post(r);
  if (k == 0 || from < 0) arena_.wait_posted(r, waiter_);
  else arena_.wait_posted_by(from, r, waiter_);
  if (k == 0) check_agreement(k);
}

void DirectOp::wait_reduced(uint64_t k, int from) {
  if (from < 0) arena_.wait_reduced(round(k), waiter_);
  else arena_.wait_reduced_by(from, round(k), waiter_);
}

const void *const *DirectOp::sources(uint64_t k, size_t offset) {
  for (int j = 0; j < arena_.size(); ++j) srcs_[j] = arena_.buf(j, round(k)) + offset;
  return srcs_.data();
}

void DirectOp::check_agreement(uint64_t k) {
  uint64_t r = round(k);
  const OpDesc &mine = arena_.desc(arena_.rank(), r);
  bool differ = false;
  for (int j = 0; j < arena_.size() && !differ; ++j) {
    const OpDesc &d = arena_.desc(j, r);
    differ = d.round != mine.round || d.kind != mine.kind || d.datatype != mine.datatype ||
             d.op != mine.op || d.root != mine.root || d.count != mine.count;
  }
  if (!differ) return;
  std::string s;
  for (int j = 0; j < arena_.size(); ++j) {
    const OpDesc &d = arena_.desc(j, r);
    if (d.round != mine.round) {
      s += format("; rank %d: out of step (a different number of collectives were called)", j);
      continue;
    }
    s += format("; rank %d: %s count=%llu %s", j, coll_name(static_cast<CollKind>(d.kind)),
                static_cast<unsigned long long>(d.count),
                datatype_name(static_cast<smd_datatype_t>(d.datatype)));
    CollKind kind = static_cast<CollKind>(d.kind);
    if (kind == CollKind::kAllreduce || kind == CollKind::kReduce || kind == CollKind::kReduceScatter)
      s += format(" op=%s", op_name(static_cast<smd_op_t>(d.op)));
    if (kind == CollKind::kBroadcast || kind == CollKind::kReduce) s += format(" root=%d", d.root);
  }
  fail(SMD_ERR_MISMATCH, "%s on %s: ranks called it with different arguments%s",
       coll_name(args_.kind), comm_.where().c_str(), s.c_str());
}

}  // namespace smd
