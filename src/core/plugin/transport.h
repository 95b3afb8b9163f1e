// One initialised plugin context inside a world: the core's only way to
// call a plugin. It serialises calls for plugins that are not thread-safe,
// turns plugin statuses into smd::Error with the plugin's own explanation,
// provides the host services (log, errors, parameters, unmap reports), and
// registers buffers through the registration cache for plugins that need
// registered memory (SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED).
#pragma once

#include <smd.h>
#include <smd_transport.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/plugin/plugin_loader.h"
#include "core/plugin/registration_cache.h"
#include "core/util/bytes.h"
#include "core/util/log.h"

namespace smd {

struct TransportPlacement {
  int rank = 0, world_size = 1, local_rank = 0, local_size = 1;
  int node_index = 0, node_count = 1;
  int64_t timeout_ms = 300000;
};

// A request in flight in a plugin. handle == nullptr means "finished at
// start" (plugins may complete an iget synchronously).
struct TransportRequest {
  void *handle = nullptr;
};

// The host services a plugin gets (smd_transport_host_t's callbacks and
// the storage behind them), for init and for probe.
class PluginHost;

// A plugin's answer to probe(): its priority for SMD_TRANSPORT=auto
// (SMD_TRANSPORT_DEFAULT_PRIORITY without a probe entry) and why.
struct ProbeResult {
  int priority = 0;
  std::string why;
};
ProbeResult probe_plugin(const LoadedPlugin &plugin, const TransportPlacement &where);

class Transport {
 public:
  // Calls the plugin's init; throws SMD_ERR_PLUGIN with its message.
  Transport(std::shared_ptr<LoadedPlugin> plugin, const TransportPlacement &where);
  ~Transport();
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;

  const std::string &name() const { return plugin_->name; }
  const std::string &path() const { return plugin_->path; }
  // The table's caps and what context_caps() added.
  uint64_t caps() const { return caps_; }
  bool has(uint64_t cap) const { return (caps_ & cap) == cap; }
  // The registration cache, or nullptr when the plugin needs none.
  const RegistrationCache *registrations() const { return registrations_.get(); }
  bool has_wait() const;
  bool has_check_peer() const;

  Bytes address();
  void *connect(int peer, const Bytes &address);
  void disconnect(void *endpoint);

  void *isend(void *ep, const void *buf, size_t size, uint64_t tag, int peer);
  void *irecv(void *ep, void *buf, size_t size, uint64_t tag, int peer);
  // True when finished (then *size = bytes moved); throws on failure.
  bool test(void *request, size_t *size, int peer);
  void cancel(void *request);
  void progress();
  // Blocks up to timeout_us if the plugin can; false if it cannot.
  bool wait(int64_t timeout_us);
  // False if the plugin knows the peer died.
  bool peer_alive(void *ep);

  // RMA read; returns nullptr if it completed at once.
  void *iget(void *ep, void *local, uint64_t remote, size_t size, int peer);

  // Shared segments (SMD_TRANSPORT_CAP_SEGMENTS).
  void *segment_create(size_t size, void **ptr, Bytes *handle);
  void *segment_attach(void *ep, const Bytes &handle, void **ptr, size_t *size);
  void segment_release(void *segment);

 private:
  [[noreturn]] void raise(smd_transport_status_t st, const char *what, int peer);
  std::unique_lock<std::mutex> lock();
  // A blob of the plugin's making whose size only the plugin knows
  // (get_address, segment_create): call(buf, &size) fills buf; a plugin that
  // needs more answers ERR_INVALID with the size it needs and is called once
  // more with that much (below `cap`). Throws what failed.
  template <class Call>
  Bytes fill_blob(const char *what, size_t cap, Call call);
  void start_registrations();
  // The registration for a buffer about to be handed to the plugin
  // (nullptr when none is needed); keep() ties it to the request that
  // uses it, done() lets it go when the request finishes.
  RegistrationCache::Region *registration_for(const void *buf, size_t size);
  // Starts a transfer of buf: call(mr, &request) with the registration's
  // handle (or NULL) under the plugin's lock; throws what failed.
  template <class Call>
  void *start(const void *buf, size_t size, const char *what, int peer, Call call);
  // A release whose failure is only logged at `level`: the handle is gone
  // either way.
  template <class Call>
  void release(const char *what, LogLevel level, Call call);
  void keep(void *request, RegistrationCache::Region *r);
  void done(void *request);

  std::shared_ptr<LoadedPlugin> plugin_;
  const smd_transport_v1_t *table_;
  std::unique_ptr<PluginHost> host_;
  void *ctx_ = nullptr;
  uint64_t caps_ = 0;
  bool serialise_;
  bool reports_unmaps_ = false;
  std::mutex mu_;
  std::unique_ptr<RegistrationCache> registrations_;
  std::mutex in_flight_mu_;
  std::unordered_map<void *, RegistrationCache::Region *> in_flight_;
};

// smd_result_t for a plugin status.
smd_result_t result_from_transport(smd_transport_status_t st);

}  // namespace smd
