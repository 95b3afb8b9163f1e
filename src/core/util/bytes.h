// A byte string: store values, transport addresses and segment handles,
// encoded records. Its own header so that code passing bytes around does
// not include the store interface for a typedef.
#pragma once

#include <cstdint>
#include <vector>

namespace smd {

using Bytes = std::vector<uint8_t>;

}  // namespace smd
