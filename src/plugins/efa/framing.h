// Framed messages (framing.cc, pull.cc): the wire format and the
// per-endpoint matching state of providers whose own tag matching cannot
// be relied on (shm in libfabric 1.17).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace smd_efa {

struct Request;

// Every first part from a peer travels on its stream tag; the data of an
// announced message on kDataBit | cookie.
constexpr uint64_t kStreamBit = uint64_t(1) << 63;
constexpr uint64_t kDataBit = uint64_t(1) << 62;
constexpr unsigned kCookieBits = 44;

constexpr uint32_t kFrameMagic = 0x4d524645;  // "EFRM"

enum FrameKind : uint32_t {
  kInline = 1,    // the payload follows the header in this frame
  kAnnounce = 2,  // the payload follows on kDataBit | cookie
  kPull = 3,      // the receiver reads the payload at `addr` in the sender
  kAck = 4,       // the pull `cookie` is over, with `status`
};

struct FrameHeader {
  uint32_t magic;
  uint32_t kind;   // FrameKind
  int32_t status;  // kAck: smd_transport_status_t of the receiver's copy
  uint32_t reserved;
  uint64_t tag;     // the caller's tag
  uint64_t size;    // of the whole message
  uint64_t addr;    // kPull: the payload's address in the sender
  uint64_t cookie;  // kAnnounce, kPull, kAck
};

// A first part that arrived before its receive was posted.
struct Arrival {
  FrameHeader header;
  std::vector<char> payload;  // kInline
};

// One endpoint's software tag matching.
struct FrameState {
  // Receives posted by the caller, per tag, oldest first.
  std::unordered_map<uint64_t, std::deque<Request *>> posted;
  // First parts nobody waits for yet, per tag, oldest first.
  std::unordered_map<uint64_t, std::deque<Arrival>> unexpected;
  // The standing receives on the peer's stream.
  std::vector<Request *> stream;
  // Acknowledgements the provider refused for now.
  std::deque<FrameHeader> acks_out;
};

}  // namespace smd_efa
