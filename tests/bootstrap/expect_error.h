// Runs a call that must throw smd::Error with a given code and words.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/util/error.h"

namespace smd::test {

// The message of the smd::Error `fn` throws; a failure if it throws
// nothing, something else, or an error of another code.
template <typename Fn>
std::string error_of(smd_result_t code, Fn &&fn) {
  try {
    fn();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "no smd::Error thrown (expected code " << code << ")";
  return "";
}

// Predicate-formatter for EXPECT_SMD_ERROR.
inline ::testing::AssertionResult message_contains(const char *, const char *,
                                                   const std::string &message,
                                                   const std::string &words) {
  if (message.find(words) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "message: " << message << "\nexpected it to contain: " << words;
}

}  // namespace smd::test

// The call must throw smd::Error `code` whose message contains `words`.
#define EXPECT_SMD_ERROR(code, words, ...)           \
  EXPECT_PRED_FORMAT2(::smd::test::message_contains, \
                      ::smd::test::error_of(code, [&] { __VA_ARGS__; }), std::string(words))
