// The device buffers of a node's ranks mapped into each other's processes
// through CUDA IPC, for the device-resident algorithms that read peers'
// buffers in place (docs/GPU.md). Each exchange sends every rank's handle
// of the allocation holding its buffer, with the buffer's offset in it; a
// peer's allocation is opened once and its mapping kept while the peer
// keeps passing it (keyed by the handle's bytes, which a new allocation
// changes), up to kKeptPerPeer allocations per peer, the least recently
// used closed first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <vector>

#include "core/gpu/cuda_api.h"

namespace smd::gpu {

class IpcPeers {
 public:
  static constexpr size_t kKeptPerPeer = 16;
  // What the ranks send each other (fixed size, compared as bytes).
  struct Record {
    CudaIpcHandle handle;
    uint64_t offset;  // of the buffer in its allocation
    int32_t error;    // CUDA's error when this rank could not export its buffer
    int32_t unused;
  };
  // Gathers every rank's record, in rank order, from each rank's own.
  using Allgather = std::function<void(const Record &mine, Record *all)>;

  IpcPeers(int rank, int size);
  ~IpcPeers();  // closes every mapping
  IpcPeers(const IpcPeers &) = delete;
  IpcPeers &operator=(const IpcPeers &) = delete;

  // Collective over the ranks: each passes its buffer (device memory from
  // cudaMalloc), and gets every rank's buffer as mapped in this process
  // (its own for its own rank). When a rank cannot export its buffer, every
  // rank throws SMD_ERR_NOT_SUPPORTED naming it; a mapping CUDA refuses
  // throws SMD_ERR_SYSTEM on the rank that asked.
  std::vector<void *> exchange(void *buf, const Allgather &allgather);

  // cudaIpcOpenMemHandle calls so far (the cache's misses).
  uint64_t opened() const { return opened_; }

 private:
  struct Mapping {
    CudaIpcHandle handle;
    void *base;
  };
  void *map(int peer, const CudaIpcHandle &handle);
  int rank_, size_;
  std::vector<std::list<Mapping>> kept_;  // per peer, most recently used first
  uint64_t opened_ = 0;
};

}  // namespace smd::gpu
