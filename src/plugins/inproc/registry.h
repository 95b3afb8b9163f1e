// The contexts of this process, by id: what an address names. A peer's
// address is good only in the process that made it (same pid and the
// same random nonce, drawn once per process), so a blob from another
// process is refused, never misread.
#pragma once

#include <cstdint>
#include <memory>

#include "mailbox.h"

namespace smd_inproc {

struct Address {
  char magic[8];  // kAddressMagic
  uint32_t pid;
  uint32_t reserved;
  uint64_t nonce;
  uint64_t id;
};
inline constexpr char kAddressMagic[8] = {'s', 'm', 'd', 'i', 'n', 'p', 'r', '1'};

// Adds a mailbox and returns the address peers connect with.
Address register_mailbox(std::shared_ptr<Mailbox> box);
// Removes it (its context is finalized): later connects fail.
void unregister_mailbox(uint64_t id);
// The mailbox an address names, or nullptr when that context is gone.
std::shared_ptr<Mailbox> find_mailbox(uint64_t id);
// Whether `a` was made by this process.
bool from_this_process(const Address &a);

}  // namespace smd_inproc
