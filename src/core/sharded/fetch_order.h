// The order in which a sharded set's parameters are used: the fetch calls
// of the first round (up to the first gradient reduction), and where each
// later fetch stands in it, so that the parameters of the calls that come
// next can be gathered ahead. Pure bookkeeping: the same calls give the
// same answers on every rank, which keeps the prefetches collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smd::sharded {

class FetchOrder {
 public:
  bool recording() const { return recording_; }
  // A fetch call: recorded in the first round; afterwards, located in the
  // recorded calls (the expected next one first, then any later one, then
  // any from the start) and returned: up to `depth` distinct parameters of
  // the calls that follow it, not counting `ids` themselves. Nothing when
  // the call was not recorded; never wraps around into the next round.
  std::vector<int32_t> on_fetch(const std::vector<int32_t> &ids, size_t depth);
  // A gradient reduction: ends the recording; the next fetch is expected
  // to be the round's first.
  void on_round_end();
  size_t recorded_calls() const { return calls_.size(); }

 private:
  std::vector<std::vector<int32_t>> calls_;
  size_t next_ = 0;  // the call expected next
  bool recording_ = true;
};

}  // namespace smd::sharded
