// Errors of an operation as the caller sees them: named by what the
// operation does ("receive from rank 1 (tag 9)", "allreduce"), never by
// the request call that reported it (smd_request_wait...) or by the wire
// tags and internals underneath.
#pragma once

#include <smd.h>

#include <string>

#include "core/util/error.h"

namespace smd {

// Thrown for a finished operation's failure; guarded() adds no prefix,
// the message already names the operation.
class OperationError : public Error {
 public:
  using Error::Error;
};

// What a point-to-point call does: "receive from rank 1 (tag 9)".
std::string p2p_description(bool is_send, int peer, int tag);

// The buffer of a point-to-point call: "16-byte buffer (4 x float32)".
std::string buffer_description(size_t count, smd_datatype_t datatype);

// The message for `e`, an error of operation `what` (a p2p description,
// or "" for a collective) over `buffer`: truncation says what the caller
// did and what to do instead.
std::string operation_message(const Error &e, const std::string &what, const std::string &buffer);

}  // namespace smd
