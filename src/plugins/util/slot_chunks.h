// Fixed-address slots of T in chunks of 2^ChunkBits, named by a dense
// index (what a request's handle or id carries): a slot never moves, so a
// provider or a peer may hold its address or index while it is in use.
// Freed slots are reused last-in first-out (still warm in cache). T has a
// uint32_t `index` member, set once when its slot is made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace smd_plugin {

template <class T, uint32_t ChunkBits>
class SlotChunks {
 public:
  // A free slot, as its last user left it; a new one when none is free.
  T *take() {
    if (free_.empty()) {
      if ((count_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<T[]>(kChunk));
      at(count_).index = count_;
      free_.push_back(count_++);
    }
    T *slot = &at(free_.back());
    free_.pop_back();
    return slot;
  }
  void give_back(T *slot) { free_.push_back(slot->index); }
  // Every slot made so far, in use or not: indexes 0 to made() - 1.
  uint32_t made() const { return count_; }
  T &at(uint32_t i) const { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  size_t in_use() const { return count_ - free_.size(); }

 private:
  static constexpr uint32_t kChunk = 1u << ChunkBits;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<uint32_t> free_;
  uint32_t count_ = 0;
};

}  // namespace smd_plugin
