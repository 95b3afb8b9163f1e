// The shared region each context exports: a header with the wake-up words,
// then one inbound ring per local rank (ring i carries messages from local
// rank i to the region's owner). Senders write into the receiver's region,
// so eager data already delivered survives the sender's death.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace smd_shm {

constexpr uint64_t kRegionMagic = 0x31474552444d53ull;  // "SMDREG1"
constexpr uint32_t kLayoutVersion = 1;

// Geometry. A 16 KiB cell holds an eager message of up to 16 KiB - 32 B in
// one cell; 64 cells let a sender run far ahead of a busy receiver and keep
// the fallback (no CMA) data stream pipelined. One ring is 1 MiB per
// directed pair of local ranks; the kernel allocates its pages only as
// cells are first used.
constexpr uint32_t kCellSize = 16 * 1024;
constexpr uint32_t kRingCells = 64;
// Two lines: adjacent-line prefetchers pull cache lines in pairs.
constexpr size_t kSeparation = 128;

struct CellHeader {
  uint32_t kind;  // CellKind
  uint32_t len;   // payload bytes in this cell
  uint64_t tag;
  uint64_t size;
  uint64_t id;
};
static_assert(sizeof(CellHeader) == 32, "payload starts in the first line");

constexpr uint32_t kCellPayload = kCellSize - sizeof(CellHeader);

struct Cell {
  CellHeader h;
  unsigned char payload[kCellPayload];
};
static_assert(sizeof(Cell) == kCellSize);

// A single-producer, single-consumer ring. head and tail count cells
// forever (64-bit, never wrap in practice); cell i lives at i % kRingCells.
struct Ring {
  alignas(kSeparation) uint64_t head;  // producer: cells published
  // Producer: "I have cells queued that did not fit; wake me when you
  // free some". Next to head so the consumer reads it for free.
  uint32_t producer_waiting;
  alignas(kSeparation) uint64_t tail;  // consumer: cells consumed
  alignas(kSeparation) Cell cells[kRingCells];
};

struct RegionHeader {
  uint64_t magic;
  uint64_t region_id;  // random; also in the memfd name and address blob
  uint32_t version;
  int32_t pid;
  uint32_t local_size;
  uint32_t cell_size;
  uint32_t ring_cells;
  // Owner only: nonzero while the owner sleeps in wait().
  alignas(kSeparation) uint32_t sleeping;
  // Futex word: bumped by anyone who gives a sleeping owner work.
  alignas(kSeparation) uint32_t doorbell;
};

constexpr size_t kPage = 4096;
constexpr size_t kRingsOffset = (sizeof(RegionHeader) + kPage - 1) / kPage * kPage;

inline size_t region_bytes(uint32_t local_size) {
  return kRingsOffset + size_t(local_size) * sizeof(Ring);
}

inline Ring *region_ring(void *base, uint32_t index) {
  return reinterpret_cast<Ring *>(static_cast<char *>(base) + kRingsOffset) + index;
}

// Accessors for words shared between processes.
template <class T>
inline T load_acquire(T &word) {
  return std::atomic_ref<T>(word).load(std::memory_order_acquire);
}
template <class T>
inline T load_relaxed(T &word) {
  return std::atomic_ref<T>(word).load(std::memory_order_relaxed);
}
template <class T>
inline void store_release(T &word, T value) {
  std::atomic_ref<T>(word).store(value, std::memory_order_release);
}
template <class T>
inline void store_relaxed(T &word, T value) {
  std::atomic_ref<T>(word).store(value, std::memory_order_relaxed);
}
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<uint32_t>::is_always_lock_free);

}  // namespace smd_shm
