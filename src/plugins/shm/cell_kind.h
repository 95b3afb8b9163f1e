// What a ring cell carries. Fields of CellHeader per kind:
//   kEager     tag, size = message bytes, len = bytes in this cell; a message
//              of n cells fills n consecutive cells published together.
//   kRts       tag, size = message bytes, id = sender's request; payload =
//              the sender's buffer address (rendezvous descriptor).
//   kAck       id = sender's request, size = status: the receiver finished
//              copying the message with CMA.
//   kCts       id = sender's request, size = bytes wanted, tag = receiver's
//              request: stream the message as kData cells (no CMA).
//   kData      id = receiver's request, size = byte offset, len = bytes.
//   kRetract   id = sender's request: the send was cancelled.
//   kAbort     id = receiver's request: no more data will come.
//   kGetReq    id = getter's request, tag = address, size = bytes: answer
//              with kData cells (iget without CMA).
#pragma once

#include <cstdint>

namespace smd_shm {

enum CellKind : uint32_t {
  kEager = 1,
  kRts,
  kAck,
  kCts,
  kData,
  kRetract,
  kAbort,
  kGetReq,
};

}  // namespace smd_shm
