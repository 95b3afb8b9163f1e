#include "core/sharded/fetch_order.h"

#include <algorithm>

namespace smd::sharded {

std::vector<int32_t> FetchOrder::on_fetch(const std::vector<int32_t> &ids, size_t depth) {
  std::vector<int32_t> ahead;
  if (recording_) {
    calls_.push_back(ids);
    return ahead;
  }
  size_t n = calls_.size(), at = n;
  for (size_t k = 0; k < n && at == n; ++k) {
    size_t i = (next_ + k) % n;
    if (calls_[i] == ids) at = i;
  }
  if (at == n) return ahead;
  next_ = at + 1;
  for (size_t i = at + 1; i < n && ahead.size() < depth; ++i)
    for (int32_t id : calls_[i]) {
      if (ahead.size() == depth) break;
      bool seen = std::find(ids.begin(), ids.end(), id) != ids.end() ||
                  std::find(ahead.begin(), ahead.end(), id) != ahead.end();
      if (!seen) ahead.push_back(id);
    }
  return ahead;
}

void FetchOrder::on_round_end() {
  recording_ = false;
  next_ = 0;
}

}  // namespace smd::sharded
