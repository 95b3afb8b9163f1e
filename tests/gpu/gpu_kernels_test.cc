// The CUDA kernels of libsmd-gpu.so against the host kernels
// (src/core/reduce): every datatype x op (SMD_AVG as SUM + divisor), 1 to
// more than SMD_GPU_MAX_INPUTS inputs, lengths around the 16-byte vector
// width, pointers aligned, equally misaligned (vector body after a scalar
// head) and differently misaligned (element path), in place and not; and
// float32 <-> float16/bfloat16 casts. A plain program rather than a
// GoogleTest one, so it builds on a GPU machine without GoogleTest; exit 77
// (skipped) without a device.
#include <smd.h>

#include <cmath>
#include <memory>
#include <cstdint>
#include <random>
#include <string>

#include "core/reduce/half.h"
#include "core/reduce/reduce.h"
#include "core/util/dtype.h"
#include "device_buffers.h"

using namespace smd;
using namespace smd::gpu;
using namespace smd::gpu::testing;

namespace {

int g_failures = 0;
int g_cases = 0;

void random_fill(std::vector<unsigned char> &bytes, smd_datatype_t dt, std::mt19937_64 &rng) {
  const size_t es = datatype_size(dt);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (size_t i = 0; i + es <= bytes.size(); i += es) {
    const float f = value(rng);
    uint64_t bits = rng();
    switch (dt) {
      case SMD_FLOAT16: bits = reduce::float_to_half(f); break;
      case SMD_BFLOAT16: bits = reduce::float_to_bfloat16(f); break;
      case SMD_FLOAT32: memcpy(&bits, &f, 4); break;
      case SMD_FLOAT64: {
        double d = f;
        memcpy(&bits, &d, 8);
        break;
      }
      default: break;
    }
    memcpy(&bytes[i], &bits, es);
  }
}

// float16/bfloat16 folded in several launches round between them; the host
// rounds once. Everything else must match bit for bit.
bool close_enough(const unsigned char *got, const unsigned char *want, size_t count,
                  smd_datatype_t dt, bool exact) {
  if (count == 0) return true;  // empty vectors' data() may be null: memcmp must not see it
  if (exact || (dt != SMD_FLOAT16 && dt != SMD_BFLOAT16))
    return memcmp(got, want, count * datatype_size(dt)) == 0;
  for (size_t i = 0; i < count; ++i) {
    uint16_t g, w;
    memcpy(&g, got + 2 * i, 2);
    memcpy(&w, want + 2 * i, 2);
    float gf = dt == SMD_FLOAT16 ? reduce::half_to_float(g) : reduce::bfloat16_to_float(g);
    float wf = dt == SMD_FLOAT16 ? reduce::half_to_float(w) : reduce::bfloat16_to_float(w);
    if (std::fabs(gf - wf) > 0.02f * std::fmax(1.0f, std::fabs(wf))) return false;
  }
  return true;
}

void reduce_case(const CudaApi &a, smd_datatype_t dt, smd_op_t op, int nsrc, size_t count,
                 const std::vector<size_t> &offsets, bool in_place, std::mt19937_64 &rng) {
  ++g_cases;
  const size_t es = datatype_size(dt);
  const size_t bytes = count * es;
  const int divisor = op == SMD_AVG ? nsrc : 1;
  const smd_op_t kernel_op = op == SMD_AVG ? SMD_SUM : op;
  std::vector<std::vector<unsigned char>> host(nsrc, std::vector<unsigned char>(bytes));
  std::vector<const void *> host_srcs;
  for (auto &h : host) {
    random_fill(h, dt, rng);
    host_srcs.push_back(h.data());
  }
  std::vector<unsigned char> want(bytes), got(bytes);
  reduce::reduce(want.data(), host_srcs.data(), nsrc, count, dt, kernel_op, divisor);

  // Each buffer: 64 spare bytes so offsets (in elements) stay inside it.
  std::vector<std::unique_ptr<DeviceBuffer>> dev;
  std::vector<const void *> srcs;
  for (int k = 0; k < nsrc; ++k) {
    dev.push_back(std::make_unique<DeviceBuffer>(a, bytes + 64));
    const size_t off = offsets[k % offsets.size()] * es;
    dev.back()->upload(off, host[k].data(), bytes);
    srcs.push_back(dev.back()->data() + off);
  }
  DeviceBuffer out(a, bytes + 64);
  const size_t out_off = offsets.back() * es;
  void *dst = in_place ? const_cast<void *>(srcs[0]) : out.data() + out_off;
  int err = kernels().reduce(dst, srcs.data(), nsrc, count, dt, kernel_op, divisor, nullptr);
  check("smd_gpu reduce", err);
  check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
  if (in_place) dev[0]->download(got.data(), offsets[0] * es, bytes);
  else out.download(got.data(), out_off, bytes);
  if (!close_enough(got.data(), want.data(), count, dt, nsrc <= SMD_GPU_MAX_INPUTS)) {
    ++g_failures;
    std::string offs;
    for (size_t o : offsets) offs += std::to_string(o) + " ";
    fprintf(stderr, "FAIL reduce %s %s nsrc=%d count=%zu offsets(elements)=%s%s\n",
            datatype_name(dt), op_name(op), nsrc, count, offs.c_str(), in_place ? " in place" : "");
  }
}

void cast_case(const CudaApi &a, smd_datatype_t narrow, size_t count, std::mt19937_64 &rng) {
  ++g_cases;
  std::vector<float> in(count);
  std::uniform_real_distribution<float> value(-1e4f, 1e4f);
  for (float &f : in) f = value(rng);
  DeviceBuffer f32(a, count * 4 + 16), h16(a, count * 2 + 16), back(a, count * 4 + 16);
  f32.upload(0, in.data(), count * 4);
  check("cast narrow", kernels().cast(h16.data(), narrow, f32.data(), SMD_FLOAT32, count, nullptr));
  check("cast widen", kernels().cast(back.data(), SMD_FLOAT32, h16.data(), narrow, count, nullptr));
  std::vector<uint16_t> got16(count);
  std::vector<float> got32(count);
  h16.download(got16.data(), 0, count * 2);
  back.download(got32.data(), 0, count * 4);
  for (size_t i = 0; i < count; ++i) {
    const uint16_t want =
        narrow == SMD_FLOAT16 ? reduce::float_to_half(in[i]) : reduce::float_to_bfloat16(in[i]);
    const float want_back =
        narrow == SMD_FLOAT16 ? reduce::half_to_float(want) : reduce::bfloat16_to_float(want);
    if (got16[i] != want || memcmp(&got32[i], &want_back, 4) != 0) {
      ++g_failures;
      fprintf(stderr, "FAIL cast float32 <-> %s at %zu of %zu: %g -> 0x%04x (want 0x%04x)\n",
              datatype_name(narrow), i, count, in[i], got16[i], want);
      return;
    }
  }
}

void bad_input(const CudaApi &a) {
  ++g_cases;
  DeviceBuffer b(a, 64);
  const void *odd[1] = {b.data() + 1};  // not aligned to a float
  const bool rejected =
      kernels().reduce(b.data(), odd, 1, 4, SMD_FLOAT32, SMD_SUM, 1, nullptr) != 0 &&
      kernels().reduce(b.data(), odd, 0, 4, SMD_FLOAT32, SMD_SUM, 1, nullptr) != 0 &&
      kernels().reduce(b.data(), odd, 1, 4, SMD_DATATYPE_COUNT, SMD_SUM, 1, nullptr) != 0 &&
      kernels().cast(b.data(), SMD_INT32, b.data(), SMD_FLOAT32, 4, nullptr) != 0;
  if (!rejected) {
    ++g_failures;
    fprintf(stderr, "FAIL bad input was accepted\n");
  }
}

}  // namespace

int main(int argc, char **argv) {
  const CudaApi &a = require_device("gpu-kernels");
  // --quick (the host stand-in's run): every case but the longest vectors,
  // whose host loops would take most of a minute there.
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  printf("kernel module %s (%s)\n", kernel_module().path.c_str(), kernels().archs);
  std::mt19937_64 rng(18);
  const std::vector<std::vector<size_t>> alignments = {{0}, {1}, {0, 1, 2, 3}};
  for (int d = 0; d < SMD_DATATYPE_COUNT; ++d) {
    for (int o = 0; o < SMD_OP_COUNT; ++o) {
      const auto dt = static_cast<smd_datatype_t>(d);
      const auto op = static_cast<smd_op_t>(o);
      for (int nsrc : {1, 2, 3, SMD_GPU_MAX_INPUTS, SMD_GPU_MAX_INPUTS + 3})
        for (size_t count :
             {size_t(0), size_t(1), size_t(7), size_t(33), size_t(4099), size_t(100003)})
          if (!quick || count < 100000)
            for (const auto &offsets : alignments)
              reduce_case(a, dt, op, nsrc, count, offsets, false, rng);
      reduce_case(a, dt, op, 4, quick ? 7001 : 70001, {0}, true, rng);
      reduce_case(a, dt, op, 4, quick ? 7001 : 70001, {1}, true, rng);
    }
  }
  for (smd_datatype_t narrow : {SMD_FLOAT16, SMD_BFLOAT16})
    for (size_t count : {size_t(1), size_t(1000), size_t(quick ? 1 << 14 : 1 << 20)})
      cast_case(a, narrow, count, rng);
  bad_input(a);
  printf("%d of %d cases passed\n", g_cases - g_failures, g_cases);
  return g_failures ? 1 : 0;
}
