// What a process's ranks of one world decode from the same rendezvous
// records, decoded once and shared: ranks that are threads of one process
// would otherwise each hold a copy of O(world size) (docs/SCALE.md).
// Entries live while a world uses them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/bootstrap/store.h"

namespace smd {

// The T that make() builds from `records`, shared with every caller that
// passes equal records while an earlier result is alive.
template <class T, class Make>
std::shared_ptr<const T> shared_from_records(const std::vector<Bytes> &records, Make make) {
  std::string key;
  for (const Bytes &b : records) {
    uint32_t n = static_cast<uint32_t>(b.size());
    key.append(reinterpret_cast<const char *>(&n), sizeof n);
    key.append(b.begin(), b.end());
  }
  static std::mutex mu;
  static auto *cache =
      new std::unordered_map<std::string, std::weak_ptr<const T>>();  // never destroyed
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end())
      if (auto t = it->second.lock()) return t;
  }
  std::shared_ptr<const T> t = std::make_shared<const T>(make());
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = cache->begin(); it != cache->end();)
    it = it->second.expired() ? cache->erase(it) : std::next(it);
  auto [it, added] = cache->emplace(std::move(key), t);
  if (!added) {
    if (auto first = it->second.lock()) return first;  // another rank built it meanwhile
    it->second = t;
  }
  return t;
}

}  // namespace smd
