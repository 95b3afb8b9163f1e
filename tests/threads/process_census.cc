#include "process_census.h"

#include <dirent.h>

#include <chrono>
#include <thread>

namespace threadtest {
namespace {

// Entries of a /proc directory, not counting "." and ".." (nor the
// descriptor opendir itself uses, for /proc/self/fd).
int count_entries(const char *path) {
  DIR *d = opendir(path);
  if (!d) return -1;
  int n = 0;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

}  // namespace

int open_fd_count() { return count_entries("/proc/self/fd") - 1; }

int thread_count() { return count_entries("/proc/self/task"); }

int wait_for_thread_count(int want, int timeout_ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int n = thread_count();
  while (n > want && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = thread_count();
  }
  return n;
}

}  // namespace threadtest
