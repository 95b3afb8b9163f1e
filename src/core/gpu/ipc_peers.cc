#include "core/gpu/ipc_peers.h"

#include <cstring>

#include "core/gpu/pointer_kind.h"
#include "core/util/error.h"

namespace smd::gpu {
namespace {

const CudaApi &api() {
  const CudaApi *a = cuda_api();
  if (!a) fail(SMD_ERR_NOT_SUPPORTED, "CUDA IPC needs CUDA: %s", cuda_status().reason.c_str());
  return *a;
}

}  // namespace

IpcPeers::IpcPeers(int rank, int size) : rank_(rank), size_(size), kept_(size_t(size)) {}

IpcPeers::~IpcPeers() {
  const CudaApi *a = cuda_api();
  if (!a) return;
  for (auto &peer : kept_)
    for (const Mapping &m : peer) a->IpcCloseMemHandle(m.base);
}

void *IpcPeers::map(int peer, const CudaIpcHandle &handle) {
  auto &kept = kept_[size_t(peer)];
  for (auto it = kept.begin(); it != kept.end(); ++it)
    if (!memcmp(&it->handle, &handle, sizeof handle)) {
      kept.splice(kept.begin(), kept, it);  // most recently used first
      return it->base;
    }
  const CudaApi &a = api();
  void *base = nullptr;
  const int err = a.IpcOpenMemHandle(&base, handle, kCudaIpcMemLazyEnablePeerAccess);
  if (err) {
    a.GetLastError();
    fail(SMD_ERR_SYSTEM, "mapping rank %d's device buffer: %s", peer,
         cuda_error_text("cudaIpcOpenMemHandle", err).c_str());
  }
  ++opened_;
  kept.push_front(Mapping{handle, base});
  if (kept.size() > kKeptPerPeer) {
    a.IpcCloseMemHandle(kept.back().base);
    kept.pop_back();
  }
  return base;
}

IpcPeers::Record IpcPeers::record_of(void *buf) const {
  const CudaApi &a = api();
  Record mine{};
  const PointerInfo where = classify_pointer(buf);
  const auto addr = reinterpret_cast<uintptr_t>(buf);
  // The allocation's start: its handle is the allocation's, whatever
  // pointer inside it is passed.
  const uintptr_t base = where.size ? where.base : addr;
  mine.offset = addr - base;
  mine.error = a.IpcGetMemHandle(&mine.handle, reinterpret_cast<void *>(base));
  if (mine.error) a.GetLastError();
  return mine;
}

std::vector<void *> IpcPeers::open(void *buf, const std::vector<Record> &all, int only) {
  for (int r = 0; r < size_; ++r)
    if (all[size_t(r)].error)
      fail(SMD_ERR_NOT_SUPPORTED,
           "rank %d's buffer cannot be shared through CUDA IPC (%s): it must be "
           "device memory from cudaMalloc",
           r, cuda_error_text("cudaIpcGetMemHandle", all[size_t(r)].error).c_str());
  std::vector<void *> bufs(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const Record &rec = all[size_t(r)];
    if (r == rank_) bufs[size_t(r)] = buf;
    else if (only < 0 || r == only)
      bufs[size_t(r)] = static_cast<char *>(map(r, rec.handle)) + rec.offset;
  }
  return bufs;
}

std::vector<void *> IpcPeers::exchange(void *buf, const Allgather &allgather) {
  // Every rank takes part even when its export failed, so all learn of it.
  const Record mine = record_of(buf);
  std::vector<Record> all(static_cast<size_t>(size_));
  allgather(mine, all.data());
  return open(buf, all);
}

}  // namespace smd::gpu
