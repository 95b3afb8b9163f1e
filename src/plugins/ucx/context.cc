// init, finalize and the address blob: one UCP context (tags, remote
// memory access, wake-up) with one worker per world.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "address.h"
#include "arg_checks.h"
#include "context.h"
#include "wire_tag.h"

namespace smd_ucx {

// UCX settings the plugin needs unless the user chose otherwise (each is
// applied only when none of the UCX_* variables that set it is present):
//  - posix/sysv shared memory offer peer-failure handling only when asked
//    (the "MM_" settings of both), and without it UCX refuses them for
//    our endpoints (asked only when UCX_TLS may select them: UCX warns
//    about settings no transport uses);
//  - the keepalive that notices dead shared-memory peers runs every 20 s
//    by default; the plugin ABI wants failures seen within seconds.
static const struct {
  const char *name;
  const char *value;
  bool shared_memory;        // a setting of the posix/sysv transports
  const char *overrides[3];  // environment variables that set it too
} kUcxDefaults[] = {
    {"MM_ERROR_HANDLING",
     "y",
     true,
     {"UCX_POSIX_ERROR_HANDLING", "UCX_SYSV_ERROR_HANDLING", "UCX_MM_ERROR_HANDLING"}},
    {"KEEPALIVE_INTERVAL", "1s", false, {"UCX_KEEPALIVE_INTERVAL", nullptr, nullptr}},
};

// Whether a UCX_TLS value may select posix or sysv shared memory: unset,
// "all", an exclusion list ("^..."), or naming them or an alias of them.
static bool tls_may_use_mm(const char *tls) {
  if (tls == nullptr || *tls == '\0' || *tls == '^') return true;
  std::string list = tls;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (!name.empty() && name[0] == '\\') name.erase(0, 1);  // "\posix": exactly
    name = name.substr(0, name.find(':'));                   // "posix:aux"
    for (const char *mm : {"all", "sm", "shm", "mm", "posix", "sysv"})
      if (name == mm) return true;
  }
  return false;
}

static bool user_set(const char *const (&names)[3]) {
  for (const char *n : names)
    if (n != nullptr && getenv(n) != nullptr) return true;
  return false;
}

// A world whose ranks fit in our tags (the host itself: check_init_args).
static Status check_placement(const smd_transport_host_t *host) {
  if (host->world_size > kMaxWorld)
    return fail_host(host, SMD_TRANSPORT_ERR_UNSUPPORTED,
                     "ucx: a world of %d ranks; tags carry at most %lld", host->world_size,
                     (long long)kMaxWorld);
  return SMD_TRANSPORT_OK;
}

static Status read_params(Context *ctx) {
  const char *tls = getenv("UCX_TLS");
  ctx->tls = tls == nullptr ? "(unset: all)" : *tls == '\0' ? "\"\"" : tls;
  return SMD_TRANSPORT_OK;
}

static Status ucx_failure(Context *ctx, const char *what, ucs_status_t s) {
  std::string said = ucx_log_last();
  return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "ucx: %s failed (UCX_TLS=%s): %s%s%s", what,
              ctx->tls.c_str(), ucs_status_string(s),
              said.empty() ? "" : "; UCX says: ", said.c_str());
}

static Status open_ucp(Context *ctx) {
  ucp_config_t *config = nullptr;
  ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) return ucx_failure(ctx, "ucp_config_read", s);
  bool mm = tls_may_use_mm(getenv("UCX_TLS"));
  for (const auto &d : kUcxDefaults) {
    if (user_set(d.overrides) || (d.shared_memory && !mm)) continue;
    if (ucp_config_modify(config, d.name, d.value) != UCS_OK)
      log_line(ctx, SMD_TRANSPORT_LOG_INFO, "ucx: this UCX has no %s setting", d.name);
  }
  ucp_params_t p;
  p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS |
                 UCP_PARAM_FIELD_ESTIMATED_NUM_PPN | UCP_PARAM_FIELD_NAME |
                 UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  p.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  p.estimated_num_eps = size_t(ctx->world_size);
  p.estimated_num_ppn = size_t(ctx->host->local_size > 0 ? ctx->host->local_size : 1);
  p.name = "smd";
  p.mt_workers_shared = 0;
  s = ucp_init(&p, config, &ctx->ucp);
  ucp_config_release(config);
  if (s != UCS_OK) return ucx_failure(ctx, "ucp_init", s);

  // A UCX built with CUDA support sends and receives device buffers itself
  // (its cuda transports): the core may then hand it device memory.
  ucp_context_attr_t ca;
  ca.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(ctx->ucp, &ca) == UCS_OK)
    ctx->cuda_memory = (ca.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;

  ucp_worker_params_t w;
  w.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // The core calls a context from one thread at a time, not always the
  // same one (its executor threads run non-blocking collectives).
  w.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  s = ucp_worker_create(ctx->ucp, &w, &ctx->worker);
  if (s != UCS_OK) return ucx_failure(ctx, "ucp_worker_create", s);

  if (ucp_worker_get_efd(ctx->worker, &ctx->event_fd) != UCS_OK) ctx->event_fd = -1;

  ucp_worker_attr_t a;
  a.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
  s = ucp_worker_query(ctx->worker, &a);
  if (s != UCS_OK) return ucx_failure(ctx, "ucp_worker_query", s);
  ctx->address = address_encode(ctx->rank, ctx->world_size, a.address, a.address_length);
  ucp_worker_release_address(ctx->worker, a.address);
  return SMD_TRANSPORT_OK;
}

static void close_ucp(Context *ctx) {
  if (ctx->worker != nullptr) ucp_worker_destroy(ctx->worker);
  if (ctx->ucp != nullptr) ucp_cleanup(ctx->ucp);
  ctx->worker = nullptr;
  ctx->ucp = nullptr;
}

static void destroy(Context *ctx) {
  close_ucp(ctx);
  if (ctx->unmap_events) unmap_hook_detach();
  ucx_log_detach(ctx->host);
  ctx->magic = 0;
  delete ctx;
}

Status context_init(const smd_transport_host_t *host, void **out) {
  if (Status s = smd_plugin::check_init_args(host, "ucx", out)) return s;
  if (Status s = check_placement(host)) return s;
  auto *ctx = smd_plugin::new_context<Context>(host);
  ucx_log_attach(host);
  ucx_log_clear();
  Status s = read_params(ctx);
  if (s == SMD_TRANSPORT_OK) s = open_ucp(ctx);
  if (s != SMD_TRANSPORT_OK) {
    destroy(ctx);
    return s;
  }
  // UCM hears every unmap of the process: the core's registration cache
  // (for plugins that need registered buffers) may then keep idle
  // registrations. A core older than host->mem_unmapped does not listen.
  if (SMD_TRANSPORT_HAS(host, smd_transport_host_t, mem_unmapped))
    ctx->unmap_events = unmap_hook_attach(host->mem_unmapped);

  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  log_line(ctx, SMD_TRANSPORT_LOG_INFO,
           "ucx: UCX %u.%u.%u, UCX_TLS=%s, worker address %zu B, waits %s, "
           "unmaps %sreported to the core",
           major, minor, release, ctx->tls.c_str(), ctx->address.size(),
           ctx->event_fd >= 0 ? "on the worker's event fd" : "by napping",
           ctx->unmap_events ? "" : "not ");
  *out = ctx;
  return SMD_TRANSPORT_OK;
}

Status context_finalize(Context *ctx) {
  std::vector<Endpoint *> eps = ctx->endpoints;
  endpoints_close(ctx, eps);
  registrations_release_all(ctx);
  // Requests the caller never tested are dropped with the context.
  if (size_t n = ctx->pool.live())
    log_line(ctx, SMD_TRANSPORT_LOG_TRACE, "ucx: finalize drops %zu requests", n);
  destroy(ctx);
  return SMD_TRANSPORT_OK;
}

Status context_address(Context *ctx, void *buf, size_t *size) {
  size_t need = ctx->address.size();
  if (Status s = smd_plugin::check_address_room(ctx, "ucx", buf, size, need)) return s;
  memcpy(buf, ctx->address.data(), need);
  *size = need;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_ucx
