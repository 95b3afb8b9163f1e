// reduce.h's entry points: argument checks, the trivial cases, and the
// choice between the kernel sets by what the CPU can do.
#include "core/reduce/reduce.h"

#include "core/reduce/kernels.h"
#include "core/util/dtype.h"
#include "core/util/error.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace smd::reduce {
namespace {

#if defined(__x86_64__) || defined(__i386__)
bool cpu_runs_avx2_kernels() {
  // May run before libgcc's own constructor has filled in the CPU model.
  __builtin_cpu_init();
  // Not every compiler knows "f16c" for __builtin_cpu_supports: ask CPUID
  // (leaf 1, ECX). The OS support for YMM registers that F16C also needs
  // is part of the "avx2" answer.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
  return f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

const KernelTable *best_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  if (cpu_runs_avx2_kernels()) return &avx2_kernels;
#endif
  return &portable_kernels;
}

// Chosen once on first use; force_portable() may switch it at any time.
std::atomic<const KernelTable *> active_kernels{nullptr};

const KernelTable &kernels() {
  const KernelTable *k = active_kernels.load(std::memory_order_acquire);
  if (k == nullptr) {
    // A force_portable() racing with the first use wins.
    const KernelTable *best = best_kernels();
    k = active_kernels.compare_exchange_strong(k, best, std::memory_order_acq_rel) ? best : k;
  }
  return *k;
}

}  // namespace

void reduce(void *dst, const void *const *srcs, int nsrc, size_t count, smd_datatype_t datatype,
            smd_op_t op, int divisor) {
  if (!valid_datatype(datatype) || !valid_op(op) || nsrc < 1) {
    fail(SMD_ERR_INVALID_ARGUMENT, "reduce: datatype %d, op %d, %d inputs", int(datatype), int(op),
         nsrc);
  }
  if (count == 0) return;
  // AVG is SUM with the divisor the caller passes.
  if (op == SMD_AVG) op = SMD_SUM;
  if (nsrc == 1 && divisor <= 1) {
    if (dst != srcs[0]) std::memcpy(dst, srcs[0], count * datatype_size(datatype));
    return;
  }
  kernels().get(datatype, op)(dst, srcs, nsrc, count, divisor);
}

void reduce2(void *dst, const void *a, const void *b, size_t count, smd_datatype_t datatype,
             smd_op_t op) {
  const void *const srcs[2] = {a, b};
  reduce(dst, srcs, 2, count, datatype, op, 1);
}

void divide(void *buf, size_t count, smd_datatype_t datatype, int divisor) {
  const void *const srcs[1] = {buf};
  reduce(buf, srcs, 1, count, datatype, SMD_SUM, divisor);
}

const char *implementation() { return kernels().name; }

namespace {
std::atomic<size_t> g_streaming_working_set{size_t(32) << 20};
}

void set_streaming_working_set(size_t bytes) {
  g_streaming_working_set.store(bytes, std::memory_order_relaxed);
}

size_t streaming_working_set() { return g_streaming_working_set.load(std::memory_order_relaxed); }

void force_portable(bool portable) {
  active_kernels.store(portable ? &portable_kernels : best_kernels(), std::memory_order_release);
}

}  // namespace smd::reduce
