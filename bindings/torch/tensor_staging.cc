#include "tensor_staging.h"

#include <ATen/ATen.h>

#include <cstring>
#include <string>

#include "smd_error.h"
#if SMD_TORCH_CUDA
#include "cuda_tensors.h"
#endif

namespace smd_torch {
namespace {

constexpr size_t kAlign = 16;

at::Tensor bytes_as(const at::Tensor &flat, size_t offset, const at::Tensor &like) {
  return flat.narrow(0, static_cast<int64_t>(offset), static_cast<int64_t>(like.nbytes()))
      .view(like.scalar_type())
      .view(like.sizes());
}

// Which operations take CUDA tensors, for the refusals of the others.
constexpr const char *kCudaCalls =
    "allreduce, broadcast, allgather, allgather_into_tensor (and its coalesced form), "
    "reduce_scatter_tensor (and its coalesced form), all_to_all_single, send and recv";

}  // namespace

Placement placement_of(const char *call, const std::vector<at::Tensor> &tensors) {
  const at::Tensor *on_cuda = nullptr;
  for (const auto &t : tensors)
    if (!on_cuda && t.defined() && t.device().is_cuda()) on_cuda = &t;
  if (!on_cuda) return {};
#if SMD_TORCH_CUDA
  return cuda::placement_of(call, tensors, *on_cuda);
#else
  refuse(SMD_ERR_NOT_SUPPORTED, call,
         "this smd c10d backend was built without CUDA torch (against a CPU-only torch, or "
         "with -Dtorch_cuda=disabled), so it takes CPU tensors only; built against a CUDA "
         "torch, it takes CUDA tensors in " +
             std::string(kCudaCalls) + " (this one is on " + on_cuda->device().str() + ")");
#endif
}

std::function<void()> stream_wait_after(const Placement &where) {
  if (!where.cuda) return nullptr;
#if SMD_TORCH_CUDA
  return cuda::stream_wait_after(where);
#else
  return nullptr;
#endif
}

void require_dense(const at::Tensor &t, const char *call, const Placement &where) {
  if (!t.defined()) refuse(SMD_ERR_INVALID_ARGUMENT, call, "a tensor is undefined (None)");
  if (t.layout() != at::kStrided)
    refuse(SMD_ERR_NOT_SUPPORTED, call,
           std::string("smd takes dense tensors; this one is ") + c10::str(t.layout()));
  if (where.cuda) {
    if (!t.device().is_cuda() || t.device().index() != where.device)
      refuse(SMD_ERR_INVALID_ARGUMENT, call,
             "one call's tensors must all be on one CUDA device or all on the CPU; this one is "
             "on " +
                 t.device().str() + ", another on cuda:" + std::to_string(where.device));
    return;
  }
  if (t.device().is_cpu()) return;
  refuse(SMD_ERR_NOT_SUPPORTED, call,
         std::string(SMD_TORCH_CUDA ? "takes CPU tensors here (CUDA tensors only in "
                                    : "takes CPU tensors (this smd c10d backend was built "
                                      "without CUDA torch; with it, CUDA tensors too in ") +
             kCudaCalls + "); this one is on " + t.device().str());
}

void require_one(const std::vector<at::Tensor> &tensors, const char *call, const Placement &where) {
  if (tensors.size() != 1)
    refuse(SMD_ERR_INVALID_ARGUMENT, call,
           "smd takes exactly one tensor per rank, not " + std::to_string(tensors.size()));
  require_dense(tensors[0], call, where);
}

void require_like(const at::Tensor &t, at::ScalarType type, int64_t numel, const char *call,
                  const std::string &what, const Placement &where) {
  require_dense(t, call, where);
  if (t.scalar_type() != type)
    refuse(
        SMD_ERR_INVALID_ARGUMENT, call,
        what + " is " + c10::toString(t.scalar_type()) + " but should be " + c10::toString(type));
  if (t.numel() != numel)
    refuse(SMD_ERR_INVALID_ARGUMENT, call,
           what + " has " + std::to_string(t.numel()) + " elements but should have " +
               std::to_string(numel));
}

at::Tensor contiguous_input(const at::Tensor &t) { return t.contiguous(); }

Staged stage_output(const at::Tensor &target) {
  if (target.is_contiguous()) return {target, target};
  return {target, at::empty_like(target, at::MemoryFormat::Contiguous)};
}

void copy_back_all(const std::vector<Staged> &staged) {
  for (const auto &out : staged)
    if (out.copied()) out.copy_back();
}

void require_pairs(const std::vector<at::Tensor> &outputs, const std::vector<at::Tensor> &inputs,
                   const char *call) {
  if (outputs.size() != inputs.size())
    refuse(SMD_ERR_INVALID_ARGUMENT, call,
           std::to_string(outputs.size()) + " outputs but " + std::to_string(inputs.size()) +
               " inputs (one output per input)");
}

void Staged::copy_back() const {
  if (copied()) target.copy_(buffer);
}

Packing plan_packing(const std::vector<at::Tensor> &tensors) {
  Packing p;
  p.bytes = kAlign;  // the header
  LayoutDigest digest;
  digest.mix_u64(tensors.size());
  for (const auto &t : tensors) {
    p.offsets.push_back(p.bytes);
    p.bytes += (t.nbytes() + kAlign - 1) / kAlign * kAlign;
    digest.mix_u64(static_cast<uint64_t>(t.scalar_type()));
    digest.mix_u64(t.nbytes());
  }
  p.layout = digest.value();
  return p;
}

void pack(const std::vector<at::Tensor> &tensors, const Packing &packing, at::Tensor &flat,
          size_t base) {
  uint8_t header[kAlign] = {};
  std::memcpy(header, &packing.layout, sizeof packing.layout);
  std::memcpy(flat.data_ptr<uint8_t>() + base, header, sizeof header);
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].numel()) bytes_as(flat, base + packing.offsets[i], tensors[i]).copy_(tensors[i]);
}

void unpack(const at::Tensor &flat, const Packing &packing, size_t base,
            std::vector<at::Tensor> &tensors) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].numel()) tensors[i].copy_(bytes_as(flat, base + packing.offsets[i], tensors[i]));
}

void check_layouts(const at::Tensor &flat, const Packing &packing, int ranks, const char *call) {
  const uint8_t *all = flat.data_ptr<uint8_t>();
  for (int r = 0; r < ranks; ++r) {
    uint64_t theirs = 0;
    std::memcpy(&theirs, all + static_cast<size_t>(r) * packing.bytes, sizeof theirs);
    if (theirs != packing.layout)
      throw SmdError(SMD_ERR_MISMATCH,
                     std::string(call) + ": rank " + std::to_string(r) +
                         " passed other tensors (their number, dtypes or sizes) than this rank, "
                         "of the same packed size: layout digest " +
                         std::to_string(theirs) + " there, " + std::to_string(packing.layout) +
                         " here");
  }
}

at::Tensor flat_view(const at::Tensor &t) { return t.view({-1}); }

}  // namespace smd_torch
