// The exported v1 table: the entries every plugin shares come from
// entry_table.h; ucx's own test and cancel its requests, and say what
// this UCX offers.
#include <cstdio>

#include "context.h"
#include "entry_table.h"

using namespace smd_ucx;

namespace {

struct Ucx : smd_plugin::PluginTraits<Context, kContextMagic, Endpoint, kEndpointMagic> {
  static constexpr const char *kName = "ucx";
  static constexpr const char *kDescription =
      "UCX (UCP tagged messages) over whatever UCX_TLS selects: tcp, shared "
      "memory, InfiniBand verbs";
  static constexpr uint64_t kCaps = SMD_TRANSPORT_CAP_RMA;
  // kParams: none of its own; UCX's UCX_* variables pass through.
  static constexpr auto context_init = smd_ucx::context_init;

  static bool peer_dead(Context *, Endpoint *ep) { return ep->failed; }

  template <class F>
  static Status with_request(void *c, void *q, const char *what, F body) {
    return smd_plugin::with_context<Ucx>(c, what, [&](Context *ctx) {
      return smd_plugin::with_owned_handle<Request>(ctx, q, kRequestLive, "ucx", what,
                                                    "not a live request", body);
    });
  }

  static Status test(void *c, void *request, int *done, size_t *size) {
    return with_request(c, request, "test", [&](Context *ctx, Request *r) {
      if (done == nullptr) return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: test: done is NULL");
      return request_test(ctx, r, done, size);
    });
  }

  static Status cancel(void *c, void *request) {
    return with_request(c, request, "cancel",
                        [](Context *ctx, Request *r) { return request_cancel(ctx, r); });
  }

  static uint64_t context_caps(void *c) {
    Context *ctx = smd_plugin::live_handle<Context>(c, kContextMagic);
    if (ctx == nullptr) return 0;
    return (ctx->unmap_events ? SMD_TRANSPORT_CAP_REPORTS_UNMAPS : 0) |
           (ctx->cuda_memory ? SMD_TRANSPORT_CAP_DEVICE_MEMORY : 0);
  }

  // Ahead of the portable tcp fallback: UCX drives InfiniBand and RoCE
  // natively (rc, dc, ud) and is close to libfabric over TCP (measured on
  // loopback, np=2 allreduce: ucx ahead up to 32 KiB, efa's tcp;ofi_rxm
  // ahead at 8 MiB; docs/PLUGINS.md). Behind efa where an EFA device is.
  static int32_t probe(const smd_transport_host_t *, char *why, size_t why_size) {
    snprintf(why, why_size, "UCX drives InfiniBand/RoCE natively, and TCP elsewhere");
    return 50;
  }
};

constexpr smd_transport_v1_t kTable = smd_plugin::v1_table<Ucx>();

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(
    void) {
  return &kTable;
}
