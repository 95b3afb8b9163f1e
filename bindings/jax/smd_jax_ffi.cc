// XLA FFI handlers that run smd collectives inside compiled JAX programs
// (smd.jax registers them with jax.ffi.register_ffi_target).
//
// Each collective is one handler per platform: "cuda" handlers take XLA's
// stream for the call (PlatformStream) and pass it to smd as smd_stream_t,
// "cpu" handlers pass the NULL stream (host memory, host-synchronous). The
// operands are an ordering token (smd.jax threads JAX's ordered-effect token
// through every collective, so they run in program order on every rank)
// and one buffer; the results are the token and one buffer. Attributes:
// the communicator (its smd_comm_t address, from smd.init() in the same
// process), the smd datatype, and the op or root where the collective has
// one. The element count is the buffer's; the datatype attribute says how
// smd reads its elements, so that bfloat16 and the integer types need no
// table here.
//
// Written against xla/ffi/api/ffi.h as jaxlib ships it (jax.ffi.include_dir());
// the CPU handlers run in meson test --suite jax; docs/GPU.md says what is
// left to run for the CUDA ones.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "smd.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

smd_comm_t *comm_of(int64_t address) {
  return reinterpret_cast<smd_comm_t *>(static_cast<uintptr_t>(address));
}

// An smd failure as XLA's error: the code's name and smd's last-error text
// (which names the call, rank and peer).
ffi::Error fail(const char *call, smd_result_t result) {
  std::string message = std::string("smd ") + call + ": " + smd_result_string(result);
  const char *detail = smd_last_error();
  if (detail && *detail) message += std::string(": ") + detail;
  return ffi::Error(ffi::ErrorCode::kInternal, message);
}

ffi::Error done(const char *call, smd_result_t result) {
  return result == SMD_SUCCESS ? ffi::Error::Success() : fail(call, result);
}

ffi::Error check_comm(int64_t comm, int *size) {
  if (comm == 0) return ffi::Error::InvalidArgument("smd: no communicator (comm attribute is 0)");
  smd_result_t r = smd_comm_size(comm_of(comm), size);
  return done("comm_size", r);
}

// ---- the collectives, over any stream ---------------------------------------

ffi::Error allreduce(void *stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t comm,
                     int32_t datatype, int32_t op) {
  int size = 0;
  if (ffi::Error e = check_comm(comm, &size); e.failure()) return e;
  return done("allreduce", smd_allreduce(x.untyped_data(), y->untyped_data(), x.element_count(),
                                         static_cast<smd_datatype_t>(datatype),
                                         static_cast<smd_op_t>(op), comm_of(comm), stream));
}

ffi::Error allgather(void *stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t comm,
                     int32_t datatype) {
  int size = 0;
  if (ffi::Error e = check_comm(comm, &size); e.failure()) return e;
  if (y->element_count() != x.element_count() * static_cast<size_t>(size))
    return ffi::Error::InvalidArgument("smd allgather: the result must hold size x input");
  return done("allgather",
              smd_allgather(x.untyped_data(), y->untyped_data(), x.element_count(),
                            static_cast<smd_datatype_t>(datatype), comm_of(comm), stream));
}

ffi::Error reduce_scatter(void *stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                          int64_t comm, int32_t datatype, int32_t op) {
  int size = 0;
  if (ffi::Error e = check_comm(comm, &size); e.failure()) return e;
  if (x.element_count() != y->element_count() * static_cast<size_t>(size))
    return ffi::Error::InvalidArgument("smd reduce_scatter: the input must hold size x result");
  return done("reduce_scatter",
              smd_reduce_scatter(x.untyped_data(), y->untyped_data(), y->element_count(),
                                 static_cast<smd_datatype_t>(datatype), static_cast<smd_op_t>(op),
                                 comm_of(comm), stream));
}

ffi::Error broadcast(void *stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t comm,
                     int32_t datatype, int32_t root) {
  int size = 0;
  if (ffi::Error e = check_comm(comm, &size); e.failure()) return e;
  return done("broadcast",
              smd_broadcast(x.untyped_data(), y->untyped_data(), x.element_count(),
                            static_cast<smd_datatype_t>(datatype), root, comm_of(comm), stream));
}

ffi::Error alltoall(void *stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, int64_t comm,
                    int32_t datatype) {
  int size = 0;
  if (ffi::Error e = check_comm(comm, &size); e.failure()) return e;
  if (x.element_count() % static_cast<size_t>(size) != 0)
    return ffi::Error::InvalidArgument("smd alltoall: the input is not size equal blocks");
  return done("alltoall",
              smd_alltoall(x.untyped_data(), y->untyped_data(),
                           x.element_count() / static_cast<size_t>(size),
                           static_cast<smd_datatype_t>(datatype), comm_of(comm), stream));
}

// ---- bindings: token + buffer in, token + buffer out -------------------------

// The token carries no data: it only orders the calls (see the file comment).
template <typename... Attrs>
struct OnCuda {
  template <ffi::Error (*Run)(void *, ffi::AnyBuffer, ffi::Result<ffi::AnyBuffer>, int64_t, int32_t,
                              Attrs...)>
  static ffi::Error call(void *stream, ffi::Token, ffi::AnyBuffer x, ffi::Result<ffi::Token>,
                         ffi::Result<ffi::AnyBuffer> y, int64_t comm, int32_t datatype,
                         Attrs... attrs) {
    return Run(stream, x, y, comm, datatype, attrs...);
  }
};

template <typename... Attrs>
struct OnCpu {
  template <ffi::Error (*Run)(void *, ffi::AnyBuffer, ffi::Result<ffi::AnyBuffer>, int64_t, int32_t,
                              Attrs...)>
  static ffi::Error call(ffi::Token, ffi::AnyBuffer x, ffi::Result<ffi::Token>,
                         ffi::Result<ffi::AnyBuffer> y, int64_t comm, int32_t datatype,
                         Attrs... attrs) {
    return Run(nullptr, x, y, comm, datatype, attrs...);
  }
};

// What every handler decodes after the platform's context (if any).
template <typename Binding>
auto token_buffer_comm(Binding binding) {
  return std::move(binding)
      .template Arg<ffi::Token>()
      .template Arg<ffi::AnyBuffer>()
      .template Ret<ffi::Token>()
      .template Ret<ffi::AnyBuffer>()
      .template Attr<int64_t>("comm")
      .template Attr<int32_t>("datatype");
}

auto cuda_binding() {
  return token_buffer_comm(ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void *>>());
}
auto cpu_binding() { return token_buffer_comm(ffi::Ffi::Bind()); }

}  // namespace

// Exported names: smd_jax_<collective>_<platform> (smd.jax looks them up);
// the project builds with hidden visibility, so these are made visible here.
// SMD_JAX_HANDLERS(collective[, attribute]): its cuda and cpu handlers, with
// the name of its int32 attribute after comm and datatype (op, root) if any.
#define SMD_JAX_HANDLERS(collective, ...)                                                \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(smd_jax_##collective##_cuda,                             \
                                OnCuda<__VA_OPT__(int32_t)>::call<collective>,           \
                                cuda_binding() __VA_OPT__(.Attr<int32_t>(__VA_ARGS__))); \
  XLA_FFI_DEFINE_HANDLER_SYMBOL(smd_jax_##collective##_cpu,                              \
                                OnCpu<__VA_OPT__(int32_t)>::call<collective>,            \
                                cpu_binding() __VA_OPT__(.Attr<int32_t>(__VA_ARGS__)))

#pragma GCC visibility push(default)
SMD_JAX_HANDLERS(allreduce, "op");
SMD_JAX_HANDLERS(reduce_scatter, "op");
SMD_JAX_HANDLERS(broadcast, "root");
SMD_JAX_HANDLERS(allgather);
SMD_JAX_HANDLERS(alltoall);
#pragma GCC visibility pop
