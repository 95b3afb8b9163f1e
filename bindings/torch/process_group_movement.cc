// The operations of ProcessGroupSmd that move data without reducing it:
// allgather and its flat and coalesced forms, gather, scatter, all-to-all,
// send and recv. Gather, scatter and uneven all-to-all are point-to-point
// messages on the side communicator, tagged with their sequence number.
#include <ATen/ATen.h>

#include "process_group_smd.h"
#include "smd_error.h"
#include "tensor_staging.h"
#include "tensor_types.h"

namespace smd_torch {
namespace {

[[noreturn]] void refuse(const char *call, const std::string &why) {
  throw SmdError(SMD_ERR_INVALID_ARGUMENT, std::string(call) + ": " + why);
}

void require_rank(int rank, int size, const char *call, const char *role) {
  if (rank < 0 || rank >= size)
    refuse(call, std::string(role) + " " + std::to_string(rank) +
                     " is not a rank of the group (size " + std::to_string(size) + ")");
}

// A contiguous tensor as one message.
struct Slice {
  void *data;
  Payload payload;
};
Slice whole(const at::Tensor &t) { return {t.data_ptr(), payload_of(t)}; }

// Rows [first, end) of dim 0 (a 0-d tensor is one row).
at::Tensor rows(const at::Tensor &t, int64_t first, int64_t end) {
  return t.dim() == 0 ? t : t.narrow(0, first, end - first);
}

// Starts an isend or irecv of `s` on `comm` unless it is empty (both
// sides know the size, so both skip it); stream-ordered on `stream`
// (CUDA tensors) when not NULL.
void start_p2p(bool sending, const Slice &s, int peer, int tag, smd_comm_t *comm,
               std::vector<smd_request_t *> &requests, const std::string &what,
               smd_stream_t stream = nullptr) {
  if (s.payload.count == 0) return;
  smd_request_t *r = nullptr;
  smd_result_t rc =
      sending ? smd_isend(s.data, s.payload.count, s.payload.datatype, peer, tag, comm, stream, &r)
              : smd_irecv(s.data, s.payload.count, s.payload.datatype, peer, tag, comm, stream, &r);
  check(rc, what + (sending ? ": send to rank " : ": receive from rank ") + std::to_string(peer));
  requests.push_back(r);
}

std::vector<int64_t> offsets_of(const std::vector<int64_t> &splits) {
  std::vector<int64_t> offsets(splits.size() + 1, 0);
  for (size_t i = 0; i < splits.size(); ++i) offsets[i + 1] = offsets[i] + splits[i];
  return offsets;
}

// Empty splits mean equal ones; otherwise there is one per rank, they are
// not negative and they cover dim 0.
std::vector<int64_t> checked_splits(const std::vector<int64_t> &splits, const at::Tensor &t,
                                    int size, const char *call, const char *which) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  if (splits.empty()) {
    if (rows % size != 0)
      refuse(call, std::string(which) + " has " + std::to_string(rows) +
                       " rows in dim 0, not a multiple of the group size " + std::to_string(size));
    return std::vector<int64_t>(size, rows / size);
  }
  if (splits.size() != static_cast<size_t>(size))
    refuse(call, std::string(which) + " splits has " + std::to_string(splits.size()) +
                     " entries, not one per rank (" + std::to_string(size) + ")");
  int64_t total = 0;
  for (int64_t s : splits) {
    if (s < 0) refuse(call, std::string(which) + " splits has a negative entry");
    total += s;
  }
  if (total != rows)
    refuse(call, std::string(which) + " splits add up to " + std::to_string(total) +
                     " rows but dim 0 has " + std::to_string(rows));
  return splits;
}

}  // namespace

ProcessGroupSmd::Launch ProcessGroupSmd::side_launch(c10d::OpType type, const char *title,
                                                     const char *name,
                                                     std::chrono::milliseconds timeout) {
  Launch l(type, title, name, timeout);
  l.point_to_point = true;
  return l;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::allgather(
    std::vector<std::vector<at::Tensor>> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::AllgatherOptions &opts) {
  const char *call = "allgather";
  if (outputs.size() != 1 || outputs[0].size() != static_cast<size_t>(size_))
    refuse(call,
           "the output must be one list of " + std::to_string(size_) + " tensors (one per rank)");
  std::vector<at::Tensor> all_tensors = outputs[0];
  all_tensors.insert(all_tensors.end(), inputs.begin(), inputs.end());
  // CUDA tensors too: DDP checks its parameters' shapes with this call.
  const Placement where = placement_of(call, all_tensors);
  require_one(inputs, call, where);
  const at::Tensor in = contiguous_input(inputs[0]);
  // Output r takes rank r's input, so outputs may differ in size (each
  // rank's input has its own): smd_allgatherv with those counts.
  std::vector<int64_t> offsets(1, 0);
  bool even = true;
  for (const auto &o : outputs[0]) {
    require_like(o, in.scalar_type(), o.numel(), call, "every output", where);
    offsets.push_back(offsets.back() + o.numel());
    even &= o.numel() == in.numel();
  }
  require_like(outputs[0][rank_], in.scalar_type(), in.numel(), call,
               "this rank's output (output " + std::to_string(rank_) + ")", where);
  // On the CUDA device's current stream (the caching allocator's), where
  // the gather and the copies out run.
  at::Tensor flat = at::empty({offsets.back()}, in.options());

  Launch l(c10d::OpType::ALLGATHER, "smd:all_gather", call, opts.timeout);
  l.inputs = inputs;
  l.outputs = outputs[0];
  l.keep_alive = {in, flat};
  l.where = where;
  if (even) {
    l.start = gather_call(in, flat.data_ptr(), where.stream);
  } else {
    // Elements in the datatype smd moves them as (bytes for some dtypes).
    const size_t scale = payload_of(at::empty({1}, in.options())).count;
    std::vector<size_t> counts;
    for (size_t r = 0; r < outputs[0].size(); ++r)
      counts.push_back(static_cast<size_t>(offsets[r + 1] - offsets[r]) * scale);
    const smd_datatype_t datatype = payload_of(in).datatype;
    l.start = one_call([this, mine = in.data_ptr(), all = flat.data_ptr(), datatype,
                        counts = std::move(counts), stream = where.stream](smd_request_t **r) {
      return smd_iallgatherv(mine, all, counts.data(), nullptr, datatype, comm_, stream, r);
    });
  }
  l.finish = [flat, targets = outputs[0], offsets]() mutable {
    for (size_t r = 0; r < targets.size(); ++r)
      targets[r].copy_(
          flat.narrow(0, offsets[r], offsets[r + 1] - offsets[r]).view(targets[r].sizes()));
  };
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::_allgather_base(
    at::Tensor &output, at::Tensor &input, const c10d::AllgatherOptions &opts) {
  const char *call = "allgather_into_tensor";
  const Placement where = placement_of(call, {output, input});
  require_world_sized(output, input, call, "the output (world size x input)", where);
  // An input that already sits in its place in the output is smd's
  // in-place form; contiguous_input() keeps it there.
  at::Tensor in = contiguous_input(input);
  Staged out = stage_output(output);

  Launch l(c10d::OpType::_ALLGATHER_BASE, "smd:_all_gather_base", call, opts.timeout);
  l.inputs = {input};
  l.outputs = {output};
  l.keep_alive = {in};
  l.where = where;
  l.start = gather_call(in, out.buffer.data_ptr(), where.stream);
  return launch_into(std::move(l), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::allgather_into_tensor_coalesced(
    std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::AllgatherOptions &opts) {
  Launch l = pairs_launch(kAllgatherIntoTensorCoalesced, "smd:all_gather_into_tensor_coalesced",
                          "allgather_into_tensor_coalesced", outputs, inputs, opts.timeout, true);
  std::vector<PairCall> pairs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    at::Tensor in = contiguous_input(inputs[i]);
    Staged out = stage_output(outputs[i]);
    pairs.push_back({in, out, gather_call(in, out.buffer.data_ptr(), l.where.stream)});
  }
  return launch_pairs(std::move(l), std::move(pairs));
}

ProcessGroupSmd::Start ProcessGroupSmd::gather_call(const at::Tensor &in, void *all,
                                                    smd_stream_t stream) {
  Payload payload = payload_of(in);
  void *mine = in.data_ptr();
  return one_call([this, payload, mine, all, stream](smd_request_t **r) {
    return smd_iallgather(mine, all, payload.count, payload.datatype, comm_, stream, r);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::allgather_coalesced(
    std::vector<std::vector<at::Tensor>> &output_lists, std::vector<at::Tensor> &inputs,
    const c10d::AllgatherOptions &opts) {
  const char *call = "allgather_coalesced";
  if (output_lists.size() != static_cast<size_t>(size_))
    refuse(call, "there must be one output list per rank (" + std::to_string(size_) + "), not " +
                     std::to_string(output_lists.size()));
  for (const auto &in : inputs) require_dense(in, call);
  for (const auto &list : output_lists) {
    if (list.size() != inputs.size())
      refuse(call, "every output list must hold one tensor per input (" +
                       std::to_string(inputs.size()) + ")");
    for (size_t i = 0; i < list.size(); ++i)
      require_like(list[i], inputs[i].scalar_type(), inputs[i].numel(), call,
                   "output " + std::to_string(i) + " of a list");
  }
  // Packed into one allgather: measured 4-8x faster for 100 tensors of
  // 1 KiB than one allgather per tensor in an smd group (groups fuse only
  // allreduces; bindings/torch/README.md), and as fast for large ones.
  Packing packing = plan_packing(inputs);
  auto bytes = static_cast<int64_t>(packing.bytes);
  at::Tensor mine = at::empty({bytes}, at::kByte);
  pack(inputs, packing, mine, 0);
  at::Tensor all = at::empty({bytes * size_}, at::kByte);

  Launch l(c10d::OpType::ALLGATHER_COALESCED, "smd:all_gather_coalesced", call, opts.timeout);
  l.inputs = inputs;
  for (const auto &list : output_lists) l.outputs.insert(l.outputs.end(), list.begin(), list.end());
  l.keep_alive = {mine, all};
  l.start = gather_call(mine, all.data_ptr());
  l.finish = [all, packing, lists = output_lists, call]() mutable {
    check_layouts(all, packing, static_cast<int>(lists.size()), call);
    for (size_t r = 0; r < lists.size(); ++r) unpack(all, packing, r * packing.bytes, lists[r]);
  };
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::gather(
    std::vector<std::vector<at::Tensor>> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::GatherOptions &opts) {
  const char *call = "gather";
  require_one(inputs, call);
  const int root = static_cast<int>(opts.rootRank);
  require_rank(root, size_, call, "root");
  at::Tensor in = contiguous_input(inputs[0]);
  std::vector<Staged> slots;
  if (rank_ == root) {
    if (outputs.size() != 1 || outputs[0].size() != static_cast<size_t>(size_))
      refuse(call, "the root's output must be one list of " + std::to_string(size_) + " tensors");
    for (const auto &o : outputs[0]) {
      require_like(o, in.scalar_type(), in.numel(), call, "every output");
      slots.push_back(stage_output(o));
    }
  } else if (!outputs.empty() && !outputs[0].empty()) {
    refuse(call, "only the root (rank " + std::to_string(root) + ") takes outputs");
  }

  Launch l = side_launch(c10d::OpType::GATHER, "smd:gather", call, opts.timeout);
  l.inputs = inputs;
  if (rank_ == root) l.outputs = outputs[0];
  l.keep_alive = {in};
  for (const auto &s : slots) l.keep_alive.push_back(s.buffer);
  l.start = [this, in, slots, root](auto &requests, const std::string &what, uint64_t seq) {
    const int tag = side_tag(seq);
    if (rank_ != root) {
      start_p2p(true, whole(in), root, tag, side_, requests, what);
      return;
    }
    for (int r = 0; r < size_; ++r) {
      const at::Tensor &buf = slots[r].buffer;
      if (r == rank_) buf.copy_(in.view(buf.sizes()));
      else start_p2p(false, whole(buf), r, tag, side_, requests, what);
    }
  };
  l.finish = [slots] {
    for (const auto &s : slots) s.copy_back();
  };
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::scatter(
    std::vector<at::Tensor> &outputs, std::vector<std::vector<at::Tensor>> &inputs,
    const c10d::ScatterOptions &opts) {
  const char *call = "scatter";
  require_one(outputs, call);
  const int root = static_cast<int>(opts.rootRank);
  require_rank(root, size_, call, "root");
  Staged out = stage_output(outputs[0]);
  std::vector<at::Tensor> sources;
  if (rank_ == root) {
    if (inputs.size() != 1 || inputs[0].size() != static_cast<size_t>(size_))
      refuse(call, "the root's input must be one list of " + std::to_string(size_) + " tensors");
    for (const auto &in : inputs[0]) {
      require_like(in, out.buffer.scalar_type(), out.buffer.numel(), call, "every input");
      sources.push_back(contiguous_input(in));
    }
  } else if (!inputs.empty() && !inputs[0].empty()) {
    refuse(call, "only the root (rank " + std::to_string(root) + ") takes inputs");
  }

  Launch l = side_launch(c10d::OpType::SCATTER, "smd:scatter", call, opts.timeout);
  if (rank_ == root) l.inputs = inputs[0];
  l.outputs = outputs;
  l.keep_alive = sources;
  l.start = [this, sources, root, buf = out.buffer](auto &requests, const std::string &what,
                                                    uint64_t seq) {
    const int tag = side_tag(seq);
    if (rank_ != root) {
      start_p2p(false, whole(buf), root, tag, side_, requests, what);
      return;
    }
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) buf.copy_(sources[r].view(buf.sizes()));
      else start_p2p(true, whole(sources[r]), r, tag, side_, requests, what);
    }
  };
  return launch_into(std::move(l), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::alltoall_base(at::Tensor &output, at::Tensor &input,
                                                              std::vector<int64_t> &output_splits,
                                                              std::vector<int64_t> &input_splits,
                                                              const c10d::AllToAllOptions &opts) {
  const char *call = "alltoall_base";
  const Placement where = placement_of(call, {input, output});
  require_dense(input, call, where);
  require_dense(output, call, where);
  if (output.scalar_type() != input.scalar_type())
    refuse(call, "the output is " + std::string(c10::toString(output.scalar_type())) +
                     " but the input " + c10::toString(input.scalar_type()));
  auto in_splits = checked_splits(input_splits, input, size_, call, "the input");
  auto out_splits = checked_splits(output_splits, output, size_, call, "the output");
  at::Tensor in = contiguous_input(input);
  Staged out = stage_output(output);
  const bool even = std::all_of(in_splits.begin(), in_splits.end(),
                                [&](int64_t s) { return s == in_splits[0]; }) &&
                    in_splits == out_splits;
  Launch l = side_launch(c10d::OpType::ALLTOALL_BASE, "smd:all_to_all", "alltoall", opts.timeout);
  l.inputs = {input};
  l.outputs = {output};
  l.keep_alive = {in};
  l.where = where;
  if (even) {
    // smd's own all-to-all: blocks of equal size.
    l.point_to_point = false;
    Payload block = payload_of(in.view({-1}).narrow(0, 0, in.numel() / size_));
    void *send = in.data_ptr();
    void *recv = out.buffer.data_ptr();
    l.start = one_call([this, block, send, recv, stream = where.stream](smd_request_t **r) {
      return smd_ialltoall(send, recv, block.count, block.datatype, comm_, stream, r);
    });
    return launch_into(std::move(l), out);
  }
  if (where.cuda) {
    // Stream-ordered point-to-point calls run one at a time on smd's
    // stream proxy, so the pairwise messages below would wait for each
    // other: smd's all-to-all-v takes the splits as counts instead.
    l.point_to_point = false;
    l.start = alltoallv_call(in, out.buffer, in_splits, out_splits, where.stream);
    return launch_into(std::move(l), out);
  }
  auto in_offsets = offsets_of(in_splits);
  auto out_offsets = offsets_of(out_splits);
  l.start = [this, in, in_offsets, out_offsets, buf = out.buffer](
                auto &requests, const std::string &what, uint64_t seq) {
    const int tag = side_tag(seq);
    for (int r = 0; r < size_; ++r) {
      at::Tensor to = rows(buf, out_offsets[r], out_offsets[r + 1]);
      at::Tensor from = rows(in, in_offsets[r], in_offsets[r + 1]);
      if (r == rank_) {
        to.copy_(from);
        continue;
      }
      start_p2p(false, whole(to), r, tag, side_, requests, what);
      start_p2p(true, whole(from), r, tag, side_, requests, what);
    }
  };
  return launch_into(std::move(l), out);
}

ProcessGroupSmd::Start ProcessGroupSmd::alltoallv_call(const at::Tensor &in, const at::Tensor &out,
                                                       const std::vector<int64_t> &in_splits,
                                                       const std::vector<int64_t> &out_splits,
                                                       smd_stream_t stream) {
  // Counts and displacements in the elements smd moves (bytes for the
  // dtypes it has no datatype for), from rows of dim 0.
  const auto typed = smd_datatype_of(in.scalar_type());
  const smd_datatype_t datatype = typed ? *typed : SMD_UINT8;
  const size_t scale = typed ? 1 : in.element_size();
  auto row_units = [scale](const at::Tensor &t) {
    return scale *
           static_cast<size_t>(t.dim() == 0 ? 1 : c10::multiply_integers(t.sizes().slice(1)));
  };
  auto in_offsets = offsets_of(in_splits);
  auto out_offsets = offsets_of(out_splits);
  std::vector<size_t> sendcounts, sdispls, recvcounts, rdispls;
  for (int r = 0; r < size_; ++r) {
    sendcounts.push_back(static_cast<size_t>(in_splits[r]) * row_units(in));
    sdispls.push_back(static_cast<size_t>(in_offsets[r]) * row_units(in));
    recvcounts.push_back(static_cast<size_t>(out_splits[r]) * row_units(out));
    rdispls.push_back(static_cast<size_t>(out_offsets[r]) * row_units(out));
  }
  return one_call([this, send = in.data_ptr(), recv = out.data_ptr(), datatype, stream,
                   sendcounts = std::move(sendcounts), sdispls = std::move(sdispls),
                   recvcounts = std::move(recvcounts),
                   rdispls = std::move(rdispls)](smd_request_t **r) {
    return smd_ialltoallv(send, sendcounts.data(), sdispls.data(), recv, recvcounts.data(),
                          rdispls.data(), datatype, comm_, stream, r);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::alltoall(std::vector<at::Tensor> &outputs,
                                                         std::vector<at::Tensor> &inputs,
                                                         const c10d::AllToAllOptions &opts) {
  const char *call = "alltoall";
  if (outputs.size() != static_cast<size_t>(size_) || inputs.size() != static_cast<size_t>(size_))
    refuse(call, "takes one input and one output tensor per rank (" + std::to_string(size_) + ")");
  std::vector<at::Tensor> sources;
  std::vector<Staged> slots;
  for (int r = 0; r < size_; ++r) {
    require_dense(inputs[r], call);
    require_dense(outputs[r], call);
    sources.push_back(contiguous_input(inputs[r]));
    slots.push_back(stage_output(outputs[r]));
  }

  Launch l = side_launch(c10d::OpType::ALLTOALL, "smd:all_to_all", call, opts.timeout);
  l.inputs = inputs;
  l.outputs = outputs;
  l.keep_alive = sources;
  for (const auto &s : slots) l.keep_alive.push_back(s.buffer);
  l.start = [this, sources, slots](auto &requests, const std::string &what, uint64_t seq) {
    const int tag = side_tag(seq);
    for (int r = 0; r < size_; ++r) {
      const at::Tensor &buf = slots[r].buffer;
      if (r == rank_) {
        buf.view({-1}).copy_(sources[r].view({-1}));
        continue;
      }
      start_p2p(false, whole(buf), r, tag, side_, requests, what);
      start_p2p(true, whole(sources[r]), r, tag, side_, requests, what);
    }
  };
  l.finish = [slots] {
    for (const auto &s : slots) s.copy_back();
  };
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::send(std::vector<at::Tensor> &tensors, int dst,
                                                     int tag) {
  const Placement where = placement_of("send", tensors);
  Launch l =
      user_p2p(c10d::OpType::SEND, "smd:send", "send", tensors, dst, tag, "destination", where);
  at::Tensor in = contiguous_input(tensors[0]);
  l.keep_alive = {in};
  l.start = [this, in, dst, tag, stream = where.stream](auto &requests, const std::string &what,
                                                        uint64_t) {
    start_p2p(true, whole(in), dst, tag, comm_, requests, what, stream);
  };
  return launch(std::move(l));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::recv(std::vector<at::Tensor> &tensors, int src,
                                                     int tag) {
  const Placement where = placement_of("recv", tensors);
  Launch l = user_p2p(c10d::OpType::RECV, "smd:recv", "recv", tensors, src, tag, "source", where);
  Staged out = stage_output(tensors[0]);
  l.outputs = tensors;
  l.source_rank = src;
  l.start = [this, src, tag, buf = out.buffer, stream = where.stream](
                auto &requests, const std::string &what, uint64_t) {
    start_p2p(false, whole(buf), src, tag, comm_, requests, what, stream);
  };
  return launch_into(std::move(l), out);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::recvAnysource(std::vector<at::Tensor> &tensors,
                                                              int tag) {
  // rank_ as the peer: only the tag's range is checked.
  Launch l = user_p2p(c10d::OpType::RECVANYSOURCE, "smd:recvAnySource", "recvAnysource", tensors,
                      rank_, tag, "source");
  Staged out = stage_output(tensors[0]);
  l.outputs = tensors;
  l.start = [this, tag, buf = out.buffer](auto &requests, const std::string &what, uint64_t) {
    start_p2p(false, whole(buf), SMD_ANY_SOURCE, tag, comm_, requests, what);
  };
  // The sender, as c10d reads it from Work::sourceRank().
  l.inspect = [](WorkSmd &work, smd_request_t *const *requests, size_t n) {
    smd_status_t st = SMD_STATUS_INIT;
    if (n == 1 && smd_request_get_status(requests[0], &st) == SMD_SUCCESS && st.source >= 0)
      work.set_source_rank(st.source);
  };
  return launch_into(std::move(l), out);
}

ProcessGroupSmd::Launch ProcessGroupSmd::user_p2p(c10d::OpType type, const char *title,
                                                  const char *name,
                                                  const std::vector<at::Tensor> &tensors, int peer,
                                                  int tag, const char *role,
                                                  const Placement &where) const {
  require_one(tensors, name, where);
  require_peer(peer, tag, name, role);
  Launch l(type, title, name);
  l.where = where;
  l.inputs = tensors;  // the profiler's shapes, as gloo gives them
  l.collective = false;
  l.point_to_point = true;
  return l;
}

void ProcessGroupSmd::require_peer(int peer, int tag, const char *call, const char *role) const {
  require_rank(peer, size_, call, role);
  if (tag < 0 || tag > SMD_TAG_MAX)
    refuse(call,
           "tag " + std::to_string(tag) + " is outside smd's 0.." + std::to_string(SMD_TAG_MAX));
}

}  // namespace smd_torch
