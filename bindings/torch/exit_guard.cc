#include "exit_guard.h"

#include <condition_variable>
#include <mutex>

namespace smd_torch {
namespace {

std::mutex mu;
std::condition_variable cv;
int open_scopes = 0;

}  // namespace

ReleaseScope::ReleaseScope() {
  std::lock_guard<std::mutex> lock(mu);
  ++open_scopes;
}

ReleaseScope::~ReleaseScope() {
  {
    std::lock_guard<std::mutex> lock(mu);
    --open_scopes;
  }
  cv.notify_all();
}

void wait_for_releases() {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [] { return open_scopes == 0; });
}

}  // namespace smd_torch
