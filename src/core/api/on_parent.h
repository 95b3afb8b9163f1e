// Communicator-creating steps (split, dup, groups) run in the parent's
// operation order: after every operation queued on it before the call.
#pragma once

#include "core/comm/communicator.h"

namespace smd {

template <class F>
auto on_parent(Comm &parent, F &&make) -> decltype(make()) {
  parent.check_usable();
  decltype(make()) made;
  parent.executor().run_blocking([&] { made = make(); });
  return made;
}

}  // namespace smd
