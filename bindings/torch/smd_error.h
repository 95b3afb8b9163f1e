// An smd failure as a C++ exception: the result code and smd's own message.
// The Python module turns it into smd.torch's exception classes; inside
// torch (futures, DDP) it is a std::runtime_error whose text is smd's.
#pragma once

#include <smd.h>

#include <stdexcept>
#include <string>

namespace smd_torch {

class SmdError : public std::runtime_error {
 public:
  SmdError(smd_result_t code, const std::string &message);
  smd_result_t code() const { return code_; }
  // The message without describe()'s framing.
  const std::string &message() const { return message_; }

 private:
  smd_result_t code_;
  std::string message_;
};

// "smd_allreduce: peer rank 1 (pid 42) exited ... [SMD_ERR_PEER_FAILURE]":
// smd's message with the code's name, which every Python exception shows.
std::string describe(smd_result_t code, const std::string &message);

// Throws SmdError when rc is not SMD_SUCCESS. Call it right after the smd
// call, on the same thread: the message is smd_last_error(). `context`
// (may be empty) says what the backend was doing ("allreduce #12").
void check(smd_result_t rc, const std::string &context);

// The message of an smd call that just failed on this thread, with context.
std::string last_error(const std::string &context);

// Throws SmdError(code, "<call>: <why>"): the backend refuses an argument.
[[noreturn]] void refuse(smd_result_t code, const char *call, const std::string &why);

}  // namespace smd_torch
