#include "core/fusion/group_run.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/coll/coll_state.h"
#include "core/coll/coll_util.h"
#include "core/comm/communicator.h"
#include "core/comm/shared_memory.h"
#include "core/exec/executor.h"
#include "core/fusion/group_agreement.h"
#include "core/fusion/fusion_layout.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

size_t fusion_bytes() {
  static const size_t bytes = [] {
    int64_t v = param_int("SMD_FUSION_BYTES");
    return static_cast<size_t>(v < 0 ? 0 : v);
  }();
  return bytes;
}

namespace {

std::string name_of(const GroupCall &g) {
  char head[96];
  snprintf(head, sizeof head, "call %d (%s)", g.index, g.call);
  return head;
}

void record(GroupCall &g, smd_result_t code, const std::string &message) {
  if (g.result != SMD_SUCCESS) return;
  g.result = code;
  g.error = message;
}

// The communicator's fused buffer (its collectives run one at a time),
// kept between groups so its pages are touched once. It lies in memory
// the node's members map (smd_mem_alloc's), so the arena reduces every
// member's part where it lies instead of staging it: packing replaces the
// staging copy rather than adding one.
uint8_t *fusion_buffer(Comm &c, size_t bytes) {
  CollState &st = coll_state(c);
  bytes = std::max<size_t>(bytes, 64);
  if (st.fusion_buffer_bytes < bytes) {
    st.fusion_buffer.reset();
    st.fusion_buffer = std::shared_ptr<void>(shared_alloc(c.ctx_ptr(), bytes), shared_free);
    st.fusion_buffer_bytes = bytes;
  }
  return static_cast<uint8_t *>(st.fusion_buffer.get());
}

// Allreduces of one datatype, op and memory kind on one communicator,
// packed into one balanced buffer (fusion_layout.h) and reduced at once.
void run_fused(Comm &c, const std::vector<GroupCall *> &members) {
  const CollArgs &first = members.front()->args;
  size_t es = datatype_size(first.datatype);
  std::vector<size_t> counts;
  counts.reserve(members.size());
  for (GroupCall *g : members) counts.push_back(g->args.count);
  FusionLayout l = lay_out_fusion(counts, es, c.size());
  uint8_t *buf = fusion_buffer(c, l.padded * es);
  const MemoryOps &m = ops_of(first);
  for (size_t i = 0; i < members.size(); ++i)
    m.copy(buf + l.offsets[i] * es, members[i]->args.sendbuf, counts[i] * es);
  // The padding is reduced too (its result is dropped): zeros keep every
  // op's kernels on ordinary numbers.
  memset(buf + l.used * es, 0, (l.padded - l.used) * es);
  CollArgs a{CollKind::kAllreduce, buf, buf, l.padded, first.datatype, first.op, 0, first.memory};
  a.subject = first.subject;  // how the ranks' groups divide the total
  run_collective(c, a);
  for (size_t i = 0; i < members.size(); ++i)
    m.copy(members[i]->args.recvbuf, buf + l.offsets[i] * es, counts[i] * es);
}

// Allreduces waiting to be fused, one bucket per (datatype, op, memory).
struct Bucket {
  smd_datatype_t datatype;
  smd_op_t op;
  MemoryKind memory;
  std::vector<GroupCall *> calls;
  size_t bytes = 0;
};

// One communicator's collectives, in issue order except that fusable
// allreduces wait in their bucket until it is full or the group ends.
// Every rank issued the same calls, so every rank runs the same sequence.
void run_collectives(Comm &c, const std::vector<GroupCall *> &calls) {
  size_t limit = fusion_bytes();
  // Every call carries the digest of the whole list (group_agreement.h):
  // the first transfer's check fails when the ranks' groups differ.
  uint32_t subject = group_subject(calls);
  for (GroupCall *g : calls) g->args.subject = subject;
  uint64_t group = coll_state(c).groups_run++;
  bool named = false;
  // The reason a mismatch gets, once: the first differing call.
  // A member that failed otherwise (an abort, a timeout) still publishes
  // its list for those that compare.
  auto why = [&](const Error &e) {
    if (named) return e.message();
    named = true;
    if (e.code() != SMD_ERR_MISMATCH) {
      publish_group_calls(c, calls, group);
      return e.message();
    }
    std::string difference = name_group_difference(c, calls, group);
    return difference.empty() ? e.message() : difference + " (" + e.message() + ")";
  };
  std::vector<Bucket> buckets;
  auto flush = [&](Bucket &b) {
    if (b.calls.empty()) return;
    try {
      if (b.calls.size() == 1) run_collective(c, b.calls[0]->args);
      else run_fused(c, b.calls);
    } catch (const Error &e) {
      std::string msg = name_of(*b.calls[0]);
      if (b.calls.size() > 1)
        msg += ", fused with " + std::to_string(b.calls.size() - 1) + " other allreduce(s),";
      std::string reason = why(e);
      for (GroupCall *g : b.calls) record(*g, e.code(), msg + " failed: " + reason);
    }
    b.calls.clear();
    b.bytes = 0;
  };
  for (GroupCall *g : calls) {
    const CollArgs &a = g->args;
    size_t bytes = a.count * datatype_size(a.datatype);
    // Fusion packs on the host: device buffers run one by one (their staged
    // route, docs/GPU.md) until a device fusion buffer exists.
    if (a.kind != CollKind::kAllreduce || bytes >= limit || a.memory != MemoryKind::kHost) {
      try {
        run_collective(c, a);
      } catch (const Error &e) {
        record(*g, e.code(), name_of(*g) + " failed: " + why(e));
      }
      continue;
    }
    Bucket *b = nullptr;
    for (Bucket &x : buckets)
      if (x.datatype == a.datatype && x.op == a.op && x.memory == a.memory) b = &x;
    if (!b) {
      buckets.push_back(Bucket{a.datatype, a.op, a.memory, {}, 0});
      b = &buckets.back();
    }
    if (b->bytes + bytes > limit) flush(*b);
    b->calls.push_back(g);
    b->bytes += bytes;
  }
  for (Bucket &b : buckets) flush(b);
}

}  // namespace

void run_group(std::vector<GroupCall> &calls, bool on_worker) {
  // Point-to-point first, all posted before anything waits: sends and
  // receives that pair up inside a group cannot block each other.
  // They go through the communicator's matcher like smd_send/smd_recv
  // outside groups (an envelope, then the payload), so a grouped send
  // meets an ungrouped receive and any-source receives work in groups.
  std::vector<bool> live(calls.size(), false);
  for (size_t i = 0; i < calls.size(); ++i) {
    GroupCall &g = calls[i];
    if (g.kind == GroupCall::Kind::kCollective) continue;
    try {
      g.comm->check_usable();
      P2PMatcher &m = g.comm->user_p2p();
      if (g.kind == GroupCall::Kind::kSend) {
        g.envelope = std::make_shared<P2PMatcher::Envelope>();
        if (g.exact) {
          g.receipt = std::make_shared<P2PMatcher::Receipt>();
          m.isend_with_receipt(g.peer, g.buf, g.bytes, g.tag, g.envelope.get(), &g.envelope_req,
                               &g.data_req, g.receipt.get(), &g.receipt_req);
        } else {
          m.isend(g.peer, g.buf, g.bytes, g.tag, g.envelope.get(), &g.envelope_req, &g.data_req);
        }
      } else {
        g.recv = m.irecv(g.peer, g.tag, g.buf, g.bytes, g.exact);
      }
      live[i] = true;
    } catch (const Error &e) {
      record(g, e.code(), name_of(g) + " failed: " + e.message());
    }
  }
  // Collectives: one batch per communicator, in order of first appearance.
  std::vector<std::pair<Comm *, std::vector<GroupCall *>>> batches;
  for (GroupCall &g : calls) {
    if (g.kind != GroupCall::Kind::kCollective) continue;
    auto it = batches.begin();
    while (it != batches.end() && it->first != g.comm.get()) ++it;
    if (it == batches.end()) {
      batches.push_back({g.comm.get(), {}});
      it = batches.end() - 1;
    }
    it->second.push_back(&g);
  }
  auto fail_batch = [&](std::vector<GroupCall *> &batch, const Error &e) {
    for (GroupCall *g : batch) record(*g, e.code(), name_of(*g) + " failed: " + e.message());
  };
  if (batches.size() == 1) {
    // One communicator: on this thread when its executor is idle.
    Comm &c = *batches[0].first;
    try {
      if (on_worker) run_collectives(c, batches[0].second);
      else c.executor().run_blocking([&] { run_collectives(c, batches[0].second); });
    } catch (const Error &e) {
      fail_batch(batches[0].second, e);
    }
  } else {
    // Several: each on its communicator's worker, all at once (peers may
    // have issued them in another interleaving of communicators).
    std::vector<std::shared_ptr<Task>> tasks;
    for (auto &[comm, batch] : batches) {
      Comm *c = comm;
      std::vector<GroupCall *> *b = &batch;
      try {
        tasks.push_back(c->executor().submit([c, b] { run_collectives(*c, *b); }));
      } catch (const Error &e) {
        tasks.push_back(nullptr);
        fail_batch(batch, e);
      }
    }
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (!tasks[i]) continue;
      tasks[i]->wait_until(Deadline::never());
      if (tasks[i]->result() != SMD_SUCCESS)
        fail_batch(batches[i].second, Error(tasks[i]->result(), tasks[i]->error()));
    }
  }
  // Receives first: a send that asked for a receipt finishes only once its
  // receiver's receive has, which may be waiting behind that rank's own
  // sends here (all sends are posted, so receives never wait for a wait).
  std::vector<size_t> order;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < calls.size(); ++i)
      if (live[i] && (calls[i].kind == GroupCall::Kind::kRecv) == (pass == 0)) order.push_back(i);
  for (size_t i : order) {
    GroupCall &g = calls[i];
    try {
      if (g.recv) {
        g.comm->user_p2p().wait(*g.recv, "group receive");
        g.moved_bytes = g.recv->bytes;
      } else {
        P2PReq *all[] = {&g.envelope_req, &g.data_req, &g.receipt_req};
        g.comm->wait_ptrs(all, g.receipt ? 3 : 2, "group send");
        g.moved_bytes = g.data_req.bytes;
        if (g.receipt && g.receipt->result != SMD_SUCCESS)
          fail(smd_result_t(g.receipt->result),
               "the %zu-byte message was not taken by the %llu-byte receive of rank %d (%s)",
               g.bytes, static_cast<unsigned long long>(g.receipt->capacity), g.peer,
               g.receipt->result == SMD_ERR_TRUNCATED ? "too long" : "sizes differ");
      }
    } catch (const Error &e) {
      record(g, e.code(), name_of(g) + " failed: " + e.message());
    }
  }
  for (GroupCall &g : calls)
    if (g.result != SMD_SUCCESS) throw Error(g.result, g.error);
}

}  // namespace smd
