// The algorithm registry: one table of every algorithm of every
// collective, each with its applicability test, its predicted cost and
// its body. SMD_ALGO forces one by name (falling back to the automatic
// choice, with the reason logged, where it does not apply); the automatic
// choice is the applicable entry of lowest predicted cost. Adding an
// algorithm is adding a row (see docs/ARCHITECTURE.md).
#pragma once

#include <string>

#include "core/coll/collective.h"
#include "core/coll/select/cost_model.h"

namespace smd {

class Comm;

struct AlgoEntry {
  CollKind kind;
  Algo algo;
  // True if it can run this call; otherwise *why says what is missing.
  bool (*applicable)(const CollArgs &a, const CommShape &s, std::string *why);
  // Predicted microseconds.
  double (*cost)(const CollArgs &a, const CommShape &s, const CostModel &m);
  void (*run)(Comm &c, const CollArgs &a);
};

// The entry of (kind, algo), or null if the collective has no such algorithm.
const AlgoEntry *find_algo(CollKind kind, Algo algo);

struct AlgoChoice {
  const AlgoEntry *entry = nullptr;
  double cost_us = 0;
};

// The choice for this call: forced (when it applies) or cheapest. The
// same on every member, since it depends only on the arguments, the
// communicator's shape and the cost model (loaded identically). `c`, if
// given, is named in the info log of each choice.
AlgoChoice choose(const CollArgs &a, Algo forced, const CommShape &s, const CostModel &m,
                  Comm *c = nullptr);

}  // namespace smd
