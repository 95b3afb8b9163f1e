// Gradient reduction of a sharded set: full gradients cut into buckets of
// at most reduce_bucket_size elements, each bucket one reduce-scatterv of
// the pieces every rank owns (packed rank by rank, converted to the wire
// type on the way) or, for persistent parameters, one allreduce; then the
// replicas' allreduce and the average, unpacked into the gradient shards.
#pragma once

#include <smd.h>

#include <cstddef>
#include <vector>

#include "core/sharded/sharded_set.h"

namespace smd::sharded {

// Where one parameter's gradient comes from and goes to.
struct GradTarget {
  const void *full_grad = nullptr;  // the caller's, count elements
  char *shard_grad = nullptr;       // the set's, chunk elements
  size_t count = 0, chunk = 0;
  smd_datatype_t datatype = SMD_FLOAT32;
  bool persistent = false;
  int32_t id = 0;  // the parameter's
};

// Elements [begin, end) of a target's full gradient.
struct GradSlice {
  size_t target = 0;
  size_t begin = 0, end = 0;
};

struct GradBucket {
  bool persistent = false;
  smd_datatype_t datatype = SMD_FLOAT32;  // of its parameters
  smd_datatype_t wire = SMD_FLOAT32;
  std::vector<GradSlice> slices;
  size_t elements = 0;
};

// Buckets in the order of the targets; a bucket holds one kind
// (persistent or sharded) and one datatype.
std::vector<GradBucket> plan_buckets(const std::vector<GradTarget> &targets, const Config &cfg);

// Runs one bucket on this thread (collective over comm, then replicas).
void reduce_bucket(Comm &comm, const std::vector<GradTarget> &targets, const GradBucket &bucket,
                   const Config &cfg);

}  // namespace smd::sharded
