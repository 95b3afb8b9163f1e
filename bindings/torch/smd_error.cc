#include "smd_error.h"

namespace smd_torch {

SmdError::SmdError(smd_result_t code, const std::string &message)
    : std::runtime_error(describe(code, message)), code_(code), message_(message) {}

std::string describe(smd_result_t code, const std::string &message) {
  std::string name = smd_result_string(code);
  if (message.empty()) return "smd: " + name;
  return "smd: " + message + " [" + name + "]";
}

std::string last_error(const std::string &context) {
  std::string said = smd_last_error();
  if (said.empty()) said = "failed without a message";
  return context.empty() ? said : context + ": " + said;
}

void refuse(smd_result_t code, const char *call, const std::string &why) {
  throw SmdError(code, std::string(call) + ": " + why);
}

void check(smd_result_t rc, const std::string &context) {
  if (rc != SMD_SUCCESS) throw SmdError(rc, last_error(context));
}

}  // namespace smd_torch
