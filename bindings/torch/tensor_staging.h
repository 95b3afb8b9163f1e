// Tensors as smd buffers: the checks every operation makes (CPU or one
// CUDA device, dense, one tensor per call), contiguous copies where a
// tensor is strided (see bindings/torch/README.md: such tensors cost a copy
// in and out), and packing several tensors into one byte buffer for a
// single smd call.
#pragma once

#include <smd.h>
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/util/fnv1a.h"

namespace smd_torch {

// Where one call's tensors are: the host (the default), or one CUDA
// device, whose current stream then orders the smd call as NCCL's calls
// are (docs/GPU.md, "The contract"). Only the operations that call
// placement_of() take CUDA tensors; the others keep the host default.
struct Placement {
  bool cuda = false;
  int device = -1;                // the CUDA device's index
  smd_stream_t stream = nullptr;  // its current stream when the call was made
};
// The placement of a call that takes CUDA tensors: the host when none of
// `tensors` is a CUDA tensor, else their one CUDA device (mixed devices
// are refused, and every CUDA tensor when the backend was built without a
// CUDA torch).
Placement placement_of(const char *call, const std::vector<at::Tensor> &tensors);
// For a CUDA placement, after its smd calls and copies are enqueued:
// records an event on the stream and returns what makes the caller's
// current stream wait on it (Work::wait and synchronize); nullptr on the
// host.
std::function<void()> stream_wait_after(const Placement &where);

// Throws SmdError naming `call` unless the tensor is dense and where
// `where` says (the host by default).
void require_dense(const at::Tensor &t, const char *call, const Placement &where = {});

// Throws unless `tensors` holds exactly one tensor (smd takes one per rank;
// torch's lists of several are the old one-process-many-GPUs form).
void require_one(const std::vector<at::Tensor> &tensors, const char *call,
                 const Placement &where = {});

// Throws unless `t` has `type` and `numel` elements; `what` names it.
void require_like(const at::Tensor &t, at::ScalarType type, int64_t numel, const char *call,
                  const std::string &what, const Placement &where = {});

// The tensor itself if contiguous, else a contiguous copy (inputs).
at::Tensor contiguous_input(const at::Tensor &t);

// Where smd writes a result meant for `target`: the tensor itself when
// contiguous, else a contiguous buffer that copy_back() copies out.
struct Staged {
  at::Tensor target;
  at::Tensor buffer;
  bool copied() const { return !buffer.is_same(target); }
  void copy_back() const;
};
Staged stage_output(const at::Tensor &target);
// copy_back() of every staged result that was copied.
void copy_back_all(const std::vector<Staged> &staged);

// Throws unless there is one output per input (the coalesced flat forms).
void require_pairs(const std::vector<at::Tensor> &outputs, const std::vector<at::Tensor> &inputs,
                   const char *call);

// The digests of tensor layouts that ranks compare before moving data laid
// out by them: the core's FNV-1a, fed 64-bit values (mix_u64).
using LayoutDigest = smd::Fnv1a64;

// Several tensors of any dtypes side by side in one uint8 tensor, each at
// a 16-byte aligned offset (so a byte range can be viewed as any dtype),
// after a 16-byte header with the digest of the layout (how many tensors,
// their dtypes and sizes): ranks whose packings differ but add up to the
// same bytes would otherwise unpack each other's tensors at wrong offsets.
struct Packing {
  std::vector<size_t> offsets;
  size_t bytes = 0;
  uint64_t layout = 0;
};
Packing plan_packing(const std::vector<at::Tensor> &tensors);
// Copies the header and `tensors` into `flat` (uint8, at least
// packing.bytes long) at `base` bytes.
void pack(const std::vector<at::Tensor> &tensors, const Packing &packing, at::Tensor &flat,
          size_t base);
// Throws SmdError SMD_ERR_MISMATCH unless each of the `ranks` packings
// gathered side by side in `flat` has this rank's layout (every rank sees
// every header, so every rank throws).
void check_layouts(const at::Tensor &flat, const Packing &packing, int ranks, const char *call);
// Copies out of `flat` at `base` bytes into `tensors` (shapes and dtypes
// as planned).
void unpack(const at::Tensor &flat, const Packing &packing, size_t base,
            std::vector<at::Tensor> &tensors);

// A flat, contiguous view of `t`'s elements (t must be contiguous).
at::Tensor flat_view(const at::Tensor &t);

}  // namespace smd_torch
