#include "core/plugin/transport.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "core/plugin/signal_guard.h"
#include "core/plugin/unmap_log.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {
namespace {
// The explanation a plugin gave for the failure it is returning; read by
// the same thread right after the call.
thread_local std::string tls_plugin_error;

// What context_caps() may add to the table's caps.
constexpr uint64_t kContextCaps = SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED |
                                  SMD_TRANSPORT_CAP_REPORTS_UNMAPS |
                                  SMD_TRANSPORT_CAP_DEVICE_MEMORY;

}  // namespace

class PluginHost {
 public:
  PluginHost(const std::string &name, const TransportPlacement &where)
      : name_(name),
        host_{.struct_size = sizeof(smd_transport_host_t),
              .abi_version = SMD_TRANSPORT_ABI_VERSION,
              .host = this,
              .rank = where.rank,
              .world_size = where.world_size,
              .local_rank = where.local_rank,
              .local_size = where.local_size,
              .node_index = where.node_index,
              .node_count = where.node_count,
              .timeout_ms = where.timeout_ms,
              .log = &PluginHost::log,
              .set_error = &PluginHost::set_error,
              .get_param = &PluginHost::get_param,
              .mem_unmapped = &PluginHost::mem_unmapped} {}
  const smd_transport_host_t *host() const { return &host_; }

 private:
  static void log(void *host, int level, const char *message) {
    auto *self = static_cast<PluginHost *>(host);
    LogLevel l = level <= SMD_TRANSPORT_LOG_WARN   ? LogLevel::kWarn
                 : level == SMD_TRANSPORT_LOG_INFO ? LogLevel::kInfo
                                                   : LogLevel::kTrace;
    if (log_enabled(l, "transport"))
      log_write(l, "transport", "[%s] %s", self->name_.c_str(), message ? message : "");
  }

  static void set_error(void *, const char *message) { tls_plugin_error = message ? message : ""; }

  static const char *get_param(void *host, const char *name) {
    auto *self = static_cast<PluginHost *>(host);
    if (!name) return nullptr;
    const char *v = getenv(name);
    if (!v) return nullptr;
    std::lock_guard<std::mutex> lock(self->params_mu_);
    auto &slot = self->params_[name];
    slot = v;
    return slot.c_str();
  }

  static void mem_unmapped(const void *start, size_t size) {
    auto at = reinterpret_cast<uintptr_t>(start);
    unmap_log_note(at, at + size);
  }

  std::string name_;
  smd_transport_host_t host_{};
  std::mutex params_mu_;
  std::map<std::string, std::string> params_;  // keeps get_param strings alive
};

ProbeResult probe_plugin(const LoadedPlugin &plugin, const TransportPlacement &where) {
  const smd_transport_v1_t *t = plugin.table;
  if (!SMD_TRANSPORT_HAS(t, smd_transport_v1_t, probe) || !t->probe)
    return {SMD_TRANSPORT_DEFAULT_PRIORITY, "no probe: the default"};
  PluginHost host(plugin.name, where);
  char why[256] = "";
  tls_plugin_error.clear();
  int32_t priority = t->probe(host.host(), why, sizeof why);
  why[sizeof why - 1] = '\0';
  return {priority, *why ? why : tls_plugin_error};
}

smd_result_t result_from_transport(smd_transport_status_t st) {
  switch (st) {
    case SMD_TRANSPORT_OK: return SMD_SUCCESS;
    case SMD_TRANSPORT_IN_PROGRESS: return SMD_IN_PROGRESS;
    case SMD_TRANSPORT_ERR_INVALID: return SMD_ERR_INTERNAL;
    case SMD_TRANSPORT_ERR_NO_MEMORY: return SMD_ERR_NO_MEMORY;
    case SMD_TRANSPORT_ERR_PEER: return SMD_ERR_PEER_FAILURE;
    case SMD_TRANSPORT_ERR_TRUNCATED: return SMD_ERR_TRUNCATED;
    case SMD_TRANSPORT_ERR_UNSUPPORTED: return SMD_ERR_NOT_SUPPORTED;
    case SMD_TRANSPORT_ERR_CANCELED: return SMD_ERR_ABORTED;
    default: return SMD_ERR_TRANSPORT;
  }
}

Transport::Transport(std::shared_ptr<LoadedPlugin> plugin, const TransportPlacement &where)
    : plugin_(std::move(plugin)), table_(plugin_->table) {
  serialise_ = !(table_->caps & SMD_TRANSPORT_CAP_THREAD_SAFE);
  host_ = std::make_unique<PluginHost>(plugin_->name, where);
  tls_plugin_error.clear();
  smd_transport_status_t st;
  {
    SignalGuard signals("transport " + plugin_->name);
    st = table_->init(host_->host(), &ctx_);
  }
  if (st != SMD_TRANSPORT_OK) {
    std::string why = tls_plugin_error.empty() ? smd_transport_status_string(st) : tls_plugin_error;
    fail(SMD_ERR_PLUGIN, "transport %s (%s) failed to initialise: %s", name().c_str(),
         path().c_str(), why.c_str());
  }
  caps_ = table_->caps;
  if (SMD_TRANSPORT_HAS(table_, smd_transport_v1_t, context_caps) && table_->context_caps)
    caps_ |= table_->context_caps(ctx_) & kContextCaps;
  reports_unmaps_ = has(SMD_TRANSPORT_CAP_REPORTS_UNMAPS);
  if (reports_unmaps_) unmap_coverage_begin();
  if (has(SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED)) start_registrations();
}

Transport::~Transport() {
  if (registrations_) registrations_->clear();
  if (reports_unmaps_) unmap_coverage_end();
  if (ctx_) {
    tls_plugin_error.clear();
    smd_transport_status_t st = table_->finalize(ctx_);
    if (st != SMD_TRANSPORT_OK)
      SMD_WARN("transport", "%s finalize failed: %s", name().c_str(), tls_plugin_error.c_str());
  }
}

void Transport::start_registrations() {
  // Called with the plugin's lock held (from isend, irecv, iget) where the
  // plugin is not thread-safe.
  auto reg = [this](void *base, size_t len) {
    void *mr = nullptr;
    tls_plugin_error.clear();
    smd_transport_status_t st = table_->mem_register(ctx_, base, len, 0, &mr);
    if (st != SMD_TRANSPORT_OK) raise(st, "mem_register", -1);
    if (!mr) fail(SMD_ERR_TRANSPORT, "%s mem_register returned no registration", name().c_str());
    return mr;
  };
  auto dereg = [this](void *mr) {
    tls_plugin_error.clear();
    if (table_->mem_deregister(ctx_, mr) != SMD_TRANSPORT_OK)
      SMD_WARN("transport", "%s mem_deregister: %s", name().c_str(), tls_plugin_error.c_str());
  };
  int64_t keep = param_int("SMD_REG_CACHE");
  registrations_ = std::make_unique<RegistrationCache>(reg, dereg, keep > 0 ? size_t(keep) : 0);
  SMD_INFO("transport", "%s needs registered memory: buffers go through the registration cache",
           name().c_str());
}

RegistrationCache::Region *Transport::registration_for(const void *buf, size_t size) {
  if (!registrations_ || size == 0) return nullptr;
  return registrations_->acquire(buf, size);
}

void Transport::keep(void *request, RegistrationCache::Region *r) {
  if (!r) return;
  if (!request) {  // finished at once
    registrations_->release(r);
    return;
  }
  std::lock_guard<std::mutex> l(in_flight_mu_);
  in_flight_[request] = r;
}

void Transport::done(void *request) {
  if (!registrations_) return;
  RegistrationCache::Region *r = nullptr;
  {
    std::lock_guard<std::mutex> l(in_flight_mu_);
    auto it = in_flight_.find(request);
    if (it == in_flight_.end()) return;
    r = it->second;
    in_flight_.erase(it);
  }
  registrations_->release(r);
}

std::unique_lock<std::mutex> Transport::lock() {
  return serialise_ ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>();
}

void Transport::raise(smd_transport_status_t st, const char *what, int peer) {
  std::string why = tls_plugin_error.empty() ? smd_transport_status_string(st) : tls_plugin_error;
  if (peer >= 0)
    fail(result_from_transport(st), "%s %s with rank %d failed: %s", name().c_str(), what, peer,
         why.c_str());
  fail(result_from_transport(st), "%s %s failed: %s", name().c_str(), what, why.c_str());
}

bool Transport::has_wait() const {
  return SMD_TRANSPORT_HAS(table_, smd_transport_v1_t, wait) && table_->wait;
}

bool Transport::has_check_peer() const {
  return SMD_TRANSPORT_HAS(table_, smd_transport_v1_t, check_peer) && table_->check_peer;
}

template <class Call>
Bytes Transport::fill_blob(const char *what, size_t cap, Call call) {
  Bytes buf(256);
  for (int attempt = 0; attempt < 2; ++attempt) {
    size_t size = buf.size();
    tls_plugin_error.clear();
    smd_transport_status_t st = call(buf.data(), &size);
    if (st == SMD_TRANSPORT_OK) {
      buf.resize(size);
      return buf;
    }
    if (st == SMD_TRANSPORT_ERR_INVALID && size > buf.size() && size < cap) {
      buf.resize(size);
      continue;
    }
    raise(st, what, -1);
  }
  fail(SMD_ERR_TRANSPORT, "%s %s keeps asking for a larger buffer", name().c_str(), what);
}

Bytes Transport::address() {
  auto l = lock();
  return fill_blob("get_address", 64u << 20, [&](uint8_t *buf, size_t *size) {
    return table_->get_address(ctx_, buf, size);
  });
}

void *Transport::connect(int peer, const Bytes &address) {
  auto l = lock();
  void *ep = nullptr;
  tls_plugin_error.clear();
  smd_transport_status_t st;
  {
    SignalGuard signals("transport " + name());  // the first endpoint starts some libraries
    st = table_->connect(ctx_, peer, address.data(), address.size(), &ep);
  }
  if (st != SMD_TRANSPORT_OK) raise(st, "connect", peer);
  return ep;
}

template <class Call>
void Transport::release(const char *what, LogLevel level, Call call) {
  auto l = lock();
  tls_plugin_error.clear();
  if (call() != SMD_TRANSPORT_OK)
    SMD_LOG(level, "transport", "%s %s: %s", name().c_str(), what, tls_plugin_error.c_str());
}

void Transport::disconnect(void *endpoint) {
  release("disconnect", LogLevel::kTrace, [&] { return table_->disconnect(ctx_, endpoint); });
}

template <class Call>
void *Transport::start(const void *buf, size_t size, const char *what, int peer, Call call) {
  auto l = lock();
  void *req = nullptr;
  tls_plugin_error.clear();
  RegistrationCache::Region *r = registration_for(buf, size);
  smd_transport_status_t st = call(r ? r->mr : nullptr, &req);
  if (st != SMD_TRANSPORT_OK) {
    keep(nullptr, r);
    raise(st, what, peer);
  }
  keep(req, r);
  return req;
}

void *Transport::isend(void *ep, const void *buf, size_t size, uint64_t tag, int peer) {
  return start(buf, size, "send", peer, [&](void *mr, void **req) {
    return table_->isend(ctx_, ep, buf, size, mr, tag, req);
  });
}

void *Transport::irecv(void *ep, void *buf, size_t size, uint64_t tag, int peer) {
  return start(buf, size, "receive", peer, [&](void *mr, void **req) {
    return table_->irecv(ctx_, ep, buf, size, mr, tag, req);
  });
}

bool Transport::test(void *request, size_t *size, int peer) {
  auto l = lock();
  int finished = 0;
  tls_plugin_error.clear();
  smd_transport_status_t st = table_->test(ctx_, request, &finished, size);
  if (!finished) {
    if (st == SMD_TRANSPORT_OK || st == SMD_TRANSPORT_IN_PROGRESS) return false;
    done(request);  // the caller drops the request with the error
    raise(st, "progress", peer);
  }
  done(request);
  if (st != SMD_TRANSPORT_OK) raise(st, "transfer", peer);
  return true;
}

void Transport::cancel(void *request) {
  auto l = lock();
  tls_plugin_error.clear();
  table_->cancel(ctx_, request);
  done(request);
}

void Transport::progress() {
  auto l = lock();
  tls_plugin_error.clear();
  smd_transport_status_t st = table_->progress(ctx_);
  if (st != SMD_TRANSPORT_OK && st != SMD_TRANSPORT_IN_PROGRESS) raise(st, "progress", -1);
}

bool Transport::wait(int64_t timeout_us) {
  if (!has_wait()) return false;
  // Sleep only when no other thread is using the plugin: a thread blocked
  // on the lock for a whole wait would add that wait to its latency.
  std::unique_lock<std::mutex> l;
  if (serialise_) {
    l = std::unique_lock<std::mutex>(mu_, std::try_to_lock);
    if (!l.owns_lock()) return false;
  }
  table_->wait(ctx_, timeout_us);
  return true;
}

bool Transport::peer_alive(void *ep) {
  if (!has_check_peer()) return true;
  auto l = lock();
  return table_->check_peer(ctx_, ep) != SMD_TRANSPORT_ERR_PEER;
}

void *Transport::iget(void *ep, void *local, uint64_t remote, size_t size, int peer) {
  return start(local, size, "read", peer, [&](void *mr, void **req) {
    return table_->iget(ctx_, ep, local, mr, remote, nullptr, 0, size, req);
  });
}

void *Transport::segment_create(size_t size, void **ptr, Bytes *handle) {
  auto l = lock();
  void *seg = nullptr;
  *handle = fill_blob("segment_create", 1u << 20, [&](uint8_t *buf, size_t *hs) {
    return table_->segment_create(ctx_, size, ptr, &seg, buf, hs);
  });
  return seg;
}

void *Transport::segment_attach(void *ep, const Bytes &handle, void **ptr, size_t *size) {
  auto l = lock();
  void *seg = nullptr;
  tls_plugin_error.clear();
  smd_transport_status_t st =
      table_->segment_attach(ctx_, ep, handle.data(), handle.size(), ptr, size, &seg);
  if (st != SMD_TRANSPORT_OK) raise(st, "segment_attach", -1);
  return seg;
}

void Transport::segment_release(void *segment) {
  release("segment_release", LogLevel::kWarn,
          [&] { return table_->segment_release(ctx_, segment); });
}

}  // namespace smd
