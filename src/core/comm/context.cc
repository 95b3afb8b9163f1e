#include "core/comm/context.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/bootstrap/injected_store.h"
#include "core/bootstrap/launcher_env.h"
#include "core/bootstrap/tcp_rendezvous.h"
#include "core/comm/record_cache.h"
#include "core/comm/tags.h"
#include "core/plugin/network_order.h"
#include "core/plugin/plugin_survey.h"
#include "core/util/byte_codec.h"
#include "core/util/env_check.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

namespace {

// Read a field of a caller's option struct only if the struct is big
// enough to hold it (callers built against an older header pass less).
template <class T, class F>
bool has_field(const T *opts, F T::*field) {
  size_t end = reinterpret_cast<size_t>(&(static_cast<const T *>(nullptr)->*field)) + sizeof(F);
  return opts->struct_size >= end;
}

std::string join_ranks(const std::vector<int> &v, size_t limit = 16) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < limit; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > limit) s += format(" and %zu more", v.size() - limit);
  return s;
}

}  // namespace

WorldConfig resolve_world_config(const smd_init_options_t *o) {
  WorldConfig c;
  if (o) {
    if (o->struct_size < offsetof(smd_init_options_t, version) + sizeof(o->version))
      fail(SMD_ERR_INVALID_ARGUMENT,
           "smd_init_options_t.struct_size is %zu: fill the struct with SMD_INIT_OPTIONS_INIT "
           "or smd_init_options_init()",
           o->struct_size);
    if (o->version < 1 || o->version > SMD_INIT_OPTIONS_VERSION)
      fail(SMD_ERR_INVALID_ARGUMENT,
           "smd_init_options_t.version %u is not supported (this smd knows 1..%d)", o->version,
           SMD_INIT_OPTIONS_VERSION);
  }
  LaunchEnv env = detect_launch_env();
  c.launcher = env.launcher;
  c.launcher_why = env.why;
  c.rank = env.rank >= 0 ? env.rank : 0;
  c.size = env.world_size >= 1 ? env.world_size : 1;
  c.store_addr = env.master_addr;  // "" = rank 0's note says
  c.store_port = env.master_port > 0 ? env.master_port : default_store_port(env);
  c.job_token = env.job_token;
  c.job_token_secret = env.job_token_secret;
  c.timeout_ms = param_seconds_ms("SMD_TIMEOUT");
  c.transport = param_string("SMD_TRANSPORT");

  if (o) {
    int32_t rank = has_field(o, &smd_init_options_t::rank) ? o->rank : -1;
    int32_t size = has_field(o, &smd_init_options_t::world_size) ? o->world_size : -1;
    if ((rank >= 0) != (size >= 1) && !(rank < 0 && size < 0))
      fail(SMD_ERR_INVALID_ARGUMENT,
           "smd_init_options_t: give both rank and world_size, or neither (rank=%d, world_size=%d)",
           rank, size);
    if (size >= 1) {
      if (rank < -1 || rank >= size)
        fail(SMD_ERR_INVALID_ARGUMENT, "smd_init_options_t: rank %d is not in [0, %d)", rank, size);
      c.rank = rank;
      c.size = size;
      c.launcher = "explicit";
      c.launcher_why = "rank and world_size given to smd_comm_init";
    } else if (size == 0 || size < -1 || rank < -1) {
      fail(SMD_ERR_INVALID_ARGUMENT, "smd_init_options_t: world_size %d / rank %d are invalid",
           size, rank);
    }
    if (has_field(o, &smd_init_options_t::store_addr) && o->store_addr) {
      if (!*o->store_addr) fail(SMD_ERR_INVALID_ARGUMENT, "smd_init_options_t.store_addr is empty");
      c.store_addr = o->store_addr;
    }
    if (has_field(o, &smd_init_options_t::store_port) && o->store_port != -1) {
      if (o->store_port < 1 || o->store_port > 65535)
        fail(SMD_ERR_INVALID_ARGUMENT, "smd_init_options_t.store_port %d is not a TCP port",
             o->store_port);
      c.store_port = o->store_port;
    }
    if (has_field(o, &smd_init_options_t::job_token) && o->job_token) {
      c.job_token = o->job_token;
      c.job_token_secret = true;
    }
    if (has_field(o, &smd_init_options_t::timeout_ms) && o->timeout_ms > 0)
      c.timeout_ms = o->timeout_ms;
    if (has_field(o, &smd_init_options_t::transport) && o->transport) c.transport = o->transport;
    if (has_field(o, &smd_init_options_t::store) && o->store)
      c.injected_store = std::make_shared<InjectedStore>(o->store);
    if (has_field(o, &smd_init_options_t::store_prefix) && o->store_prefix)
      c.store_prefix = o->store_prefix;
  }
  if (c.timeout_ms <= 0) c.timeout_ms = 300000;
  if (c.size > kMaxCommRanks)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "a world of %d ranks is larger than smd supports (%d: collective tags have room for "
         "steps up to twice that; docs/SCALE.md, Limits)",
         c.size, kMaxCommRanks);
  return c;
}

std::shared_ptr<Context> Context::create(const WorldConfig &config) {
  std::shared_ptr<Context> ctx(new Context());
  ctx->rank_ = config.rank;
  ctx->size_ = config.size;
  ctx->timeout_ms_ = config.timeout_ms;
  ctx->algo_spec_ = param_string("SMD_ALGO");
  ctx->tracer_ = Tracer::for_world(config.rank, &ctx->trace_world_);
  log_set_rank(config.rank);
  // One rank speaks for the job: launchers give every rank the same variables.
  if (config.rank == 0) warn_about_environment_once(plugin_param_names);
  SMD_INFO("init", "forming a world of %d ranks as rank %d: launcher %s (%s)", config.size,
           config.rank, config.launcher.c_str(), config.launcher_why.c_str());
  ctx->rendezvous(config);
  // Ranks that share this machine's CPUs, also those of other (fake) nodes.
  int machine = ctx->topology_->machine_of[static_cast<size_t>(ctx->rank_)];
  ctx->wait_policy_ =
      WaitPolicy::choose(ctx->topology_->machine_size[static_cast<size_t>(machine)],
                         ctx->topology_->machine_cpus[static_cast<size_t>(machine)]);
  ctx->open_transports(config.transport);
  return ctx;
}

Context::~Context() {
  // Endpoints and transports go before the store: a plugin's finalize may
  // still want to log, never to rendezvous.
  for (size_t r = 0; r < endpoints_.size(); ++r)
    if (endpoints_[r]) transport_to(static_cast<int>(r))->disconnect(endpoints_[r]);
  endpoints_.clear();
  transport_list_.clear();
  transports_.clear();
  // A shared TCP store says goodbye when its last world goes.
  if (store_ && !tcp_) {
    try {
      store_->goodbye();
    } catch (const Error &e) {
      SMD_TRACE("store", "goodbye: %s", e.what());
    }
  }
  store_.reset();
  base_store_.reset();
  tcp_.reset();
  store_owner_.reset();
}

void Context::rendezvous(const WorldConfig &config) {
  RankRecord me = local_rank_record(rank_);
  if (size_ == 1 && !config.injected_store) {
    topology_ = std::make_shared<const Topology>(Topology::compute({me}));
    return;
  }
  if (config.injected_store) {
    store_ = config.injected_store;
    SMD_INFO("store", "using the injected store");
  } else {
    TcpRendezvousConfig t;
    t.addr = config.store_addr;
    t.port = config.store_port;
    t.token = config.job_token_secret ? config.job_token : "";
    t.job_id = config.job_token;
    t.rank = rank_;
    t.size = size_;
    t.timeout_ms = timeout_ms_;
    tcp_ = join_tcp_rendezvous(t);
    store_ = tcp_->store();
  }
  if (!config.store_prefix.empty())
    store_ = std::make_shared<PrefixStore>(store_, config.store_prefix);
  base_store_ = config.base_store ? config.base_store : store_;
  store_owner_ = config.store_owner;
  store_id_ = config.store_id >= 0 ? config.store_id : rank_;
  // Every world over one store has keys of its own: worlds of one process
  // that share a store, and a world formed again over a store that still
  // holds the records of the last one (an injected store outlives worlds).
  // The store counts the ranks that came: every rank of the n-th world
  // formed over it gets n, whatever other worlds each process formed.
  long long joined = store_->add("smd/ranks-joined", 1);
  store_ = std::make_shared<PrefixStore>(store_, format("w%lld/", (joined - 1) / size_ + 1));

  topology_ = Topology::shared(store_allgather("ranks", encode_rank_record(me)));
  SMD_INFO("init", "world of %d ranks on %d node(s); this node has %zu rank(s)", size_,
           topology_->node_count, topology_->node_members[topology_->node_of[rank_]].size());
}

std::vector<Bytes> Context::store_allgather(const std::string &name, const Bytes &mine) {
  Deadline deadline = Deadline::after_ms(timeout_ms_);
  std::string key_base = "smd/" + name + "/";
  store_->set(key_base + std::to_string(rank_), mine);
  auto missing_ranks = [&]() -> std::string {
    std::vector<std::string> keys;
    for (int r = 0; r < size_; ++r) keys.push_back(key_base + std::to_string(r));
    auto present = store_->check(keys);
    if (!present) return "";
    std::vector<int> missing;
    for (int r = 0; r < size_; ++r)
      if (!(*present)[r]) missing.push_back(r);
    if (missing.empty()) return "";
    return format("; ranks that never joined: %s", join_ranks(missing).c_str());
  };
  std::vector<Bytes> all(size_);
  try {
    if (rank_ == 0) {
      // Rank 0 gathers and republishes, so each rank reads one key.
      Bytes joined;
      ByteWriter w(joined);
      for (int r = 0; r < size_; ++r) {
        all[r] = r == 0 ? mine : store_->get(key_base + std::to_string(r), deadline);
        w.blob(all[r]);
      }
      store_->set(key_base + "all", joined);
      return all;
    }
    Bytes joined = store_->get(key_base + "all", deadline);
    ByteReader rd(joined, "rendezvous record");
    for (int r = 0; r < size_; ++r) all[r] = rd.bytes("a rank's part");
    return all;
  } catch (const Error &e) {
    if (e.code() != SMD_ERR_TIMEOUT) throw;
    std::string missing;
    try {
      missing = missing_ranks();
    } catch (const Error &) {
    }
    fail(SMD_ERR_TIMEOUT, "rendezvous '%s' at %s timed out after %.1f s%s", name.c_str(),
         store_->describe().c_str(), timeout_ms_ / 1000.0,
         missing.empty() ? (rank_ == 0 ? "" : " (rank 0 never published the world)")
                         : missing.c_str());
  }
}

void Context::open_transports(const std::string &choice) {
  int my_node = topology_->node_of[rank_];
  int local_size = static_cast<int>(topology_->node_members[my_node].size());
  bool need_local = local_size > 1;
  bool need_remote = topology_->node_count > 1;
  endpoints_.assign(size_, nullptr);
  if (!need_local && !need_remote) return;

  TransportPlacement where;
  where.rank = rank_;
  where.world_size = size_;
  where.local_rank = topology_->local_rank_of[rank_];
  where.local_size = local_size;
  where.node_index = my_node;
  where.node_count = topology_->node_count;
  where.timeout_ms = timeout_ms_;

  auto start = [&](std::shared_ptr<LoadedPlugin> plugin) -> Transport * {
    transports_.push_back(std::make_unique<Transport>(std::move(plugin), where));
    transport_list_.push_back(transports_.back().get());
    return transports_.back().get();
  };
  auto open = [&](const std::string &name) { return start(load_plugin(name)); };

  if (choice == "auto" || choice.empty()) {
    if (need_local) {
      local_transport_ = open("shm");
      SMD_INFO("init", "transport within the node: shm (auto: shared memory between local ranks)");
    }
    if (need_remote) {
      NetworkOrder order = network_plugin_order(where, {"shm"});
      std::string tried = order.rejected;
      for (auto &c : order.candidates) {
        const std::string &n = c.name;
        try {
          remote_transport_ = start(c.plugin);
          SMD_INFO("init", "transport between nodes: %s (auto: first usable by priority of %s)",
                   n.c_str(), order.summary.c_str());
          break;
        } catch (const Error &e) {
          tried += "\n  " + e.message();
          SMD_INFO("init", "auto transport: %s unusable, trying the next: %s", n.c_str(), e.what());
        }
      }
      if (!remote_transport_)
        fail(SMD_ERR_PLUGIN,
             "the world spans %d nodes but no network transport plugin is usable:%s",
             topology_->node_count,
             tried.empty() ? " none was found (build with ucx or efa)" : tried.c_str());
    }
  } else if (size_t plus = choice.find('+'); plus != std::string::npos) {
    // "shm+tcp": one plugin inside the node, another between nodes.
    std::string local = choice.substr(0, plus), remote = choice.substr(plus + 1);
    if (local.empty() || remote.empty() || remote.find('+') != std::string::npos)
      fail(SMD_ERR_INVALID_ARGUMENT, "SMD_TRANSPORT=%s: expected LOCAL+NETWORK, like shm+tcp",
           choice.c_str());
    if (need_local) local_transport_ = open(local);
    if (need_remote) {
      remote_transport_ = open(remote);
      if (remote_transport_->has(SMD_TRANSPORT_CAP_INTRA_NODE_ONLY))
        fail(SMD_ERR_INVALID_ARGUMENT, "SMD_TRANSPORT=%s: %s reaches only ranks of one node",
             choice.c_str(), remote.c_str());
    }
    SMD_INFO("init", "transport: %s within the node, %s between nodes (SMD_TRANSPORT)",
             local.c_str(), remote.c_str());
  } else {
    Transport *t = open(choice);
    if (need_remote && t->has(SMD_TRANSPORT_CAP_INTRA_NODE_ONLY))
      fail(SMD_ERR_INVALID_ARGUMENT,
           "SMD_TRANSPORT=%s reaches only ranks of one node, but the world spans %d nodes",
           choice.c_str(), topology_->node_count);
    local_transport_ = need_local ? t : nullptr;
    remote_transport_ = need_remote ? t : nullptr;
    SMD_INFO("init", "transport: %s (SMD_TRANSPORT)", choice.c_str());
  }

  // Exchange every transport's address in one rendezvous round.
  Bytes mine;
  ByteWriter w(mine);
  for (Transport *t : transport_list_) {
    std::string n = t->name();
    w.u8(static_cast<uint8_t>(n.size())).raw(n.data(), n.size());
    w.blob(t->address());
  }
  std::vector<Bytes> all = store_allgather("addresses", mine);
  addresses_ = shared_from_records<std::vector<Bytes>>(all, [&] { return std::move(all); });
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    Transport *t = transport_to(r);
    const uint8_t *address = nullptr;
    size_t len = 0;
    if (!find_address(r, t, &address, &len))
      fail(SMD_ERR_TRANSPORT, "rank %d (%s) has no %s transport address: it chose other transports",
           r, topology_->ranks[r].host.c_str(), t->name().c_str());
  }
}

bool Context::find_address(int r, const Transport *t, const uint8_t **address, size_t *size) const {
  ByteReader rd((*addresses_)[static_cast<size_t>(r)], "transport address list");
  while (!rd.done()) {
    std::string_view name = rd.raw_view(rd.u8("transport name length"), "transport name");
    std::string_view a = rd.bytes_view("transport address");
    if (name == t->name()) {
      *address = reinterpret_cast<const uint8_t *>(a.data());
      *size = a.size();
      return true;
    }
  }
  return false;
}

Transport *Context::transport_to(int peer) {
  if (peer < 0 || peer >= size_ || peer == rank_)
    fail(SMD_ERR_INTERNAL, "no transport to rank %d", peer);
  bool same_node = topology_->node_of[peer] == topology_->node_of[rank_];
  Transport *t = same_node ? local_transport_ : remote_transport_;
  if (!t) fail(SMD_ERR_INTERNAL, "no transport to rank %d", peer);
  return t;
}

void *Context::endpoint(int peer) {
  void *&slot = endpoints_[peer];
  if (void *ep = __atomic_load_n(&slot, __ATOMIC_ACQUIRE)) return ep;
  std::lock_guard<std::mutex> lock(connect_mu_);
  if (!slot) {
    Transport *t = transport_to(peer);
    const uint8_t *address = nullptr;
    size_t len = 0;
    if (!find_address(peer, t, &address, &len))
      fail(SMD_ERR_INTERNAL, "no %s address for rank %d", t->name().c_str(), peer);
    void *ep = t->connect(peer, Bytes(address, address + len));
    SMD_TRACE("transport", "connected to rank %d over %s", peer, t->name().c_str());
    __atomic_store_n(&slot, ep, __ATOMIC_RELEASE);
  }
  return slot;
}

uint32_t Context::propose_comm_id() {
  std::lock_guard<std::mutex> lock(id_mu_);
  return next_comm_id_;
}

void Context::accept_comm_id(uint32_t id) {
  std::lock_guard<std::mutex> lock(id_mu_);
  if (id + kCommIdBlock > next_comm_id_) next_comm_id_ = id + kCommIdBlock;
}

std::string Context::describe_rank(int r) const {
  if (r < 0 || r >= static_cast<int>(topology_->ranks.size())) return format("rank %d", r);
  const RankRecord &rec = topology_->ranks[r];
  return format("rank %d (pid %d on %s)", r, rec.pid, rec.host.c_str());
}

void Context::check_health(const std::vector<int> &world_ranks, const std::string &abort_key,
                           const char *what) {
  // Cheap, local: the transports' own view of their peers. Every dead peer
  // is named: when one is killed, the survivors that notice first leave
  // with an error, and a slower survivor may find those gone too; the
  // first failure is among the names.
  std::string dead;
  int ndead = 0;
  for (int r : world_ranks) {
    if (r == rank_) continue;
    void *ep = __atomic_load_n(&endpoints_[r], __ATOMIC_ACQUIRE);
    Transport *t = ep ? transport_to(r) : nullptr;
    if (ep && !t->peer_alive(ep)) {
      dead += format("%s%s (%s transport)", ndead ? ", " : "", describe_rank(r).c_str(),
                     t->name().c_str());
      ++ndead;
    }
  }
  if (ndead) fail(SMD_ERR_PEER_FAILURE, "%s: %s exited or became unreachable", what, dead.c_str());
  if (!store_) return;
  std::unique_lock<std::mutex> lock(health_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  int64_t now = now_ns();
  if (now - last_store_check_ns_ < 500 * 1000000LL) return;
  last_store_check_ns_ = now;
  std::vector<int> failed;
  std::string announced;
  try {
    failed = store_->failed_ranks();
    int64_t ended = abort_key.empty() ? 0 : store_->add(abort_key, 0);
    if (ended >= kRevokeMark) fail(SMD_ERR_REVOKED, "%s: a peer revoked the communicator", what);
    if (ended > 0) fail(SMD_ERR_ABORTED, "%s: a peer aborted the communicator", what);
    announced = read_failure(abort_key);
  } catch (const Error &e) {
    if (e.code() == SMD_ERR_ABORTED || e.code() == SMD_ERR_REVOKED) throw;
    if (tcp_ && rank_ != 0)
      fail(SMD_ERR_PEER_FAILURE, "%s: lost the store served by %s (%s)", what,
           describe_rank(0).c_str(), e.what());
    SMD_TRACE("store", "health check: %s", e.what());
    return;
  }
  if (!announced.empty()) {
    // "<code> <message>", from announce_failure.
    int code = atoi(announced.c_str());
    size_t space = announced.find(' ');
    if (code <= 0 || space == std::string::npos) code = SMD_ERR_INTERNAL, space = 0;
    throw Error(static_cast<smd_result_t>(code),
                format("%s: %s", what, announced.c_str() + space + 1));
  }
  for (int r : failed)
    if (std::find(world_ranks.begin(), world_ranks.end(), r) != world_ranks.end())
      fail(SMD_ERR_PEER_FAILURE, "%s: %s died (its store connection closed without a goodbye)",
           what, describe_rank(r).c_str());
}

std::string Context::read_failure(const std::string &abort_key) {
  if (abort_key.empty()) return {};
  std::string key = abort_key + "/failed";
  auto present = store_->check({key});
  if (!present || present->empty() || !(*present)[0]) return {};
  Bytes b = store_->get(key, Deadline::after_ms(timeout_ms_ > 0 ? timeout_ms_ : 1000));
  return std::string(b.begin(), b.end());
}

void Context::announce_revoke(const std::string &abort_key) {
  if (!store_) return;
  try {
    store_->add(abort_key, kRevokeMark);
  } catch (const Error &e) {
    SMD_TRACE("store", "announcing a revoke: %s", e.what());
  }
}

bool Context::revoke_announced(const std::string &abort_key) {
  if (!store_) return false;
  try {
    return store_->add(abort_key, 0) >= kRevokeMark;
  } catch (const Error &e) {
    SMD_TRACE("store", "reading a revoke: %s", e.what());
    return false;
  }
}

bool Context::transport_sees_alive(int peer) {
  if (peer < 0 || peer >= static_cast<int>(endpoints_.size()) || peer == rank_) return true;
  void *ep = __atomic_load_n(&endpoints_[peer], __ATOMIC_ACQUIRE);
  return !ep || transport_to(peer)->peer_alive(ep);
}

void Context::announce_abort(const std::string &abort_key) {
  if (!store_) return;
  try {
    store_->add(abort_key, 1);
  } catch (const Error &e) {
    SMD_TRACE("store", "announcing abort: %s", e.what());
  }
}

}  // namespace smd

namespace smd {

void Context::set_network_link(MeasuredLink link) {
  std::lock_guard<std::mutex> lock(link_mu_);
  network_link_ = link;
}

Context::MeasuredLink Context::network_link() const {
  std::lock_guard<std::mutex> lock(link_mu_);
  return network_link_;
}

Error Context::failure_that_stands(const std::string &abort_key, const Error &mine) {
  if (!store_ || abort_key.empty()) return mine;
  std::string announced;
  try {
    announced = read_failure(abort_key);
  } catch (const Error &e) {
    SMD_TRACE("store", "reading a peer's failure: %s", e.what());
    return mine;
  }
  if (announced.empty() && (mine.code() == SMD_ERR_TRANSPORT || mine.code() == SMD_ERR_INTERNAL)) {
    // Likely a symptom of a peer that left the call at its own failure
    // (a segment it released, a connection it closed) and is about to
    // announce it: a short wait for the cause.
    try {
      Bytes b = store_->get(
          abort_key + "/failed",
          Deadline::after_ms(std::min<int64_t>(timeout_ms_ > 0 ? timeout_ms_ / 4 : 1000, 1000)));
      announced.assign(b.begin(), b.end());
    } catch (const Error &e) {
      SMD_TRACE("store", "no peer's failure came: %s", e.what());
    }
  }
  if (announced.empty()) {
    announce_failure(abort_key, mine.code(), mine.message());
    return mine;
  }
  // "<code> <rank> reported: <message>", from announce_failure.
  int code = atoi(announced.c_str());
  size_t space = announced.find(' ');
  if (code <= 0 || space == std::string::npos) return mine;
  std::string text = announced.substr(space + 1);
  bool own = text.rfind(describe_rank(rank_) + " reported: ", 0) == 0;
  if (own || mine.code() == SMD_ERR_MISMATCH || mine.message().find(text) != std::string::npos)
    return mine;
  return Error(static_cast<smd_result_t>(code), format("%s (here: %s)", text.c_str(), mine.what()));
}

void Context::announce_failure(const std::string &abort_key, smd_result_t code,
                               const std::string &message) {
  if (!store_ || abort_key.empty()) return;
  std::string key = abort_key + "/failed";
  try {
    // Rank records name the sender; the first announcement stands.
    if (!read_failure(abort_key).empty()) return;
    std::string text = format("%d %s reported: %s", static_cast<int>(code),
                              describe_rank(rank_).c_str(), message.c_str());
    store_->set(key, Bytes(text.begin(), text.end()));
  } catch (const Error &e) {
    SMD_TRACE("store", "announcing a failure: %s", e.what());
  }
}

}  // namespace smd
