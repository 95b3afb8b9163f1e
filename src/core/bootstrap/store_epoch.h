// Epochs: how many times this process has formed something under one name
// (a store at one address, the worlds over one store). Every rank of a job
// forms its worlds in the same order, so the n-th world on each rank has
// the same epoch: a rank that destroys its world and forms it again never
// takes the old world's store or records for the new one's, however slowly
// the old one shuts down on other ranks.
#pragma once

#include <cstdint>
#include <string>

namespace smd {

// 1 the first time `name` is asked for in this process, then 2, 3, ...
// Thread-safe.
uint32_t next_epoch(const std::string &name);

}  // namespace smd
