// A first-in first-out queue on one growable circular buffer: push and pop
// move nothing and allocate nothing once the buffer has reached the queue's
// steady size (a vector's erase(begin()) moves every element, every call).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace smd {

template <typename T>
class RingQueue {
 public:
  explicit RingQueue(size_t capacity = 16) : items_(capacity ? capacity : 1) {}

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  T &front() { return items_[head_]; }
  T &back() { return items_[(head_ + count_ - 1) % items_.size()]; }

  void push(const T &item) {
    if (count_ == items_.size()) grow();
    items_[(head_ + count_) % items_.size()] = item;
    ++count_;
  }
  void pop() {
    head_ = (head_ + 1) % items_.size();
    --count_;
  }

 private:
  void grow() {
    std::vector<T> bigger(items_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(items_[(head_ + i) % items_.size()]);
    items_.swap(bigger);
    head_ = 0;
  }
  std::vector<T> items_;
  size_t head_ = 0, count_ = 0;
};

}  // namespace smd
