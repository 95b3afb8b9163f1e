#include "core/coll/algorithms/device_direct.h"

#include <strings.h>

#include "core/coll/coll_state.h"
#include "core/comm/communicator.h"
#include "core/comm/context.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/pointer_kind.h"
#include "core/plugin/transport.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {
namespace {

enum class DirectMode { kAuto, kOn, kOff };

DirectMode direct_mode() {
  const std::string v = param_string("SMD_GPU_DIRECT");
  if (!strcasecmp(v.c_str(), "auto")) return DirectMode::kAuto;
  if (!strcasecmp(v.c_str(), "on") || v == "1") return DirectMode::kOn;
  if (!strcasecmp(v.c_str(), "off") || v == "0") return DirectMode::kOff;
  fail(SMD_ERR_INVALID_ARGUMENT, "SMD_GPU_DIRECT must be auto, on or off, not '%s'", v.c_str());
}

const char *mode_name(DirectMode m) {
  return m == DirectMode::kOn ? "on" : m == DirectMode::kOff ? "off" : "auto";
}

// The transports of the communicator's world that do not move device
// memory, by name ("" when every one does). A world without transports
// (one process) has none that declares it either: auto keeps it staged.
std::string transports_without_device_memory(Comm &comm) {
  std::string names;
  for (const Transport *t : comm.ctx().transports())
    if (!t->has(SMD_TRANSPORT_CAP_DEVICE_MEMORY)) names += (names.empty() ? "" : ", ") + t->name();
  if (comm.ctx().transports().empty()) names = "none (one process)";
  return names;
}

}  // namespace

std::string device_direct_setting() { return mode_name(direct_mode()); }

bool transports_move_device_memory(Comm &world) {
  return transports_without_device_memory(world).empty();
}

bool device_direct_applies(Comm &comm) {
  CollState &st = coll_state(comm);
  if (st.device_direct >= 0) return st.device_direct == 1;
  const DirectMode m = direct_mode();
  bool direct = false;
  if (m != DirectMode::kOff) {
    // Every rank's answer, agreed when the world formed: one route for all.
    direct = comm.ctx().device_memory_everywhere();
    // One process moves nothing between ranks: on needs no transport.
    if (m == DirectMode::kOn && comm.ctx().transports().empty()) direct = true;
    if (!direct && m == DirectMode::kOn) {
      std::string lacking = transports_without_device_memory(comm);
      if (lacking.empty()) lacking = "of another rank";
      const gpu::CudaApi *api = gpu::cuda_api();
      if (!api || !gpu::cuda_status().standin)
        fail(SMD_ERR_NOT_SUPPORTED,
             "SMD_GPU_DIRECT=on: transport %s cannot take device memory (it does not declare "
             "SMD_TRANSPORT_CAP_DEVICE_MEMORY); use a transport that does (UCX built with "
             "CUDA), or SMD_GPU_DIRECT=auto to stage through host memory",
             lacking.c_str());
      direct = true;  // the host stand-in: its device memory is host memory
    }
  }
  st.device_direct = direct ? 1 : 0;
  return direct;
}

DirectCallScope::DirectCallScope(const CollArgs &a)
    : on_device_(gpu::classify_pointer(a.recvbuf ? a.recvbuf : a.sendbuf).device) {
  gpu::device_synchronize();
}

}  // namespace smd
