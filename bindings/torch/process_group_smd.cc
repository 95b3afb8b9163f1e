// The group itself (forming it, starting operations, sequence numbers) and
// the operations that reduce or broadcast; process_group_movement.cc has
// the ones that only move data.
#include <Python.h>

#include "process_group_smd.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <cstring>
#include <mutex>
#include <set>

#include "exit_guard.h"
#include "smd_error.h"
#include "tensor_staging.h"
#include "tensor_types.h"
#include "work_smd.h"

namespace smd_torch {
namespace {

// Several worlds may be formed on one store over time (a group destroyed
// and formed again on the same store): each rank counts itself in, and
// every `size` arrivals make one generation whose keys are apart. A rank
// joins generation g+1 only after generation g formed, which needed every
// rank's arrival, so the count is the same on every rank.
std::string generation_prefix(c10d::Store &store, int size) {
  int64_t arrivals = store.add("smd/arrivals", 1);
  return "smd/" + std::to_string((arrivals - 1) / size) + "/";
}

// An operation's on_done: the Work ends with smd's error, or once the
// results are copied out; `buffers` stay alive until then.
std::function<void(smd_result_t, const std::string &)> finishing(c10::intrusive_ptr<WorkSmd> work,
                                                                 std::function<void()> finish,
                                                                 std::vector<at::Tensor> buffers) {
  return [work, finish = std::move(finish), buffers = std::move(buffers)](
             smd_result_t rc, const std::string &message) {
    if (rc != SMD_SUCCESS) {
      work->complete(rc, message);
      return;
    }
    try {
      if (finish) finish();
    } catch (const SmdError &e) {
      work->complete(e.code(), e.message());  // what the results showed (a layout mismatch)
      return;
    } catch (const std::exception &e) {
      work->complete(SMD_ERR_INTERNAL,
                     work->what() + ": copying the result out failed: " + e.what());
      return;
    }
    work->complete(SMD_SUCCESS, "");
  };
}

// The title of a Work's profiler event: `title` ("smd:all_reduce") under
// the group's backend name. The profiler keeps the pointer, so each title
// is made once and kept (a few per name).
const char *titled(const std::string &backend, const char *title) {
  if (backend == "smd" || title == nullptr) return title;
  static std::mutex mu;
  static std::set<std::string> titles;
  const char *op = strchr(title, ':');
  std::string full = backend + ":" + (op ? op + 1 : title);
  std::lock_guard<std::mutex> lock(mu);
  return titles.insert(std::move(full)).first->c_str();
}

}  // namespace

ProcessGroupSmd::ProcessGroupSmd(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                                 std::chrono::milliseconds timeout, std::string name)
    : BackendBase(rank, size),
      store_(std::make_unique<StoreAdapter>(store)),
      timeout_(timeout),
      name_(std::move(name)) {
  if (timeout_.count() <= 0)
    throw SmdError(SMD_ERR_INVALID_ARGUMENT, "the process group's timeout must be positive, not " +
                                                 std::to_string(timeout_.count()) + " ms");
  const std::string where = "forming the smd process group (rank " + std::to_string(rank) + " of " +
                            std::to_string(size) + ")";
  std::string prefix;
  try {
    prefix = generation_prefix(store_->store(), size);
  } catch (const std::exception &e) {
    throw SmdError(SMD_ERR_BOOTSTRAP, where + ": the c10d store failed: " + e.what());
  }

  smd_init_options_t options;
  smd_init_options_init(&options);
  options.rank = rank;
  options.world_size = size;
  options.timeout_ms = timeout_.count();
  options.store = store_->ops();
  options.store_prefix = prefix.c_str();
  check(smd_comm_init(&options, &comm_), where);
  smd_result_t rc = smd_comm_dup(comm_, &side_);
  if (rc == SMD_SUCCESS) {
    rc = smd_comm_dup(comm_, &group_comm_);
    if (rc != SMD_SUCCESS) {
      std::string message = last_error(where);
      smd_comm_destroy(side_);
      smd_comm_destroy(comm_);
      throw SmdError(rc, message);
    }
  } else {
    std::string message = last_error(where);
    smd_comm_destroy(comm_);
    throw SmdError(rc, message);
  }
  // A deadline passed: abort the communicators, which ends every pending
  // request here and tells the peers, whose pending operations end too.
  completions_ = std::make_unique<CompletionThread>([this] { abort_communicators(); });
  group_worker_ = std::make_unique<GroupWorker>();
  init();
}

void ProcessGroupSmd::abort_communicators() {
  smd_comm_abort(comm_);
  smd_comm_abort(side_);
  smd_comm_abort(group_comm_);
}

ProcessGroupSmd::~ProcessGroupSmd() {
  // The completion thread may drop the last reference to a tensor whose
  // Python object must then be released, which takes the GIL; Python
  // destroys the group while holding it. Joining the thread (and waiting
  // in smd_comm_destroy) without the GIL rules out that deadlock, the one
  // torch 1.13's own gloo group has.
  bool had_gil = Py_IsInitialized() && PyGILState_Check();
  PyThreadState *saved = had_gil ? PyEval_SaveThread() : nullptr;
  // Groups first: their operations reach the completion thread there.
  group_worker_->finish();
  completions_->finish();
  smd_comm_destroy(group_comm_);
  smd_comm_destroy(side_);
  smd_comm_destroy(comm_);
  if (had_gil) PyEval_RestoreThread(saved);
}

void ProcessGroupSmd::setSequenceNumberForGroup() {}

uint64_t ProcessGroupSmd::getSequenceNumberForGroup() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  return seq_;
}

int ProcessGroupSmd::side_tag(uint64_t seq) { return static_cast<int>(seq % (SMD_TAG_MAX + 1ULL)); }

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::launch(Launch l) {
  std::lock_guard<std::mutex> lock(issue_mu_);
  const uint64_t seq = l.collective ? ++seq_ : seq_;
  std::string what = l.collective ? std::string(l.name) + " #" + std::to_string(seq) : l.name;
  std::vector<c10::Device> devices;
  if (l.where.cuda) devices.emplace_back(c10::DeviceType::CUDA, l.where.device);
  auto work =
      c10::make_intrusive<WorkSmd>(rank_, l.type, titled(name_, l.profiling_title), what, l.outputs,
                                   c10::optional<std::vector<at::Tensor>>(l.inputs), devices);
  work->set_source_rank(l.source_rank);

  auto op = std::make_unique<PendingOp>();
  op->what = what;
  op->needs_polling = l.point_to_point;
  op->timeout_ms = l.timeout.count() > 0 ? l.timeout.count() : timeout_.count();
  op->deadline_ns = CompletionThread::now_ns() + op->timeout_ms * 1000000;
  if (l.inspect)
    op->inspect = [work, inspect = std::move(l.inspect)](smd_request_t *const *r, size_t n) {
      inspect(*work, r, n);
    };
  if (l.grouped) {
    // Refusals by smd now reach the Work, not the caller.
    op->on_done = finishing(work, std::move(l.finish), std::move(l.keep_alive));
    auto job = std::make_shared<std::unique_ptr<PendingOp>>(std::move(op));
    group_worker_->add([this, job, start = std::move(l.start), seq]() mutable {
      run_grouped(std::move(*job), std::move(start), seq);
    });
    return work;
  }
  try {
    // smd takes the buffers' device as the current one (docs/GPU.md).
    c10::OptionalDeviceGuard on_device;
    if (l.where.cuda) on_device.reset_device(devices[0]);
    l.start(op->requests, what, seq);
    if (l.where.cuda) {
      // Stream-ordered: the copies out follow smd's work on the stream.
      if (l.finish) l.finish();
      l.finish = nullptr;
      work->enqueued(stream_wait_after(l.where));
    }
  } catch (...) {
    // Whatever did start still uses the buffers: it is watched to its end,
    // and the caller gets the error now.
    if (!op->requests.empty()) {
      auto buffers = std::move(l.keep_alive);
      op->on_done = [buffers](smd_result_t, const std::string &) {};
      completions_->add(std::move(op));
    }
    throw;
  }
  op->on_done = finishing(work, std::move(l.finish), std::move(l.keep_alive));
  completions_->add(std::move(op));
  return work;
}

void ProcessGroupSmd::run_grouped(std::unique_ptr<PendingOp> op, Start start, uint64_t seq) {
  smd_group_start();
  try {
    start(op->requests, op->what, seq);
  } catch (...) {
    // A refused call fails the whole group: smd_group_end names it, and
    // every request already made completes with that error.
  }
  // Nothing that holds tensors stays on this thread past the hand-over:
  // the Work may complete on the completion thread at once (exit_guard.h).
  start = nullptr;
  const std::string what = op->what;
  // Watched from now on (deadline included); the requests complete when
  // the group has run.
  if (!op->requests.empty()) {
    completions_->add(std::move(op));
    smd_group_end();
    return;
  }
  smd_result_t rc = smd_group_end();
  ReleaseScope releasing;
  op->on_done(rc, rc == SMD_SUCCESS ? "" : last_error(what));
  op.reset();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::launch_into(Launch l, const Staged &out) {
  l.keep_alive.push_back(out.buffer);
  if (out.copied()) l.finish = [out] { out.copy_back(); };
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::launch_pairs(Launch l,
                                                             std::vector<PairCall> pairs) {
  std::vector<Start> starts;
  std::vector<Staged> staged;
  for (auto &pair : pairs) {
    l.keep_alive.push_back(pair.in);
    l.keep_alive.push_back(pair.out.buffer);
    staged.push_back(pair.out);
    starts.push_back(std::move(pair.start));
  }
  l.start = [starts = std::move(starts)](std::vector<smd_request_t *> &requests,
                                         const std::string &what, uint64_t seq) {
    for (const auto &start : starts) start(requests, what, seq);
  };
  l.finish = [staged = std::move(staged)] { copy_back_all(staged); };
  return launch(std::move(l));
}

void ProcessGroupSmd::require_world_sized(const at::Tensor &large, const at::Tensor &small,
                                          const char *call, const std::string &what,
                                          const Placement &where) const {
  require_dense(small, call, where);
  require_like(large, small.scalar_type(), small.numel() * size_, call, what, where);
}

ProcessGroupSmd::Launch ProcessGroupSmd::pairs_launch(
    c10d::OpType type, const char *title, const char *call, std::vector<at::Tensor> &outputs,
    std::vector<at::Tensor> &inputs, std::chrono::milliseconds timeout, bool outputs_larger) const {
  require_pairs(outputs, inputs, call);
  std::vector<at::Tensor> all_tensors = outputs;
  all_tensors.insert(all_tensors.end(), inputs.begin(), inputs.end());
  // CUDA tensors too: DTensor's and FSDP's coalesced gathers and reductions.
  const Placement where = placement_of(call, all_tensors);
  const char *small_side = outputs_larger ? "input " : "output ";
  const char *large_side = outputs_larger ? "output " : "input ";
  for (size_t i = 0; i < inputs.size(); ++i)
    require_world_sized(
        outputs_larger ? outputs[i] : inputs[i], outputs_larger ? inputs[i] : outputs[i], call,
        large_side + std::to_string(i) + " (world size x " + small_side + std::to_string(i) + ")",
        where);
  Launch l(type, title, call, timeout);
  l.inputs = inputs;
  l.outputs = outputs;
  l.where = where;
  return l;
}

ProcessGroupSmd::Start ProcessGroupSmd::one_call(
    std::function<smd_result_t(smd_request_t **)> call) {
  return [call = std::move(call)](std::vector<smd_request_t *> &requests, const std::string &what,
                                  uint64_t) {
    smd_request_t *r = nullptr;
    check(call(&r), what);
    requests.push_back(r);
  };
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::allreduce(std::vector<at::Tensor> &tensors,
                                                          const c10d::AllreduceOptions &opts) {
  if (tensors.size() == 1 && tensors[0].defined() && tensors[0].is_sparse())
    return allreduce_sparse_coo(tensors, opts);
  const Placement where = placement_of("allreduce", tensors);
  require_one(tensors, "allreduce", where);
  const at::Tensor &t = tensors[0];
  ReducePlan plan = plan_reduction(t.scalar_type(), opts.reduceOp, "allreduce");
  Staged out = stage_output(t);
  if (out.copied()) out.buffer.copy_(t);
  premultiply(plan, out.buffer, 0);

  Launch l(c10d::OpType::ALLREDUCE, "smd:all_reduce", "allreduce", opts.timeout);
  l.inputs = l.outputs = tensors;
  l.where = where;
  void *buf = out.buffer.data_ptr();
  const size_t count = out.buffer.numel();
  l.start = one_call([this, plan, buf, count, stream = where.stream](smd_request_t **r) {
    return smd_iallreduce(buf, buf, count, plan.datatype, plan.op, comm_, stream, r);
  });
  return launch_into(std::move(l), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::allreduce_coalesced(
    std::vector<at::Tensor> &tensors, const c10d::AllreduceCoalescedOptions &opts) {
  const char *call = "allreduce_coalesced";
  if (tensors.empty())
    throw SmdError(SMD_ERR_INVALID_ARGUMENT, std::string(call) + ": no tensors were given");
  for (const auto &t : tensors)
    require_like(t, tensors[0].scalar_type(), t.numel(), call, "every tensor");
  ReducePlan plan = plan_reduction(tensors[0].scalar_type(), opts.reduceOp, call);
  // One allreduce per tensor in one smd group: smd fuses them into its
  // balanced buffers (SMD_FUSION_BYTES), no private concatenation here.
  std::vector<Staged> outs;
  for (const auto &t : tensors) {
    Staged out = stage_output(t);
    if (out.copied()) out.buffer.copy_(t);
    premultiply(plan, out.buffer, 0);
    outs.push_back(out);
  }
  Launch l(c10d::OpType::ALLREDUCE_COALESCED, "smd:all_reduce_coalesced", call, opts.timeout);
  l.grouped = true;
  l.inputs = l.outputs = tensors;
  std::vector<std::pair<void *, size_t>> bufs;
  for (const Staged &out : outs) {
    l.keep_alive.push_back(out.buffer);
    bufs.emplace_back(out.buffer.data_ptr(), static_cast<size_t>(out.buffer.numel()));
  }
  l.start = grouped_calls(bufs, [this, plan](void *buf, size_t count, smd_request_t **r) {
    return smd_iallreduce(buf, buf, count, plan.datatype, plan.op, group_comm_, nullptr, r);
  });
  l.finish = [outs] {
    for (const Staged &out : outs)
      if (out.copied()) out.copy_back();
  };
  return launch(std::move(l));
}

ProcessGroupSmd::Start ProcessGroupSmd::grouped_calls(
    std::vector<std::pair<void *, size_t>> bufs,
    std::function<smd_result_t(void *, size_t, smd_request_t **)> call) {
  return [bufs = std::move(bufs), call = std::move(call)](std::vector<smd_request_t *> &requests,
                                                          const std::string &what, uint64_t) {
    for (const auto &[buf, count] : bufs) {
      smd_request_t *r = nullptr;
      smd_result_t rc = call(buf, count, &r);
      if (r) requests.push_back(r);
      check(rc, what);
    }
  };
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::reduce(std::vector<at::Tensor> &tensors,
                                                       const c10d::ReduceOptions &opts) {
  require_one(tensors, "reduce");
  if (opts.rootTensor != 0)
    throw SmdError(SMD_ERR_INVALID_ARGUMENT, "reduce: root tensor must be 0 (one tensor per rank)");
  const at::Tensor &t = tensors[0];
  ReducePlan plan = plan_reduction(t.scalar_type(), opts.reduceOp, "reduce");
  const int root = static_cast<int>(opts.rootRank);
  // The input of other ranks must stay as it was: a premultiplied copy.
  Staged out = stage_output(t);
  if (plan.premultiply && !out.copied()) out.buffer = t.clone();
  if (out.copied()) out.buffer.copy_(t);
  premultiply(plan, out.buffer, 0);

  Launch l(c10d::OpType::REDUCE, "smd:reduce", "reduce", opts.timeout);
  l.inputs = l.outputs = tensors;
  void *buf = out.buffer.data_ptr();
  void *result = root == rank_ ? buf : nullptr;
  const size_t count = out.buffer.numel();
  l.start = one_call([this, plan, root, buf, result, count](smd_request_t **r) {
    return smd_ireduce(buf, result, count, plan.datatype, plan.op, root, comm_, nullptr, r);
  });
  if (root == rank_) return launch_into(std::move(l), out);
  l.keep_alive = {out.buffer};  // only the root receives: nothing to copy back
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::broadcast(std::vector<at::Tensor> &tensors,
                                                          const c10d::BroadcastOptions &opts) {
  const Placement where = placement_of("broadcast", tensors);
  require_one(tensors, "broadcast", where);
  if (opts.rootTensor != 0)
    throw SmdError(SMD_ERR_INVALID_ARGUMENT,
                   "broadcast: root tensor must be 0 (one tensor per rank)");
  const at::Tensor &t = tensors[0];
  const int root = static_cast<int>(opts.rootRank);
  Staged out = stage_output(t);
  if (out.copied() && root == rank_) out.buffer.copy_(t);
  Payload payload = payload_of(out.buffer);

  Launch l(c10d::OpType::BROADCAST, "smd:broadcast", "broadcast", opts.timeout);
  l.inputs = l.outputs = tensors;
  l.where = where;
  void *buf = out.buffer.data_ptr();
  l.start = one_call([this, payload, root, buf, stream = where.stream](smd_request_t **r) {
    return smd_ibroadcast(buf, buf, payload.count, payload.datatype, root, comm_, stream, r);
  });
  return launch_into(std::move(l), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::reduce_scatter(
    std::vector<at::Tensor> &outputs, std::vector<std::vector<at::Tensor>> &inputs,
    const c10d::ReduceScatterOptions &opts) {
  const char *call = "reduce_scatter";
  require_one(outputs, call);
  if (inputs.size() != 1 || inputs[0].size() != static_cast<size_t>(size_))
    throw SmdError(SMD_ERR_INVALID_ARGUMENT, std::string(call) +
                                                 ": the input must be one list of " +
                                                 std::to_string(size_) + " tensors (one per rank)");
  // Input r is rank r's block; blocks may differ in size (rank r's output
  // has input r's size), which smd_reduce_scatterv takes as counts.
  const at::Tensor &t = outputs[0];
  std::vector<size_t> counts;
  bool even = true;
  for (const auto &in : inputs[0]) {
    require_like(in, t.scalar_type(), in.numel(), call, "every input tensor");
    counts.push_back(static_cast<size_t>(in.numel()));
    even &= in.numel() == t.numel();
  }
  require_like(inputs[0][rank_], t.scalar_type(), t.numel(), call,
               "this rank's input (input " + std::to_string(rank_) + ")");
  if (even) counts.clear();  // smd_reduce_scatter: measured as fast, and simpler
  // One send buffer: smd reduces it as one operation (a group of
  // per-rank reduces would cost a collective per rank).
  std::vector<at::Tensor> flats;
  for (const auto &in : inputs[0]) flats.push_back(in.reshape({-1}));
  return start_reduce_scatter(
      at::cat(flats), outputs[0], opts,
      Launch(c10d::OpType::REDUCE_SCATTER, "smd:reduce_scatter", call, opts.timeout), inputs[0],
      std::move(counts));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::_reduce_scatter_base(
    at::Tensor &output, at::Tensor &input, const c10d::ReduceScatterOptions &opts) {
  const char *call = "reduce_scatter_tensor";
  const Placement where = placement_of(call, {output, input});
  require_world_sized(input, output, call, "the input (world size x output)", where);
  Launch l(c10d::OpType::_REDUCE_SCATTER_BASE, "smd:_reduce_scatter_base", call, opts.timeout);
  l.where = where;
  return start_reduce_scatter(input, output, opts, std::move(l), {input});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::start_reduce_scatter(
    const at::Tensor &input, const at::Tensor &output, const c10d::ReduceScatterOptions &opts,
    Launch l, const std::vector<at::Tensor> &inputs, std::vector<size_t> counts) {
  ReducePlan plan = plan_reduction(output.scalar_type(), opts.reduceOp, l.name);
  at::Tensor in = contiguous_input(input);
  if (plan.premultiply) {
    if (in.is_same(input)) in = input.clone();  // the caller's input stays as it was
    premultiply(plan, in, 0);
  }
  Staged out = stage_output(output);
  l.inputs = inputs;
  l.outputs = {output};
  l.keep_alive = {in};
  void *send = in.data_ptr();
  void *recv = out.buffer.data_ptr();
  const size_t count = out.buffer.numel();
  if (counts.empty()) {
    l.start = one_call([this, plan, send, recv, count, stream = l.where.stream](smd_request_t **r) {
      return smd_ireduce_scatter(send, recv, count, plan.datatype, plan.op, comm_, stream, r);
    });
  } else {
    // smd reads the counts when the call is made; the lambda owns them.
    l.start = one_call([this, plan, send, recv, counts = std::move(counts)](smd_request_t **r) {
      return smd_ireduce_scatterv(send, recv, counts.data(), nullptr, plan.datatype, plan.op, comm_,
                                  nullptr, r);
    });
  }
  return launch_into(std::move(l), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::ReduceScatterOptions &opts) {
  const char *call = "reduce_scatter_tensor_coalesced";
  Launch l = pairs_launch(kReduceScatterTensorCoalesced, "smd:reduce_scatter_tensor_coalesced",
                          call, outputs, inputs, opts.timeout, false);
  std::vector<PairCall> pairs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    ReducePlan plan = plan_reduction(outputs[i].scalar_type(), opts.reduceOp, call);
    at::Tensor in = contiguous_input(inputs[i]);
    if (plan.premultiply) {
      if (in.is_same(inputs[i])) in = inputs[i].clone();  // the caller's input stays as it was
      premultiply(plan, in, 0);
    }
    Staged out = stage_output(outputs[i]);
    void *send = in.data_ptr();
    void *recv = out.buffer.data_ptr();
    const size_t count = out.buffer.numel();
    Start start =
        one_call([this, plan, send, recv, count, stream = l.where.stream](smd_request_t **r) {
          return smd_ireduce_scatter(send, recv, count, plan.datatype, plan.op, comm_, stream, r);
        });
    pairs.push_back({in, out, std::move(start)});
  }
  return launch_pairs(std::move(l), std::move(pairs));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::barrier(const c10d::BarrierOptions &opts) {
  Launch l(c10d::OpType::BARRIER, "smd:barrier", "barrier", opts.timeout);
  l.start = one_call([this](smd_request_t **r) { return smd_ibarrier(comm_, nullptr, r); });
  return launch(std::move(l));
}

}  // namespace smd_torch
