// Portable reduction kernels: plain loops over element.h that the compiler
// auto-vectorizes for whatever the build targets. Up to kFused inputs are
// combined in one loop; beyond that the arrays are cut into tiles that stay
// in L1, so every input is still read from memory once and the output
// written once, however many inputs there are.
#include "core/reduce/element.h"
#include "core/reduce/kernels.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace smd::reduce {
namespace {

// Tells the vectorizer that no dependence crosses loop iterations. (Clang
// warns where it still cannot vectorize: integer division has no vector
// form, and that is expected.)
#if defined(__clang__)
#define SMD_NO_CARRIED_DEPENDENCE _Pragma("clang loop vectorize(assume_safety)")
#pragma clang diagnostic ignored "-Wpass-failed"
#else
#define SMD_NO_CARRIED_DEPENDENCE _Pragma("GCC ivdep")
#endif

// Inputs one loop reads at most: 4 inputs + 1 output stay within what the
// hardware prefetchers track and the vectorizer handles well. (The
// switches in reduce() spell the groups out: 4 first, then 3 at a time
// besides the accumulator.)
constexpr int kFused = 4;
// Elements per tile of the accumulator (1-8 KiB, in the compute type).
constexpr size_t kTile = 1024;

template <smd_datatype_t D, smd_op_t Op>
struct Portable {
  using E = Element<D>;
  using T = typename E::T;
  using C = typename E::C;

  // Operands are stored elements or, from the accumulator, compute values.
  template <class X>
  static C in(X x) {
    if constexpr (std::is_same_v<X, C>) return x;
    else return E::load(x);
  }
  template <class Y>
  static Y out(C c) {
    if constexpr (std::is_same_v<Y, C>) return c;
    else return E::store(c);
  }

  // x0[i] op x1[i] op ..., left to right.
  template <class X0, class... X>
  static C fold(size_t i, const X0 *x0, const X *...x) {
    C acc = in(x0[i]);
    ((acc = combine<Op>(acc, in(x[i]))), ...);
    return acc;
  }

  // y[i] = fold(x...)[i], divided when Div. y may be the same array as an
  // x (in place), but never shifted: no dependence crosses iterations.
  template <bool Div, class Y, class... X>
  static void step(Y *y, size_t n, const Divide<C> &div, const X *...x) {
    SMD_NO_CARRIED_DEPENDENCE
    for (size_t i = 0; i < n; ++i) {
      C acc = fold(i, x...);
      if constexpr (Div) acc = div(acc);
      y[i] = out<Y>(acc);
    }
  }

  template <bool Div>
  static void reduce(T *dst, const void *const *srcs, int nsrc, size_t count,
                     const Divide<C> &div) {
    auto s = [srcs](int k, size_t base) { return static_cast<const T *>(srcs[k]) + base; };
    switch (nsrc) {
      case 1: return step<Div>(dst, count, div, s(0, 0));
      case 2: return step<Div>(dst, count, div, s(0, 0), s(1, 0));
      case 3: return step<Div>(dst, count, div, s(0, 0), s(1, 0), s(2, 0));
      case 4: return step<Div>(dst, count, div, s(0, 0), s(1, 0), s(2, 0), s(3, 0));
      default: break;
    }
    // dst is written only in the last step of a tile, after every input of
    // that tile has been read: in-place works with dst == any input.
    alignas(64) C acc[kTile];
    const C *const sum = acc;
    for (size_t base = 0; base < count; base += kTile) {
      const size_t n = std::min(kTile, count - base);
      step<false>(acc, n, div, s(0, base), s(1, base), s(2, base), s(3, base));
      int k = kFused;
      for (; nsrc - k >= kFused; k += kFused - 1) {
        step<false>(acc, n, div, sum, s(k, base), s(k + 1, base), s(k + 2, base));
      }
      switch (nsrc - k) {
        case 1: step<Div>(dst + base, n, div, sum, s(k, base)); break;
        case 2: step<Div>(dst + base, n, div, sum, s(k, base), s(k + 1, base)); break;
        default: step<Div>(dst + base, n, div, sum, s(k, base), s(k + 1, base), s(k + 2, base));
      }
    }
  }
};

}  // namespace

constinit const KernelTable portable_kernels = make_kernel_table<Portable>("portable");

}  // namespace smd::reduce
