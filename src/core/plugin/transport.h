// One initialised plugin context inside a world: the core's only way to
// call a plugin. It serialises calls for plugins that are not thread-safe,
// turns plugin statuses into smd::Error with the plugin's own explanation,
// and provides the host services (log, errors, parameters).
#pragma once

#include <smd.h>
#include <smd_transport.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/bootstrap/store.h"
#include "core/plugin/plugin_loader.h"

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

class Transport {
 public:
  // Calls the plugin's init; throws SMD_ERR_PLUGIN with its message.
  Transport(std::shared_ptr<LoadedPlugin> plugin, const TransportPlacement &where);
  ~Transport();
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;

  const std::string &name() const { return plugin_->name; }
  const std::string &path() const { return plugin_->path; }
  uint64_t caps() const { return table_->caps; }
  bool has(uint64_t cap) const { return (table_->caps & cap) == cap; }
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

  static void host_log(void *host, int level, const char *message);
  static void host_set_error(void *host, const char *message);
  static const char *host_get_param(void *host, const char *name);

  std::shared_ptr<LoadedPlugin> plugin_;
  const smd_transport_v1_t *table_;
  smd_transport_host_t host_{};
  void *ctx_ = nullptr;
  bool serialise_;
  std::mutex mu_;
  std::mutex params_mu_;
  std::map<std::string, std::string> params_;  // keeps get_param strings alive
};

// smd_result_t for a plugin status.
smd_result_t result_from_transport(smd_transport_status_t st);

}  // namespace smd
