// The contract between the kernel sets (portable, AVX2) and the dispatcher:
// each set is a table with one function per datatype and operation.
#pragma once

#include "core/reduce/element.h"

#include <smd.h>

#include <cstddef>
#include <utility>

namespace smd::reduce {

// The four combining operations; SMD_AVG is SMD_SUM plus a divisor.
inline constexpr int kCombineOps = 4;

// dst[i] = srcs[0][i] op ... op srcs[nsrc-1][i], divided by divisor when
// divisor > 1; as reduce() in reduce.h, for one datatype and op. nsrc >= 1,
// count >= 1.
using KernelFn = void (*)(void *dst, const void *const *srcs, int nsrc, size_t count, int divisor);

struct KernelTable {
  const char *name;
  KernelFn fn[SMD_DATATYPE_COUNT * kCombineOps];  // [datatype * 4 + op]
  KernelFn get(smd_datatype_t d, smd_op_t o) const { return fn[int(d) * kCombineOps + int(o)]; }
};

// The KernelFn of one kernel: every kernel set picks reduce<Div> the same
// way, once per call, so the undivided loop (all ops but SMD_AVG) carries no
// division; kept here so the sets differ only in their loops.
template <class Kernel>
void run_kernel(void *dst, const void *const *srcs, int nsrc, size_t count, int divisor) {
  using T = typename Kernel::T;
  const Divide<typename Kernel::C> div(divisor > 1 ? divisor : 1);
  if (divisor > 1) {
    Kernel::template reduce<true>(static_cast<T *>(dst), srcs, nsrc, count, div);
  } else {
    Kernel::template reduce<false>(static_cast<T *>(dst), srcs, nsrc, count, div);
  }
}

// Builds the table from a kernel template: Kernel<D, Op> has the element
// type T, the compute type C and
//   template <bool Div> static void reduce(T *dst, const void *const *srcs,
//                                          int nsrc, size_t count, const Divide<C> &div);
// for datatype D and operation Op.
template <template <smd_datatype_t, smd_op_t> class Kernel, size_t... I>
constexpr KernelTable make_kernel_table(const char *name, std::index_sequence<I...>) {
  return {name,
          {&run_kernel<Kernel<smd_datatype_t(I / kCombineOps), smd_op_t(I % kCombineOps)>>...}};
}
template <template <smd_datatype_t, smd_op_t> class Kernel>
constexpr KernelTable make_kernel_table(const char *name) {
  return make_kernel_table<Kernel>(name,
                                   std::make_index_sequence<SMD_DATATYPE_COUNT * kCombineOps>());
}

// Always available.
extern const KernelTable portable_kernels;

#if defined(__x86_64__) || defined(__i386__)
// Needs AVX2, F16C and FMA; the dispatcher checks the CPU before use.
extern const KernelTable avx2_kernels;
#endif

}  // namespace smd::reduce
