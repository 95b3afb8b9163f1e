// The conformance tests, in the order every rank runs them.
#pragma once

#include <vector>

#include "harness.h"

namespace tcheck {

struct TestCase {
  const char *name;
  const char *summary;
  void (*run)(Env &);
  int timeout_s;
  bool always;      // part of every run, even with --only
  bool bench_only;  // runs only with --bench
};

const std::vector<TestCase> &test_cases();

// The tests themselves, one per function (tests_*.cc, bench.cc).
void test_connect_all(Env &e);
void test_pingpong(Env &e);
void test_zero_byte(Env &e);
void test_tagged_ordering(Env &e);
void test_unordered_tags(Env &e);
void test_large(Env &e);
void test_many_outstanding(Env &e);
void test_truncation(Env &e);
void test_registration(Env &e);
void test_segments(Env &e);
void test_cancel(Env &e);
void test_wait(Env &e);
void test_peer_death(Env &e);
void test_finalize(Env &e);
void run_bench(Env &e);

}  // namespace tcheck
