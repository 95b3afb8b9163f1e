#include "core/bootstrap/store_epoch.h"

#include <map>
#include <mutex>

namespace smd {

uint32_t next_epoch(const std::string &name) {
  static std::mutex mu;
  static std::map<std::string, uint32_t> counts;
  std::lock_guard<std::mutex> lock(mu);
  return ++counts[name];
}

}  // namespace smd
