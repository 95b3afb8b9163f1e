#include "core/api/op_errors.h"

#include "core/util/dtype.h"

namespace smd {

std::string p2p_description(bool is_send, int peer, int tag) {
  return format("%s rank %d (tag %d)", is_send ? "send to" : "receive from", peer, tag);
}

std::string buffer_description(size_t count, smd_datatype_t datatype) {
  return format("%zu-byte buffer (%zu x %s)", count * datatype_size(datatype), count,
                datatype_name(datatype));
}

std::string operation_message(const Error &e, const std::string &what, const std::string &buffer) {
  // Collectives' own messages start with their name already.
  bool named = what.empty() || e.message().rfind(what, 0) == 0;
  std::string head = named ? "" : what + ": ";
  if (e.code() == SMD_ERR_TRUNCATED && !buffer.empty())
    return head + "the message sent is larger than the " + buffer +
           "; receive with a count of at least the sender's (" + e.message() + ")";
  return head + e.message();
}

}  // namespace smd
