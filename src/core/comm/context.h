// A world: what every communicator derived from one smd_comm_init() shares
// - the store, the ranks' topology, the transports and the connections to
// every peer. Created by rendezvous; lives until its last communicator is
// destroyed.
#pragma once

#include <smd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/bootstrap/store.h"
#include "core/comm/self_channel.h"
#include "core/comm/topology.h"
#include "core/util/error.h"
#include "core/observe/tracer.h"
#include "core/exec/wait_policy.h"
#include "core/plugin/transport.h"

namespace smd {

// Ids one communicator reserves: its own, then its hierarchy's node and
// rail communicators' (coll/create/hierarchy.cc).
constexpr uint32_t kCommIdBlock = 3;
// What a revoke adds to a communicator's abort counter in the store (an
// abort adds 1): counts at or above it mean revoked.
constexpr int64_t kRevokeMark = int64_t(1) << 32;

class TcpRendezvous;

// Options after merging smd_init_options_t with the environment.
struct WorldConfig {
  int rank = 0;
  int size = 1;
  std::string launcher = "none";
  std::string launcher_why;
  std::string store_addr = "127.0.0.1";
  int store_port = 29500;
  std::string job_token;
  bool job_token_secret = false;  // given by the user, not the launcher's job id
  int64_t timeout_ms = 300000;
  std::string transport = "auto";
  std::shared_ptr<Store> injected_store;
  std::string store_prefix;
  // The id the store knows this process by (its failed_ranks() name it),
  // when not `rank`: a grown world's members keep their first world's.
  int store_id = -1;
  // Set by a grow: the store its joiners met the members in (later grows
  // of this world meet there too; default: the world's store) and what
  // keeps that store alive (the first world's TCP store and server).
  std::shared_ptr<Store> base_store;
  std::shared_ptr<void> store_owner;
};

WorldConfig resolve_world_config(const smd_init_options_t *options);

class Context {
 public:
  // Collective over the world: forms it through the store.
  static std::shared_ptr<Context> create(const WorldConfig &config);
  ~Context();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int64_t timeout_ms() const { return timeout_ms_; }
  const Topology &topology() const { return *topology_; }
  const WaitPolicy &wait_policy() const { return wait_policy_; }
  // SMD_ALGO as read when the world formed (the collective layer parses it).
  const std::string &algo_spec() const { return algo_spec_; }
  Store *store() { return store_.get(); }
  // The store under this world's own key prefix (shared with processes of
  // other worlds over it: joiners of a grow), the object that keeps the
  // TCP store (and, on world rank 0, its server) alive, and the id the
  // store knows this process by. Null / -1 for a world of one without one.
  std::shared_ptr<Store> base_store() const { return base_store_; }
  std::shared_ptr<void> store_owner() const {
    return tcp_ ? std::shared_ptr<void>(tcp_) : store_owner_;
  }
  int store_id() const { return store_id_; }
  // The timeline writer (SMD_TRACE), or null: tracing is off.
  Tracer *tracer() const { return tracer_.get(); }
  // This world's track for communicator `comm` in the trace.
  uint32_t trace_track(uint32_t comm) const { return Tracer::track(trace_world_, comm); }
  SelfChannel &self_channel() { return self_; }

  // The transport that reaches world rank `peer`, and its endpoint
  // (connected on first use).
  Transport *transport_to(int peer);
  void *endpoint(int peer);
  // The transport used between ranks of this node (may be null).
  Transport *local_transport() { return local_transport_; }
  // Every distinct transport in use (for progress and waits).
  const std::vector<Transport *> &transports() const { return transport_list_; }

  // A fresh communicator id agreed by max-of-proposals: propose() gives
  // this rank's proposal, accept() records the agreed one. Each agreed id
  // reserves a block of kCommIdBlock ids: the communicator's own and its
  // hierarchy's node and rail communicators' (id + 1, id + 2), formed
  // later without agreeing again, so communicators forming hierarchies at
  // once (a group's batches run concurrently) cannot pick the same ids.
  uint32_t propose_comm_id();
  void accept_comm_id(uint32_t id);

  // Throws SMD_ERR_PEER_FAILURE if any of the world ranks is known dead,
  // or SMD_ERR_ABORTED if a peer announced an abort under abort_key.
  // Cheap checks every call; store queries at most every half second.
  void check_health(const std::vector<int> &world_ranks, const std::string &abort_key,
                    const char *what);
  // Tell peers that the communicator with this key was aborted.
  void announce_abort(const std::string &abort_key);
  // Tell peers that it was revoked (an abort mark of its own weight, so one
  // store read tells the two apart), and whether a peer did.
  void announce_revoke(const std::string &abort_key);
  bool revoke_announced(const std::string &abort_key);
  // False once a transport lost world rank `peer` (a connected endpoint
  // that reports it gone); true when not connected yet.
  bool transport_sees_alive(int peer);
  // Tell peers that a collective on the communicator with this key failed
  // here: their waits on it end with the same code and this message
  // (check_health reads it) instead of at SMD_TIMEOUT. The first
  // announcement stands.
  void announce_failure(const std::string &abort_key, smd_result_t code,
                        const std::string &message);
  // After a collective on the communicator with this key failed here with
  // `mine`: the failure that stands. When a peer announced one first, this
  // rank's error is likely its symptom (a released segment, a closed
  // connection): the peer's code and message, with this rank's appended,
  // unless `mine` is a mismatch this rank found itself. A transport or
  // internal error waits up to a second for a peer's announcement first.
  // Otherwise `mine`, announced.
  Error failure_that_stands(const std::string &abort_key, const Error &mine);

  std::string describe_rank(int world_rank) const;

  // The link between nodes as measured when this rank's world formed
  // (coll/calibrate/network_probe.h), the same on every rank of it;
  // gbps 0: not measured (a world on one node).
  struct MeasuredLink {
    double alpha_us = 0;
    double gbps = 0;
  };
  void set_network_link(MeasuredLink link);
  MeasuredLink network_link() const;

  // Whether every rank's transports move device memory
  // (SMD_TRANSPORT_CAP_DEVICE_MEMORY), agreed when the world formed
  // (coll/agree/settings_agreement.h); false until then.
  void set_device_memory_everywhere(bool yes) { device_memory_everywhere_ = yes; }
  bool device_memory_everywhere() const { return device_memory_everywhere_; }

 private:
  Context() = default;
  void rendezvous(const WorldConfig &config);
  // The failure announced under abort_key ("<code> <message>"), or "".
  std::string read_failure(const std::string &abort_key);
  void open_transports(const std::string &choice);
  std::vector<Bytes> store_allgather(const std::string &name, const Bytes &mine);

  int rank_ = 0, size_ = 1;
  int64_t timeout_ms_ = 300000;
  std::shared_ptr<TcpRendezvous> tcp_;  // null with an injected store
  std::shared_ptr<Tracer> tracer_;
  uint32_t trace_world_ = 0;
  std::shared_ptr<Store> store_;
  std::shared_ptr<Store> base_store_;
  std::shared_ptr<void> store_owner_;
  int store_id_ = -1;
  std::shared_ptr<const Topology> topology_;  // shared by the process's ranks of this world
  WaitPolicy wait_policy_;
  std::string algo_spec_;
  SelfChannel self_;

  std::vector<std::unique_ptr<Transport>> transports_;
  std::vector<Transport *> transport_list_;
  Transport *local_transport_ = nullptr;
  Transport *remote_transport_ = nullptr;
  // Every rank's transport addresses, as exchanged (shared by the
  // process's ranks of this world), and the endpoint to each world rank,
  // connected on first use: one pointer per rank is all a rank holds per
  // peer.
  std::shared_ptr<const std::vector<Bytes>> addresses_;
  std::vector<void *> endpoints_;
  // The address `t` has in rank r's blob (t's name, then its length).
  bool find_address(int r, const Transport *t, const uint8_t **address, size_t *size) const;
  std::mutex connect_mu_;

  std::mutex id_mu_;
  // 0: setup traffic; 1: the world, 2 and 3 its hierarchy's (kCommIdBlock).
  uint32_t next_comm_id_ = 1 + kCommIdBlock;

  std::mutex health_mu_;
  mutable std::mutex link_mu_;
  MeasuredLink network_link_;
  bool device_memory_everywhere_ = false;
  int64_t last_store_check_ns_ = 0;
};

}  // namespace smd
