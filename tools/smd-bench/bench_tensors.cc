#include "bench_tensors.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../common/values.h"
#include "bench_util.h"

namespace smdbench {

std::vector<size_t> model_tensors(const std::string &name, int layers) {
  std::vector<size_t> t;
  if (name != "bert-base") return t;
  const size_t h = 768, ffn = 3072, vocab = 30522, positions = 512, types = 2;
  for (size_t n : {vocab * h, positions * h, types * h, h, h}) t.push_back(n);  // embeddings + norm
  for (int l = 0; l < std::min(layers, 12); ++l) {
    for (int qkv = 0; qkv < 3; ++qkv) {
      t.push_back(h * h);
      t.push_back(h);
    }
    for (size_t n : {h * h, h, h, h, ffn * h, ffn, h * ffn, h, h, h}) t.push_back(n);
  }
  t.push_back(h * h);  // pooler
  t.push_back(h);
  return t;
}

namespace {

const char *mode_name(const Options &o) {
  return o.single ? "single" : o.grouped ? "grouped" : "separate";
}

}  // namespace

int run_tensors(smd_comm_t *world, const Options &o) {
  int rank = 0, p = 1;
  CHECK(smd_comm_rank(world, &rank));
  CHECK(smd_comm_size(world, &p));
  size_t es = 0;
  CHECK(smd_datatype_size(o.dtype, &es));
  std::vector<size_t> counts;
  if (!o.model.empty()) {
    counts = model_tensors(o.model, o.layers);
    if (counts.empty()) {
      if (rank == 0)
        fprintf(stderr, "smd-bench: unknown model '%s' (known: bert-base)\n", o.model.c_str());
      return 2;
    }
  } else {
    counts.assign(static_cast<size_t>(o.tensors), std::max<size_t>(1, o.min_bytes / es));
  }
  size_t total = 0;
  for (size_t n : counts) total += n;
  // One allocation, tensors back to back (as a framework's gradient arena).
  std::vector<uint8_t> send(total * es), recv(total * es);
  for (size_t i = 0; i < total; ++i)
    smdvals::store(send.data(), i, o.dtype, smdvals::value(rank, i, o.op, o.dtype));
  auto step = [&] {
    if (o.single) {
      CHECK(smd_allreduce(send.data(), recv.data(), total, o.dtype, o.op, world, nullptr));
      return;
    }
    if (o.grouped) CHECK(smd_group_start());
    size_t off = 0;
    for (size_t n : counts) {
      CHECK(smd_allreduce(send.data() + off * es, recv.data() + off * es, n, o.dtype, o.op, world,
                          nullptr));
      off += n;
    }
    if (o.grouped) CHECK(smd_group_end());
  };
  step();
  uint64_t errors = 0;
  if (o.check)
    for (size_t i = 0; i < total; ++i)
      if (!smdvals::close_enough(smdvals::load(recv.data(), i, o.dtype),
                                 smdvals::expected(p, i, o.op, o.dtype), o.dtype, o.op))
        ++errors;
  for (int i = 0; i < o.warmup; ++i) step();
  CHECK(smd_barrier(world, nullptr));
  double t0 = now_s();
  for (int i = 0; i < o.iters; ++i) step();
  double local_us = (now_s() - t0) * 1e6 / o.iters, time_us = 0;
  CHECK(smd_allreduce(&local_us, &time_us, 1, SMD_FLOAT64, SMD_MAX, world, nullptr));
  uint64_t total_err = 0;
  CHECK(smd_allreduce(&errors, &total_err, 1, SMD_UINT64, SMD_SUM, world, nullptr));
  if (rank == 0) {
    double algbw = total * es / time_us / 1e3;
    if (o.json)
      printf(
          "{\"tensors\": %zu, \"mode\": \"%s\", \"model\": \"%s\", \"bytes\": %zu, \"dtype\": "
          "\"%s\", "
          "\"ranks\": %d, \"time_us\": %.3f, \"per_tensor_us\": %.3f, \"algbw_gbps\": %.4f, "
          "\"busbw_gbps\": %.4f, \"errors\": %llu}\n",
          counts.size(), mode_name(o), o.model.c_str(), total * es, o.dtype_name.c_str(), p,
          time_us, time_us / double(counts.size()), algbw, algbw * 2.0 * (p - 1) / p,
          static_cast<unsigned long long>(total_err));
    else
      printf(
          "# smd-bench tensors %zu (%s)  mode %s  ranks %d  total %zu bytes  %s\n"
          "  time_us %.2f per step, %.3f per tensor, algbw %.3f GB/s, errors %llu\n",
          counts.size(), o.model.empty() ? "equal" : o.model.c_str(), mode_name(o), p, total * es,
          o.dtype_name.c_str(), time_us, time_us / double(counts.size()), algbw,
          static_cast<unsigned long long>(total_err));
    fflush(stdout);
  }
  return total_err ? 1 : 0;
}

}  // namespace smdbench
