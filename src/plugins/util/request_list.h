// An intrusive doubly linked list through two pointer members of T: the
// unfinished requests of one endpoint, failed together when its peer
// dies, with O(1) removal and no allocation.
#pragma once

namespace smd_plugin {

template <class T, T *T::*Prev, T *T::*Next>
struct IntrusiveList {
  T *head = nullptr;
  bool empty() const { return head == nullptr; }
  void push(T *r) {
    r->*Prev = nullptr;
    r->*Next = head;
    if (head != nullptr) head->*Prev = r;
    head = r;
  }
  void remove(T *r) {
    if (r->*Prev != nullptr) r->*Prev->*Next = r->*Next;
    else head = r->*Next;
    if (r->*Next != nullptr) r->*Next->*Prev = r->*Prev;
    r->*Prev = r->*Next = nullptr;
  }
};

}  // namespace smd_plugin
