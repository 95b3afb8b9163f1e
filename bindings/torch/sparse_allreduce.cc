// ProcessGroupSmd::allreduce of a sparse COO tensor (SUM, as gloo offers;
// DDP sends sparse gradients of nn.Embedding(sparse=True) this way). The
// ranks first allgather how many entries each has, with a digest of the
// tensor's shape and dtype so that ranks that disagree fail together;
// then every rank's indices and values are allgathered and summed into one
// coalesced tensor, which replaces the input's contents.
#include <ATen/ATen.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "process_group_smd.h"
#include "smd_error.h"
#include "tensor_staging.h"

namespace smd_torch {
namespace {

// What every rank's tensor must share: dtype, sparse and dense dims, sizes.
int64_t layout_digest(const at::Tensor &t) {
  LayoutDigest digest;
  digest.mix_u64(static_cast<uint64_t>(t.scalar_type()));
  digest.mix_u64(static_cast<uint64_t>(t.sparse_dim()));
  digest.mix_u64(static_cast<uint64_t>(t.dense_dim()));
  for (int64_t s : t.sizes()) digest.mix_u64(static_cast<uint64_t>(s));
  return static_cast<int64_t>(digest.value() >> 1);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupSmd::allreduce_sparse_coo(
    std::vector<at::Tensor> &tensors, const c10d::AllreduceOptions &opts) {
  const char *call = "allreduce";
  at::Tensor &t = tensors[0];
  if (t.layout() != at::kSparse)
    refuse(
        SMD_ERR_NOT_SUPPORTED, call,
        std::string("smd takes dense or sparse COO tensors; this one is ") + c10::str(t.layout()));
  if (!t.device().is_cpu())
    refuse(SMD_ERR_NOT_SUPPORTED, call,
           "a sparse tensor on " + t.device().str() + " (smd takes CPU tensors in this release)");
  if (opts.reduceOp != c10d::ReduceOp::SUM)
    refuse(SMD_ERR_NOT_SUPPORTED, call,
           "a sparse tensor reduces with SUM only (as with gloo), not op " +
               std::to_string(static_cast<int>(opts.reduceOp.op_)));

  at::Tensor input = t.coalesce();
  const int64_t sparse_dim = input.sparse_dim();
  // Entries as rows: [nnz, sparse_dim] indices and [nnz, dense...] values,
  // so that the ranks' blocks concatenate into the whole.
  at::Tensor indices = input._indices().t().contiguous();
  at::Tensor values = input._values().contiguous();
  const int64_t value_row_bytes =
      static_cast<int64_t>(values.element_size()) * c10::multiply_integers(values.sizes().slice(1));

  // Counts and the layout digest of every rank, before any data moves.
  const std::string what = std::string(call) + " of a sparse tensor";
  int64_t mine[2] = {input._nnz(), layout_digest(input)};
  auto all = std::make_shared<std::vector<int64_t>>(2 * static_cast<size_t>(size_));
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    check(smd_allgather(mine, all->data(), 2, SMD_INT64, comm_, nullptr), what);
  }
  int64_t total = 0;
  for (int r = 0; r < size_; ++r) {
    if ((*all)[2 * r + 1] != mine[1])
      throw SmdError(SMD_ERR_MISMATCH,
                     what + ": rank " + std::to_string(r) +
                         " gave a sparse tensor of another dtype, shape or number of sparse "
                         "dimensions than rank " +
                         std::to_string(rank_) + "'s " + c10::str(t.sizes()));
    total += (*all)[2 * r];
  }

  // Byte counts and offsets of every rank's block of indices and values.
  struct Blocks {
    std::vector<size_t> index_counts, index_displs, value_counts, value_displs;
  };
  auto blocks = std::make_shared<Blocks>();
  size_t index_at = 0, value_at = 0;
  for (int r = 0; r < size_; ++r) {
    size_t n = static_cast<size_t>((*all)[2 * r]);
    blocks->index_counts.push_back(n * static_cast<size_t>(sparse_dim) * sizeof(int64_t));
    blocks->index_displs.push_back(index_at);
    blocks->value_counts.push_back(n * static_cast<size_t>(value_row_bytes));
    blocks->value_displs.push_back(value_at);
    index_at += blocks->index_counts.back();
    value_at += blocks->value_counts.back();
  }
  std::vector<int64_t> value_shape(values.sizes().begin(), values.sizes().end());
  value_shape[0] = total;
  at::Tensor all_indices = at::empty({total, sparse_dim}, at::kLong);
  at::Tensor all_values = at::empty(value_shape, values.options());

  Launch l(c10d::OpType::ALLREDUCE, "smd:all_reduce", call, opts.timeout);
  l.inputs = l.outputs = tensors;
  l.keep_alive = {indices, values, all_indices, all_values};
  l.start = [this, blocks, indices, values, all_indices, all_values](
                std::vector<smd_request_t *> &requests, const std::string &what, uint64_t) {
    smd_request_t *r = nullptr;
    check(smd_iallgatherv(indices.data_ptr(), all_indices.data_ptr(), blocks->index_counts.data(),
                          blocks->index_displs.data(), SMD_UINT8, comm_, nullptr, &r),
          what);
    requests.push_back(r);
    check(smd_iallgatherv(values.data_ptr(), all_values.data_ptr(), blocks->value_counts.data(),
                          blocks->value_displs.data(), SMD_UINT8, comm_, nullptr, &r),
          what);
    requests.push_back(r);
  };
  at::Tensor target = t;
  l.finish = [blocks, target, all_indices, all_values]() mutable {
    at::Tensor sum =
        at::sparse_coo_tensor(all_indices.t(), all_values, target.sizes(), target.options())
            .coalesce();
    target.copy_(sum);
  };
  return launch(std::move(l));
}

}  // namespace smd_torch
