#include "core/sharded/float_elements.h"

#include <cstring>
#include <type_traits>

#include "core/reduce/half.h"
#include "core/util/dtype.h"
#include "core/util/error.h"

namespace smd::sharded {

namespace {

struct F16 {
  using Bits = uint16_t;
  static float load(Bits b) { return reduce::half_to_float(b); }
  static Bits store(float f) { return reduce::float_to_half(f); }
};
struct BF16 {
  using Bits = uint16_t;
  static float load(Bits b) { return reduce::bfloat16_to_float(b); }
  static Bits store(float f) { return reduce::float_to_bfloat16(f); }
};
template <class T>
struct Plain {
  using Bits = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
using F32 = Plain<float>;
using F64 = Plain<double>;

// Calls fn(Tag{}) with the element type of dt.
template <class F>
void with_type(smd_datatype_t dt, F &&fn) {
  switch (dt) {
    case SMD_FLOAT16: return fn(F16{});
    case SMD_BFLOAT16: return fn(BF16{});
    case SMD_FLOAT32: return fn(F32{});
    case SMD_FLOAT64: return fn(F64{});
    default:
      fail(SMD_ERR_INVALID_ARGUMENT, "datatype %d is not a floating type", static_cast<int>(dt));
  }
}

}  // namespace

bool is_float_type(smd_datatype_t dt) {
  return dt == SMD_FLOAT16 || dt == SMD_BFLOAT16 || dt == SMD_FLOAT32 || dt == SMD_FLOAT64;
}

void convert_scaled(void *dst, smd_datatype_t dst_type, const void *src, smd_datatype_t src_type,
                    size_t n, double scale) {
  if (dst_type == src_type && scale == 1.0) {
    if (dst != src) std::memmove(dst, src, n * datatype_size(dst_type));
    return;
  }
  with_type(src_type, [&](auto in) {
    with_type(dst_type, [&](auto out) {
      using In = decltype(in);
      using Out = decltype(out);
      const auto *s = static_cast<const typename In::Bits *>(src);
      auto *d = static_cast<typename Out::Bits *>(dst);
      if constexpr (std::is_same_v<In, F64> || std::is_same_v<Out, F64>) {
        for (size_t i = 0; i < n; ++i)
          d[i] = Out::store(static_cast<double>(In::load(s[i])) * scale);
      } else {
        float f = static_cast<float>(scale);
        for (size_t i = 0; i < n; ++i) d[i] = Out::store(In::load(s[i]) * f);
      }
    });
  });
}

double sum_of_squares(const void *src, smd_datatype_t type, size_t n) {
  double total = 0;
  with_type(type, [&](auto tag) {
    using T = decltype(tag);
    const auto *s = static_cast<const typename T::Bits *>(src);
    for (size_t i = 0; i < n; ++i) {
      double v = static_cast<double>(T::load(s[i]));
      total += v * v;
    }
  });
  return total;
}

}  // namespace smd::sharded
