// The wire format of the TCP store, shared by its server and its client.
//
// Every message is one frame; all integers are little-endian:
//
//   u32 length    bytes that follow (opcode + fields); 1 .. kMaxFrame
//   u8  opcode
//   fields        in the order below, each one of
//                   u32 / i32 / i64   fixed width
//                   blob              u32 byte count, then the bytes
//                   list              u32 item count, then the items
//
//   requests (client -> server)            replies (server -> client)
//   HELLO   u32 magic "SMDS", u32 version,   OK
//           blob token, i32 rank,            VALUE    blob value
//           i32 world_size, u32 epoch (v2)   INTEGER  i64
//   SET     blob key, blob value             FLAGS    list of u8 (0 or 1)
//   GET     blob key, i64 timeout_ms (<0:    RANKS    list of i32
//           wait without limit)              TIMEOUT
//   ADD     blob key, i64 delta              ERROR    blob reason
//   CHECK   list of blob key
//   FAILED_RANKS                           RETRY    blob reason
//   GOODBYE
//
// A connection starts with HELLO; the server answers OK, or ERROR and
// closes, or RETRY and closes: the HELLO was right but reached the store
// at the wrong moment (an earlier or later epoch of the same job, or too
// many connections that have not yet presented their token), so the
// client connects again until its deadline. The epoch counts the stores a
// process formed at one address (store_epoch.h): a rank that re-forms its
// world right after destroying it never talks to the store of the old
// world, which may still be shutting down. Then each request gets exactly one reply, in order. A
// frame that breaks these rules (unknown opcode, a field cut short, bytes left over, a length over
// the limit) ends the connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bootstrap/store.h"

namespace smd::wire {

constexpr uint32_t kMagic = 0x53444d53;  // "SMDS" on the wire
constexpr uint32_t kVersion = 2;         // 2: HELLO carries the epoch; RETRY
constexpr size_t kHeaderSize = 4;
// Largest frame either side accepts; a value must fit in one.
constexpr uint32_t kMaxFrame = 64u << 20;
// Largest frame the server reads from a connection that has not yet
// presented its token: strangers cannot make it allocate much.
constexpr uint32_t kMaxHelloFrame = 64u << 10;
// The world size in the HELLO of a process joining a grown communicator
// (smd_comm_join): with rank -1 the store answers RANKS with the id it
// gives the process, one past the world's ranks.
constexpr int32_t kJoinerHello = 0;

enum class Op : uint8_t {
  kHello = 1,
  kSet = 2,
  kGet = 3,
  kAdd = 4,
  kCheck = 5,
  kFailedRanks = 6,
  kGoodbye = 7,
  kOk = 128,
  kValue = 129,
  kInteger = 130,
  kFlags = 131,
  kRanks = 132,
  kTimeout = 133,
  kError = 134,
  kRetry = 135,
};

const char *op_name(Op op);  // "HELLO", ...
inline bool is_request(Op op) { return static_cast<uint8_t>(op) < 128; }

// One decoded message; only the fields of its opcode are meaningful.
struct Message {
  Op op = Op::kOk;
  uint32_t version = kVersion;  // HELLO
  std::string token;            // HELLO
  int32_t rank = -1;            // HELLO
  int32_t world_size = -1;      // HELLO
  uint32_t epoch = 0;           // HELLO (version 2 on)
  std::string key;              // SET, GET, ADD
  Bytes value;                  // SET, VALUE
  // GET: timeout in ms (< 0 = none); ADD: delta; INTEGER: the result.
  int64_t number = 0;
  std::vector<std::string> keys;  // CHECK
  std::vector<bool> flags;        // FLAGS
  std::vector<int32_t> ranks;     // RANKS
  std::string reason;             // ERROR, RETRY
};

// The whole frame of `m`, length prefix included. Throws smd::Error
// SMD_ERR_INVALID_ARGUMENT if it would exceed kMaxFrame.
Bytes encode(const Message &m);

// The body length (opcode + fields) a frame's kHeaderSize-byte header
// announces. Throws smd::Error SMD_ERR_BOOTSTRAP when it is 0 or above
// max_frame, so an oversized frame is refused before it is read.
uint32_t frame_body_size(const uint8_t *header, uint32_t max_frame);

// Size of the frame at the start of data[0..size), prefix included, if all
// of it is there; 0 if more bytes are needed. Throws smd::Error
// SMD_ERR_BOOTSTRAP when the length prefix is 0 or above max_frame, so an
// oversized frame is refused before it is read.
size_t frame_size(const uint8_t *data, size_t size, uint32_t max_frame);

// Decodes one whole frame as sized by frame_size(). Throws smd::Error
// SMD_ERR_BOOTSTRAP "malformed store message: ..." on an unknown opcode, a
// wrong HELLO magic, a truncated field, or bytes left over.
Message decode(const uint8_t *frame, size_t size);

// A key made safe for log lines and error messages: non-printable bytes
// become \xNN, and very long keys are cut.
std::string printable(const std::string &key);

}  // namespace smd::wire
