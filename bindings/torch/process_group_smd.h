// The c10d backend "smd": every torch.distributed operation of one process
// group, done by smd through include/smd.h.
//
// Each group forms its own smd world through the c10d Store torch hands
// it (env://, tcp://, file://, a new_group's prefixed store alike), so
// groups never wait on each other and overlapping groups just work.
// An operation is checked and started on the caller's thread (so ranks
// start operations in the order torch issues them) and returns a Work at
// once; smd runs collectives on its own worker thread, and this group's
// completion thread finishes each Work when smd is done with it.
// Coalesced operations are one smd group each (smd fuses the calls);
// smd_group_end blocks, so the group worker ends them, on a communicator
// of their own (group_comm_) whose order is the worker's queue order.
#pragma once

#include <smd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "completion_thread.h"
#include "group_worker.h"
#include "work_smd.h"
#include "store_adapter.h"
#include "tensor_staging.h"
#include "torch_compat.h"

namespace smd_torch {

class ProcessGroupSmd : public BackendBase {
 public:
  // Collective over the group's ranks: forms the smd world. Throws
  // SmdError (smd's message) when that fails. `name`: the backend name
  // the group was made under ("smd", "smddp", ...), which titles its
  // profiler events ("smddp:all_reduce", torch's convention).
  ProcessGroupSmd(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                  std::chrono::milliseconds timeout, std::string name = "smd");
  // Waits for the operations still running (each ends by its deadline),
  // then releases the smd communicators.
  ~ProcessGroupSmd() override;

  const std::string getBackendName() const override { return name_; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &tensors,
                                           const c10d::BroadcastOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &tensors,
                                           const c10d::AllreduceOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor> &tensors, const c10d::AllreduceCoalescedOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &tensors,
                                        const c10d::ReduceOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &outputs,
                                                std::vector<std::vector<at::Tensor>> &inputs,
                                                const c10d::ReduceScatterOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor &output, at::Tensor &input, const c10d::ReduceScatterOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &opts) override;
  // Blocks: rank 0 waits for every rank until the deadline, names the ones
  // that did not arrive (gloo's wording, which torch's tests match), then
  // releases them. A failure aborts the group, as a timeout does.
  void monitoredBarrier(const c10d::BarrierOptions &opts, bool wait_all_ranks) override;

  // torch 2.x's coalesced flat forms (FSDP, FSDP2, DTensor): one Work and
  // one sequence number for all pairs, one smd call per pair.
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
      const c10d::AllgatherOptions &opts) SMD_TORCH2_OVERRIDE;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
      const c10d::ReduceScatterOptions &opts) SMD_TORCH2_OVERRIDE;

  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &outputs,
                                           std::vector<at::Tensor> &inputs,
                                           const c10d::AllgatherOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &output, at::Tensor &input,
                                                 const c10d::AllgatherOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>> &output_lists, std::vector<at::Tensor> &inputs,
      const c10d::AllgatherOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &outputs,
                                        std::vector<at::Tensor> &inputs,
                                        const c10d::GatherOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &outputs,
                                         std::vector<std::vector<at::Tensor>> &inputs,
                                         const c10d::ScatterOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &output, at::Tensor &input,
                                               std::vector<int64_t> &output_splits,
                                               std::vector<int64_t> &input_splits,
                                               const c10d::AllToAllOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &outputs,
                                          std::vector<at::Tensor> &inputs,
                                          const c10d::AllToAllOptions &opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &tensors, int src, int tag) override;
  // A receive from any rank (SMD_ANY_SOURCE); the Work's sourceRank() is
  // the sender once it completes.
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &tensors, int tag) override;

  // Every rank's counter starts at 0 when the group forms and counts the
  // group's collectives, so the ranks agree without a store round trip.
  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;

  std::chrono::milliseconds timeout() const { return timeout_; }
  const std::string &name() const { return name_; }

 private:
  // allreduce of a sparse COO tensor (sparse_allreduce.cc).
  c10::intrusive_ptr<c10d::Work> allreduce_sparse_coo(std::vector<at::Tensor> &tensors,
                                                      const c10d::AllreduceOptions &opts);

  // Starts an operation's smd calls (under the issue lock), adding each
  // request to `requests`; throws SmdError when smd refuses.
  using Start = std::function<void(std::vector<smd_request_t *> &requests, const std::string &what,
                                   uint64_t seq)>;

  // One operation to start: what torch sees of it, how to start it in smd
  // and what to do once smd is done.
  struct Launch {
    Launch(c10d::OpType type, const char *profiling_title, const char *name,
           std::chrono::milliseconds timeout = std::chrono::milliseconds(-1))
        : type(type), profiling_title(profiling_title), name(name), timeout(timeout) {}
    c10d::OpType type;
    const char *profiling_title;        // a literal: "smd:all_reduce"
    const char *name;                   // "allreduce", for messages
    std::chrono::milliseconds timeout;  // < 0: the group's
    bool collective = true;             // counts in the sequence number
    bool point_to_point = false;        // its requests need polling
    // `start` makes i-calls on group_comm_ that the group worker runs as
    // one smd group (see run_grouped).
    bool grouped = false;
    std::vector<at::Tensor> inputs;      // for the profiler
    std::vector<at::Tensor> outputs;     // result() and the Future's value
    std::vector<at::Tensor> keep_alive;  // buffers smd uses until done
    Start start;
    // On the completion thread after success: copy staged results out.
    std::function<void()> finish;
    int source_rank = -1;
    // CUDA tensors: the smd calls go on `where.stream`, `finish` runs on
    // the caller's thread right after them (its copies stream-ordered
    // too), and the Work is NCCL's kind (work_smd.h).
    Placement where;
    // On the completion thread once the requests ended, before they are
    // freed: reads what they say (a receive's sender).
    std::function<void(WorkSmd &, smd_request_t *const *, size_t)> inspect;
  };
  c10::intrusive_ptr<c10d::Work> launch(Launch op);
  // The same for an operation whose result smd writes into `out.buffer`,
  // copied to `out.target` afterwards when they differ.
  c10::intrusive_ptr<c10d::Work> launch_into(Launch op, const Staged &out);
  // A Start that makes one smd call: `call(&request)`.
  static Start one_call(std::function<smd_result_t(smd_request_t **)> call);
  // A Start for a grouped Launch that makes `call(buf, count, &request)`
  // for every buffer, so smd fuses them.
  static Start grouped_calls(std::vector<std::pair<void *, size_t>> bufs,
                             std::function<smd_result_t(void *, size_t, smd_request_t **)> call);
  // On the group worker: opens an smd group, starts the operation's calls,
  // hands its requests to the completion thread and ends the group.
  void run_grouped(std::unique_ptr<PendingOp> op, Start start, uint64_t seq);

  // Tag of point-to-point messages that make up the collective `seq` on
  // the side communicator.
  static int side_tag(uint64_t seq);
  // A point-to-point collective (gather, scatter, uneven all-to-all) on
  // the side communicator; `start` sends and receives there.
  Launch side_launch(c10d::OpType type, const char *title, const char *name,
                     std::chrono::milliseconds timeout);

  // reduce_scatter and its flat form, once the input is one flat tensor
  // holding rank r's block of counts[r] elements at displs[r] (counts
  // empty: equal blocks of the output's size, packed).
  c10::intrusive_ptr<c10d::Work> start_reduce_scatter(
      const at::Tensor &input, const at::Tensor &output, const c10d::ReduceScatterOptions &opts,
      Launch l, const std::vector<at::Tensor> &inputs, std::vector<size_t> counts = {});
  // A Start that allgathers `in` into `all` (world size x in) on comm_.
  Start gather_call(const at::Tensor &in, void *all, smd_stream_t stream = nullptr);
  // A Start that all-to-alls `in` into `out` (both contiguous) by rows of
  // dim 0, `in_splits[r]` rows to rank r and `out_splits[r]` from it, with
  // one smd_ialltoallv on comm_.
  Start alltoallv_call(const at::Tensor &in, const at::Tensor &out,
                       const std::vector<int64_t> &in_splits,
                       const std::vector<int64_t> &out_splits, smd_stream_t stream);
  // One call of a coalesced operation: its contiguous input, its staged
  // output and how to start it.
  struct PairCall {
    at::Tensor in;
    Staged out;
    Start start;
  };
  // One Work over every pair's call; each staged output is copied back
  // once all of them are done.
  c10::intrusive_ptr<c10d::Work> launch_pairs(Launch l, std::vector<PairCall> pairs);
  // Throws unless `small` is a dense tensor where `where` says and
  // `large` holds world size x its elements, of its datatype (`what`
  // names `large`).
  void require_world_sized(const at::Tensor &large, const at::Tensor &small, const char *call,
                           const std::string &what, const Placement &where = {}) const;
  // The Launch of a coalesced call on pairs (outputs[i], inputs[i]), each
  // checked: the larger of a pair (the outputs when `outputs_larger`) holds
  // world size x the other's elements, of its datatype.
  Launch pairs_launch(c10d::OpType type, const char *title, const char *call,
                      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
                      std::chrono::milliseconds timeout, bool outputs_larger) const;
  // Aborts the communicators: every pending request here ends, and the
  // peers' pending operations on them too.
  void abort_communicators();
  // The user's send or recv (not a collective: no sequence number).
  // Checks its one tensor (where `where` says), `peer` (in `role`) and
  // `tag`.
  Launch user_p2p(c10d::OpType type, const char *title, const char *name,
                  const std::vector<at::Tensor> &tensors, int peer, int tag, const char *role,
                  const Placement &where = {}) const;
  // Throws unless `peer` is a rank of the group and `tag` one smd carries.
  void require_peer(int peer, int tag, const char *call, const char *role) const;

  std::unique_ptr<StoreAdapter> store_;
  std::chrono::milliseconds timeout_;
  std::string name_;
  // Collectives and the user's send/recv.
  smd_comm_t *comm_ = nullptr;
  // Collectives made of point-to-point messages, whose tags must not meet
  // the user's.
  smd_comm_t *side_ = nullptr;
  // The groups of coalesced operations, issued by group_worker_ only.
  smd_comm_t *group_comm_ = nullptr;
  // Starting order is sequence order on every thread.
  std::mutex issue_mu_;
  uint64_t seq_ = 0;
  std::unique_ptr<CompletionThread> completions_;
  std::unique_ptr<GroupWorker> group_worker_;
};

}  // namespace smd_torch
