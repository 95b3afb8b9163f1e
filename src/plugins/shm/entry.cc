// The exported v1 table: the entries every plugin shares come from
// entry_table.h; shm's own find requests in its pool and serve shared
// segments.
#include "context.h"
#include "entry_table.h"

using namespace smd_shm;
using smd_plugin::with_context;
using smd_plugin::with_endpoint;

namespace {

// The variables read_params() reads (context.cc).
const smd_transport_param_t kShmParams[] = {
    {"SMD_SHM_CMA", "bool", "1",
     "Let the shm transport copy directly between processes with cross-memory attach "
     "(process_vm_readv)."},
    {"SMD_SHM_EAGER_LIMIT", "int", "32704",
     "Largest message the shm transport copies through its rings; larger ones go by "
     "cross-memory attach."},
    {nullptr, nullptr, nullptr, nullptr},
};

struct Shm : smd_plugin::PluginTraits<Context, kContextMagic, Endpoint, kEndpointMagic> {
  static constexpr const char *kName = "shm";
  static constexpr const char *kDescription =
      "shared memory within a node: memfd rings, CMA for large messages";
  static constexpr uint64_t kCaps = SMD_TRANSPORT_CAP_INTRA_NODE_ONLY | SMD_TRANSPORT_CAP_RMA |
                                    SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS | SMD_TRANSPORT_CAP_SEGMENTS;
  static constexpr const smd_transport_param_t *kParams = kShmParams;
  static constexpr auto context_init = smd_shm::context_init;
  // context_caps: the caps above hold everywhere; probe: never a network
  // plugin (INTRA_NODE_ONLY).

  static bool peer_dead(Context *ctx, Endpoint *ep) { return liveness_check(ctx, ep); }

  static Request *find_request(Context *ctx, void *p) {
    auto *r = static_cast<Request *>(p);
    return r != nullptr && r->magic == kRequestLive && ctx->pool.find(r->id()) == r ? r : nullptr;
  }
  static bool finished(const Request *r) { return r->phase == Phase::kDone; }
  static void release(Context *ctx, Request *r) { ctx->pool.release(r); }
  static constexpr auto test = smd_plugin::test_after_progress<Shm>;

  static Status cancel(void *c, void *request) {
    return with_context<Shm>(c, "cancel", [&](Context *ctx) {
      Request *r = find_request(ctx, request);
      if (r == nullptr)
        return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: cancel: not a live request");
      if (r->phase != Phase::kDone) {
        request_unlink(ctx, r);
        request_complete(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0);
      }
      ctx->pool.release(r);
      return SMD_TRANSPORT_OK;
    });
  }

  static Status segment_create(void *c, size_t size, void **ptr, void **segment, void *handle,
                               size_t *handle_size) {
    return with_context<Shm>(c, "segment_create", [&](Context *ctx) {
      return smd_shm::segment_create(ctx, size, ptr, segment, handle, handle_size);
    });
  }

  static Status segment_attach(void *c, void *e, const void *handle, size_t handle_size, void **ptr,
                               size_t *size, void **segment) {
    return with_endpoint<Shm>(c, e, "segment_attach", [&](Context *ctx, Endpoint *ep) {
      return smd_shm::segment_attach(ctx, ep, handle, handle_size, ptr, size, segment);
    });
  }

  static Status segment_release(void *c, void *segment) {
    return with_context<Shm>(c, "segment_release", [&](Context *ctx) {
      return smd_shm::segment_release(ctx, static_cast<Segment *>(segment));
    });
  }
};

constexpr smd_transport_v1_t kTable = smd_plugin::v1_table<Shm>();

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(
    void) {
  return &kTable;
}
