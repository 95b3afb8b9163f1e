// Micro-benchmark of the reduction kernels: GB/s of output (count *
// element size / time) for sum over nsrc inputs, portable and AVX2 side by
// side, in cache and out of cache. Samples of the two implementations are
// interleaved and the median is reported, since the machine is noisy.
//
//   reduce-bench [--small-kib N] [--big-mib N] [--samples N] [--inplace]
//                [--dtypes f32,bf16,f16,...] [--nsrc 2,4,8]
#include "core/reduce/reduce.h"

#include "core/util/dtype.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
namespace reduce = smd::reduce;

struct Options {
  size_t small_bytes = 256 << 10;
  size_t big_bytes = size_t(256) << 20;
  int samples = 7;
  bool inplace = false;
  std::vector<smd_datatype_t> dtypes = {SMD_FLOAT32, SMD_BFLOAT16, SMD_FLOAT16};
  std::vector<int> nsrcs = {2, 4, 8};
};

std::vector<std::string> split(const char *list) {
  std::vector<std::string> out;
  std::string item;
  for (const char *p = list;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*p == '\0') return out;
    } else {
      item += *p;
    }
  }
}

smd_datatype_t parse_dtype(const std::string &s) {
  const char *names[][2] = {{"i8", "int8"},     {"u8", "uint8"},      {"i32", "int32"},
                            {"u32", "uint32"},  {"i64", "int64"},     {"u64", "uint64"},
                            {"f16", "float16"}, {"bf16", "bfloat16"}, {"f32", "float32"},
                            {"f64", "float64"}};
  for (int d = 0; d < SMD_DATATYPE_COUNT; ++d) {
    if (s == names[d][0] || s == names[d][1]) return smd_datatype_t(d);
  }
  std::fprintf(stderr, "unknown datatype %s\n", s.c_str());
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--small-kib" && has_value) {
      o.small_bytes = size_t(std::atol(argv[++i])) << 10;
    } else if (a == "--big-mib" && has_value) {
      o.big_bytes = size_t(std::atol(argv[++i])) << 20;
    } else if (a == "--samples" && has_value) {
      o.samples = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--inplace") {
      o.inplace = true;
    } else if (a == "--dtypes" && has_value) {
      o.dtypes.clear();
      for (const auto &s : split(argv[++i])) o.dtypes.push_back(parse_dtype(s));
    } else if (a == "--nsrc" && has_value) {
      o.nsrcs.clear();
      for (const auto &s : split(argv[++i])) o.nsrcs.push_back(std::max(1, std::atoi(s.c_str())));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--small-kib N] [--big-mib N] [--samples N] [--inplace]\n"
                   "          [--dtypes f32,bf16,f16,...] [--nsrc 2,4,8]\n",
                   argv[0]);
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  return o;
}

// Seconds per call of `fn`, timed over enough calls to last ~20 ms.
template <class Fn>
double seconds_per_call(Fn fn, int calls) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - start).count() / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void bench(const Options &o, smd_datatype_t dtype, int nsrc, size_t bytes) {
  const size_t size = smd::datatype_size(dtype);
  const size_t count = bytes / size;
  // Buffers written with non-zero bytes so every page is really there; a
  // float pattern (0x3c00.. / 0x3f80..) that stays finite when summed.
  std::vector<std::vector<unsigned char>> in(nsrc, std::vector<unsigned char>(count * size));
  for (auto &b : in) {
    for (size_t i = 0; i < b.size(); ++i) b[i] = (i % size == size - 1) ? 0x3c : 0x01;
  }
  std::vector<unsigned char> out(count * size, 0x11);
  std::vector<const void *> srcs;
  for (const auto &b : in) srcs.push_back(b.data());
  void *dst = o.inplace ? static_cast<void *>(in[0].data()) : out.data();
  auto call = [&] { reduce::reduce(dst, srcs.data(), nsrc, count, dtype, SMD_SUM, 1); };

  call();  // warm up, fault pages in
  const double once = seconds_per_call(call, 1);
  const int calls = std::max(1, int(0.02 / std::max(once, 1e-9)));
  std::vector<double> t[2];
  for (int s = 0; s < o.samples; ++s) {
    for (const int portable : {1, 0}) {
      reduce::force_portable(portable);
      t[portable].push_back(seconds_per_call(call, calls));
    }
  }
  reduce::force_portable(false);
  const double gb = double(count * size) / 1e9;
  const double p = gb / median(t[1]);
  const double v = gb / median(t[0]);
  std::printf(
      "%-9s nsrc %2d  %9zu KiB/input  portable %6.2f GB/s  %-9s %6.2f GB/s"
      "  (x%.2f; reads+writes %.1f GB/s)\n",
      smd::datatype_name(dtype), nsrc, bytes >> 10, p, reduce::implementation(), v, v / p,
      v * (nsrc + 1));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  std::printf("GB/s of output, %s, median of %d samples; best implementation here: %s\n",
              o.inplace ? "in place (dst = srcs[0])" : "separate dst", o.samples,
              reduce::implementation());
  for (const size_t bytes : {o.small_bytes, o.big_bytes}) {
    if (bytes == 0) continue;
    for (const smd_datatype_t d : o.dtypes) {
      for (const int n : o.nsrcs) bench(o, d, n, bytes);
    }
  }
  return 0;
}
