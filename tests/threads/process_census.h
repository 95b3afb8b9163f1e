// What this process holds right now, to catch leaks between tests: open
// file descriptors (/proc/self/fd) and threads (/proc/self/task).
#pragma once

namespace threadtest {

int open_fd_count();
int thread_count();

// Waits up to timeout_ms for the thread count to drop to `want` (threads
// that were told to exit may take a moment); returns the last count.
int wait_for_thread_count(int want, int timeout_ms);

}  // namespace threadtest
