// smd-bench --tensors K / --model NAME: many tensors per step, the way a
// training framework hands gradients over: each tensor its own allreduce,
// the same calls in one group (fused, --grouped), or one allreduce of the
// same total bytes (--single, the bound fusion aims at).
#pragma once

#include <smd.h>

#include <cstddef>
#include <string>
#include <vector>

#include "bench_options.h"

namespace smdbench {

// The element counts of a model's parameters, in the order the model
// declares them; empty for an unknown name. "bert-base": BERT-base
// (uncased, 12 layers, hidden 768: 199 tensors, 109.5M parameters);
// `layers` < 12 keeps only that many encoder layers.
std::vector<size_t> model_tensors(const std::string &name, int layers);

// Collective over `world`; rank 0 prints. Returns the exit status.
int run_tensors(smd_comm_t *world, const Options &o);

}  // namespace smdbench
