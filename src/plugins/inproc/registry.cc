#include "registry.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <unordered_map>

namespace smd_inproc {
namespace {

struct Registry {
  std::mutex mu;
  uint64_t next_id = 1;
  uint64_t nonce = 0;
  std::unordered_map<uint64_t, std::shared_ptr<Mailbox>> boxes;
  Registry() {
    std::random_device rd;
    nonce = (uint64_t(rd()) << 32) ^ rd() ^
            uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }
};

Registry &registry() {
  static Registry *r = new Registry();  // never destroyed: contexts may outlive static teardown
  return *r;
}

}  // namespace

Address register_mailbox(std::shared_ptr<Mailbox> box) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Address a{};
  std::memcpy(a.magic, kAddressMagic, sizeof a.magic);
  a.pid = uint32_t(getpid());
  a.nonce = r.nonce;
  a.id = r.next_id++;
  r.boxes.emplace(a.id, std::move(box));
  return a;
}

void unregister_mailbox(uint64_t id) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.boxes.erase(id);
}

std::shared_ptr<Mailbox> find_mailbox(uint64_t id) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.boxes.find(id);
  return it == r.boxes.end() ? nullptr : it->second;
}

bool from_this_process(const Address &a) {
  return std::memcmp(a.magic, kAddressMagic, sizeof a.magic) == 0 && a.pid == uint32_t(getpid()) &&
         a.nonce == registry().nonce;
}

}  // namespace smd_inproc
