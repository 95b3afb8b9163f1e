#include "cuda_tensors.h"

#include <c10/core/Event.h>
#include <c10/cuda/CUDAStream.h>

#include <memory>

namespace smd_torch::cuda {

Placement placement_of(const char *call, const std::vector<at::Tensor> &tensors,
                       const at::Tensor &on_cuda) {
  Placement where;
  where.cuda = true;
  where.device = on_cuda.device().index();
  // require_dense refuses the tensors on the CPU or another device.
  for (const auto &t : tensors) require_dense(t, call, where);
  where.stream = static_cast<smd_stream_t>(
      c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(where.device)).stream());
  return where;
}

std::function<void()> stream_wait_after(const Placement &where) {
  const auto index = static_cast<c10::DeviceIndex>(where.device);
  // torch's device-generic event, which c10_cuda implements, on the
  // stream the call and its copies were enqueued on.
  auto done = std::make_shared<c10::Event>(c10::DeviceType::CUDA);
  done->record(c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(where.stream), index));
  return [done, index] { done->block(c10::cuda::getCurrentCUDAStream(index)); };
}

}  // namespace smd_torch::cuda
