// Completing a Work on one of the backend's threads lets Python go on,
// perhaps to exit, while that thread still releases what the operation
// held (the Work, tensors, a Future's callbacks), and the last reference
// to a tensor that Python made needs the GIL. Once the interpreter
// finalizes, taking the GIL ends the thread, which aborts the process.
// So each such release runs inside a ReleaseScope, and smd.torch's
// atexit handler waits until none is open before finalization begins.
#pragma once

namespace smd_torch {

class ReleaseScope {
 public:
  ReleaseScope();
  ~ReleaseScope();
  ReleaseScope(const ReleaseScope &) = delete;
  ReleaseScope &operator=(const ReleaseScope &) = delete;
};

// Returns once no ReleaseScope is open (called with the GIL released).
void wait_for_releases();

}  // namespace smd_torch
