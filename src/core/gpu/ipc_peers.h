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

  // This rank's record of `buf`: the handle of the allocation holding it
  // and the offset in it, or the error CUDA gave when it cannot be shared
  // (only cudaMalloc's memory can: not managed, pinned or pool memory).
  Record record_of(void *buf) const;

  // Every rank's buffer as mapped in this process, from every rank's
  // record (`all`, in rank order): `buf` for this rank's own, nullptr for
  // the ranks other than `only` where it is given. Throws
  // SMD_ERR_NOT_SUPPORTED naming a rank whose record holds an error (every
  // rank that reads `all` alike), SMD_ERR_SYSTEM for a mapping CUDA refuses
  // (on this rank).
  std::vector<void *> open(void *buf, const std::vector<Record> &all, int only = -1);

  // Both, around one collective: each rank passes its buffer, and gets
  // every rank's as mapped here.
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
