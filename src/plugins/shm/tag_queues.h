// FIFO queues keyed by exact tag, for posted receives and unexpected
// messages: O(1) push, pop and removal, no allocation in steady state. An
// open-addressing table maps a tag to its queue's head and tail; queues
// are intrusive lists through the elements' qprev/qnext; a tag's slot is
// removed (backward-shift deletion, no tombstones) when its queue empties,
// so one-off tags do not accumulate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smd_shm {

// T has members: uint64_t tag; T *qprev, *qnext.
template <class T>
class TagQueues {
 public:
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }

  void push(T *x) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    size_t i = find_slot(x->tag);
    Slot &s = slots_[i];
    x->qnext = nullptr;
    if (s.head == nullptr) {
      s.tag = x->tag;
      s.head = s.tail = x;
      x->qprev = nullptr;
      ++used_;
    } else {
      x->qprev = s.tail;
      s.tail->qnext = x;
      s.tail = x;
    }
    ++count_;
  }

  T *front(uint64_t tag) const {
    if (count_ == 0) return nullptr;
    return slots_[find_slot(tag)].head;
  }

  T *pop(uint64_t tag) {
    T *x = front(tag);
    if (x != nullptr) remove(x);
    return x;
  }

  void remove(T *x) {
    size_t i = find_slot(x->tag);
    Slot &s = slots_[i];
    if (x->qprev != nullptr) x->qprev->qnext = x->qnext;
    else s.head = x->qnext;
    if (x->qnext != nullptr) x->qnext->qprev = x->qprev;
    else s.tail = x->qprev;
    x->qprev = x->qnext = nullptr;
    --count_;
    if (s.head == nullptr) erase_slot(i);
  }

  // Calls f(T*) for every element; f must not modify the table.
  template <class F>
  void for_each(F f) const {
    for (const Slot &s : slots_)
      for (T *x = s.head; x != nullptr; x = x->qnext) f(x);
  }

  // Removes and returns any one element (nullptr when empty).
  T *take_any() {
    for (Slot &s : slots_)
      if (s.head != nullptr) {
        T *x = s.head;
        remove(x);
        return x;
      }
    return nullptr;
  }

 private:
  struct Slot {
    uint64_t tag = 0;
    T *head = nullptr;  // nullptr: free slot
    T *tail = nullptr;
  };

  size_t home(uint64_t tag) const {
    return size_t((tag * 0x9e3779b97f4a7c15ull) >> 32) & (slots_.size() - 1);
  }

  // The slot holding `tag`, or the free slot where it would go.
  size_t find_slot(uint64_t tag) const {
    size_t mask = slots_.size() - 1;
    size_t i = home(tag);
    while (slots_[i].head != nullptr && slots_[i].tag != tag) i = (i + 1) & mask;
    return i;
  }

  void erase_slot(size_t i) {
    size_t mask = slots_.size() - 1;
    slots_[i] = Slot{};
    --used_;
    // Shift later members of the probe run back so lookups never stop
    // early at the hole.
    size_t j = i;
    for (;;) {
      j = (j + 1) & mask;
      if (slots_[j].head == nullptr) return;
      size_t h = home(slots_[j].tag);
      bool between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (between) continue;
      slots_[i] = slots_[j];
      slots_[j] = Slot{};
      i = j;
    }
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    for (const Slot &s : old)
      if (s.head != nullptr) slots_[find_slot(s.tag)] = s;
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;   // occupied slots
  size_t count_ = 0;  // queued elements
};

}  // namespace smd_shm
