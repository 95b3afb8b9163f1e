#include "core/bootstrap/tcp_store_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/bootstrap/store_protocol.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {
namespace {

using wire::Message;
using wire::Op;

constexpr int kListenBacklog = 4096;  // the kernel caps it at somaxconn
constexpr int64_t kMsNs = 1000000;
// A rank sends HELLO right after connecting: a connection silent this
// long is not one (a retrying rank connects again).
constexpr int64_t kHelloTimeoutNs = 5000 * kMsNs;
constexpr int64_t kCapWarningEveryNs = 10000 * kMsNs;
constexpr int64_t kAcceptPauseNs = 100 * kMsNs;
constexpr int64_t kNoDeadline = INT64_MAX;
constexpr size_t kReadChunk = 64 * 1024;

struct Conn {
  uint64_t id = 0;
  int fd = -1;
  std::string peer;  // "10.0.0.7:41234"
  int64_t accepted_ns = 0;
  Bytes in;   // received, not yet processed
  Bytes out;  // replies not yet sent, from out_sent on
  size_t out_sent = 0;
  bool joined = false;  // HELLO accepted; rank is valid
  int rank = -1;
  bool goodbye = false;
  bool closed = false;  // fd closed; the entry is reaped after this turn
  // The GET this connection waits on. A client has one request in flight
  // at a time, and the server reads no further request until it answers.
  bool waiting = false;
  std::string wait_key;
  int64_t wait_deadline_ns = kNoDeadline;

  bool out_pending() const { return out_sent < out.size(); }
  std::string who() const { return joined ? format("rank %d (%s)", rank, peer.c_str()) : peer; }
};

void set_int_option(int fd, int level, int name, int value) {
  // Best effort: a socket without these options still works.
  (void)setsockopt(fd, level, name, &value, sizeof value);
}

std::string address_text(const sockaddr_in &a) {
  char host[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
  return format("%s:%d", host, ntohs(a.sin_port));
}

bool parse_decimal(const Bytes &text, int64_t *out) {
  if (text.empty() || text.size() > 20) return false;
  std::string s(text.begin(), text.end());
  errno = 0;
  char *end = nullptr;
  long long v = strtoll(s.c_str(), &end, 10);
  if (errno || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

// An eighth of the descriptors this process may open, so that strangers
// waiting to present a token never take what the job itself needs.
int unauthenticated_cap_from_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 256;
  return static_cast<int>(std::clamp<rlim_t>(lim.rlim_cur / 8, 4, 256));
}

}  // namespace

struct TcpStoreServer::Impl {
  std::string token;
  int world_size = 0;
  uint32_t epoch = 1;
  int next_joiner = 0;  // joiners' ids are world_size + 0, 1, ...
  int unauthenticated_cap = 256;
  int unauthenticated = 0;  // open connections without an accepted HELLO
  int64_t cap_warned_ns = 0;
  int listen_fd = -1;
  int wake_read = -1;
  int wake_write = -1;
  int port = 0;
  std::atomic<bool> stop{false};
  std::thread thread;

  // Touched only by the serving thread.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  uint64_t next_id = 1;
  std::unordered_map<std::string, Bytes> kv;
  std::unordered_map<std::string, std::vector<uint64_t>> waiters;
  std::deque<uint64_t> ready;  // connections that may have requests to run
  Bytes scratch = Bytes(kReadChunk);
  int64_t accept_paused_until_ns = 0;

  // Shared with the query methods.
  mutable std::mutex mu;
  std::condition_variable changed;
  std::map<int, uint64_t> live;  // rank -> connection, joined and not gone
  std::set<int> failed;

  ~Impl() {
    for (int fd : {listen_fd, wake_read, wake_write})
      if (fd >= 0) close(fd);
  }

  void listen_on(const std::string &host, int want_port);
  void serve();
  void turn();
  void close_all();
  void accept_all();
  void refuse_unauthenticated(int fd, const sockaddr_in &from);
  void read_input(Conn &c);
  void process_input(Conn &c);
  void handle(Conn &c, Message &m);
  void hello(Conn &c, const Message &m);
  void set(Conn &c, Message &m);
  void get(Conn &c, const Message &m);
  void add(Conn &c, const Message &m);
  void goodbye(Conn &c);
  void wake_waiters(const std::string &key);
  void stop_waiting(Conn &c);
  void expire(int64_t now);
  void reply(Conn &c, const Message &m);
  bool flush(Conn &c);
  void reject(Conn &c, const std::string &reason, Op op = Op::kError);
  void close_conn(Conn &c, const char *why);
  Conn *find(uint64_t id) {
    auto it = conns.find(id);
    return it == conns.end() || it->second->closed ? nullptr : it->second.get();
  }
};

void TcpStoreServer::Impl::listen_on(const std::string &host, int want_port) {
  std::string where =
      host.empty() ? format("port %d", want_port) : format("%s:%d", host.c_str(), want_port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(want_port));
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  if (!host.empty()) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo *res = nullptr;
    int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0 || !res)
      fail(SMD_ERR_BOOTSTRAP, "cannot serve the store on %s: cannot resolve '%s': %s",
           where.c_str(), host.c_str(), gai_strerror(rc));
    addr.sin_addr = reinterpret_cast<sockaddr_in *>(res->ai_addr)->sin_addr;
    freeaddrinfo(res);
  }

  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) fail_errno("cannot create the store's listening socket");
  // A restarted job must be able to take the port while old connections
  // linger in TIME_WAIT.
  set_int_option(listen_fd, SOL_SOCKET, SO_REUSEADDR, 1);
  if (bind(listen_fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    int err = errno;
    fail(SMD_ERR_BOOTSTRAP, "cannot serve the store on %s: %s%s", where.c_str(), strerror(err),
         err == EADDRINUSE ? " (another job? set SMD_MASTER_PORT)" : "");
  }
  if (listen(listen_fd, kListenBacklog) != 0)
    fail(SMD_ERR_BOOTSTRAP, "cannot serve the store on %s: listen: %s", where.c_str(),
         strerror(errno));
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (getsockname(listen_fd, reinterpret_cast<sockaddr *>(&bound), &len) != 0)
    fail_errno("getsockname on the store's listening socket");
  port = ntohs(bound.sin_port);
}

void TcpStoreServer::Impl::serve() {
  try {
    while (!stop.load(std::memory_order_acquire)) turn();
  } catch (const std::exception &e) {
    // Clients then see the store as lost, which is what happened.
    SMD_WARN("store", "the store server stopped: %s", e.what());
  }
  close_all();
}

// One round of the loop: wait for sockets or the next deadline, then serve.
void TcpStoreServer::Impl::turn() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  fds.reserve(conns.size() + 2);
  ids.reserve(conns.size());
  int64_t now = now_ns();
  int64_t next = kNoDeadline;
  fds.push_back({wake_read, POLLIN, 0});
  bool accepting = now >= accept_paused_until_ns;
  if (accepting) fds.push_back({listen_fd, POLLIN, 0});
  else next = accept_paused_until_ns;
  size_t first = fds.size();
  for (auto &[id, c] : conns) {
    short events = POLLIN;
    if (c->out_pending()) events |= POLLOUT;
    fds.push_back({c->fd, events, 0});
    ids.push_back(id);
    if (c->waiting) next = std::min(next, c->wait_deadline_ns);
    if (!c->joined) next = std::min(next, c->accepted_ns + kHelloTimeoutNs);
  }
  int timeout_ms = -1;
  if (next != kNoDeadline)
    timeout_ms =
        static_cast<int>(std::clamp<int64_t>((next - now + kMsNs - 1) / kMsNs, 0, INT_MAX));

  if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
    if (errno == EINTR) return;
    fail_errno("poll");
  }
  if (fds[0].revents) {
    char buf[64];
    while (read(wake_read, buf, sizeof buf) > 0) {
    }
  }
  if (accepting && fds[1].revents) accept_all();
  for (size_t i = first; i < fds.size(); ++i) {
    short rev = fds[i].revents;
    Conn *c = rev ? find(ids[i - first]) : nullptr;
    if (!c) continue;
    if ((rev & POLLOUT) && flush(*c) && !c->waiting) ready.push_back(c->id);
    if (!c->closed && (rev & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) read_input(*c);
  }
  expire(now_ns());
  while (!ready.empty()) {
    Conn *c = find(ready.front());
    ready.pop_front();
    if (c) process_input(*c);
  }
  for (auto it = conns.begin(); it != conns.end();)
    it = it->second->closed ? conns.erase(it) : std::next(it);
}

void TcpStoreServer::Impl::close_all() {
  for (auto &[id, c] : conns)
    if (!c->closed) close(c->fd);
  conns.clear();
  std::lock_guard<std::mutex> lock(mu);
  live.clear();
  changed.notify_all();
}

void TcpStoreServer::Impl::accept_all() {
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    int fd =
        accept4(listen_fd, reinterpret_cast<sockaddr *>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        // The pending connection stays in the backlog; accepting again at
        // once would spin.
        SMD_WARN("store",
                 "cannot accept store connections: %s (raise ulimit -n?); "
                 "retrying in 100 ms",
                 strerror(err));
        accept_paused_until_ns = now_ns() + kAcceptPauseNs;
      } else {
        SMD_WARN("store", "accept on the store port: %s", strerror(err));
      }
      return;
    }
    if (unauthenticated >= unauthenticated_cap) {
      refuse_unauthenticated(fd, from);
      continue;
    }
    set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    // Notice ranks whose host died, not only those whose process did.
    set_int_option(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
    set_int_option(fd, IPPROTO_TCP, TCP_KEEPIDLE, 60);
    set_int_option(fd, IPPROTO_TCP, TCP_KEEPINTVL, 10);
    set_int_option(fd, IPPROTO_TCP, TCP_KEEPCNT, 6);
    auto c = std::make_unique<Conn>();
    c->id = next_id++;
    c->fd = fd;
    c->peer = address_text(from);
    c->accepted_ns = now_ns();
    SMD_TRACE("store", "connection from %s", c->peer.c_str());
    conns.emplace(c->id, std::move(c));
    ++unauthenticated;
  }
}

// Over the cap: a rank among the newcomers connects again; a stranger
// holds nothing.
void TcpStoreServer::Impl::refuse_unauthenticated(int fd, const sockaddr_in &from) {
  int64_t now = now_ns();
  if (now - cap_warned_ns >= kCapWarningEveryNs) {
    cap_warned_ns = now;
    SMD_WARN("store",
             "%d connections have not presented the job token yet; refusing "
             "more (the latest from %s) until they do or time out",
             unauthenticated, address_text(from).c_str());
  }
  Message r;
  r.op = Op::kRetry;
  r.reason = "the store is busy with connections that have not presented a token";
  Bytes frame = wire::encode(r);
  (void)!send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  close(fd);
}

void TcpStoreServer::Impl::read_input(Conn &c) {
  // A client sends one request and waits for its reply, so more than one
  // frame's worth of unread input is abuse; before HELLO, one small frame.
  size_t limit =
      (c.joined ? wire::kMaxFrame : wire::kMaxHelloFrame) + wire::kHeaderSize + kReadChunk;
  for (;;) {
    if (c.in.size() >= limit) {
      SMD_WARN("store",
               "closing the connection from %s: it sent %zu bytes "
               "without waiting for replies",
               c.who().c_str(), c.in.size());
      close_conn(c, "flooded the store");
      return;
    }
    ssize_t n = recv(c.fd, scratch.data(), scratch.size(), 0);
    if (n > 0) {
      c.in.insert(c.in.end(), scratch.begin(), scratch.begin() + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // End of stream: run what arrived before it (a GOODBYE, typically).
    process_input(c);
    close_conn(c, n == 0 ? "closed the connection" : strerror(errno));
    return;
  }
  ready.push_back(c.id);
}

void TcpStoreServer::Impl::process_input(Conn &c) {
  size_t used = 0;
  try {
    while (!c.closed && !c.waiting && !c.out_pending()) {
      size_t n = wire::frame_size(c.in.data() + used, c.in.size() - used,
                                  c.joined ? wire::kMaxFrame : wire::kMaxHelloFrame);
      if (n == 0) break;
      Message m = wire::decode(c.in.data() + used, n);
      used += n;
      handle(c, m);
    }
  } catch (const std::exception &e) {
    SMD_WARN("store", "closing the connection from %s: %s", c.who().c_str(), e.what());
    close_conn(c, "sent a malformed message");
    return;
  }
  if (!c.closed) c.in.erase(c.in.begin(), c.in.begin() + used);
}

void TcpStoreServer::Impl::handle(Conn &c, Message &m) {
  if (!c.joined) {
    if (m.op != Op::kHello)
      return reject(c, format("the first message must be HELLO, not %s", wire::op_name(m.op)));
    return hello(c, m);
  }
  if (c.goodbye) return reject(c, format("%s after GOODBYE", wire::op_name(m.op)));
  switch (m.op) {
    case Op::kSet: return set(c, m);
    case Op::kGet: return get(c, m);
    case Op::kAdd: return add(c, m);
    case Op::kCheck: {
      Message r;
      r.op = Op::kFlags;
      for (const auto &k : m.keys) r.flags.push_back(kv.count(k) != 0);
      return reply(c, r);
    }
    case Op::kFailedRanks: {
      Message r;
      r.op = Op::kRanks;
      {
        std::lock_guard<std::mutex> lock(mu);
        r.ranks.assign(failed.begin(), failed.end());
      }
      return reply(c, r);
    }
    case Op::kGoodbye: return goodbye(c);
    case Op::kHello: return reject(c, "HELLO sent twice");
    default: return reject(c, format("%s is a reply, not a request", wire::op_name(m.op)));
  }
}

void TcpStoreServer::Impl::hello(Conn &c, const Message &m) {
  std::string refusal;
  if (m.version != wire::kVersion)
    refusal = format("protocol version %u is not this store's %u (mixed smd versions?)", m.version,
                     wire::kVersion);
  else if (m.token != token) refusal = "job token mismatch (another job owns this port?)";
  else if (m.world_size == wire::kJoinerHello && m.rank == -1)
    ;  // a process joining a grown communicator: it gets an id of its own below
  else if (m.world_size == wire::kJoinerHello && m.rank < world_size)
    refusal =
        format("a joining process claims rank %d, one of the world's first %d", m.rank, world_size);
  else if (m.world_size != world_size && m.world_size != wire::kJoinerHello)
    refusal = format("world size %d is not the store's %d (ranks of different jobs?)", m.world_size,
                     world_size);
  else if (m.rank < 0 || (m.world_size != wire::kJoinerHello && m.rank >= world_size))
    refusal = format("rank %d is outside the world of %d ranks", m.rank, world_size);
  else if (m.world_size != wire::kJoinerHello && m.epoch != epoch) {
    SMD_INFO("store", "rank %d (%s) asks for epoch %u of the store, this is %u: try again", m.rank,
             c.peer.c_str(), m.epoch, epoch);
    return reject(c,
                  format("this store serves epoch %u of the job, the rank asks for %u "
                         "(the previous world is still shutting down?)",
                         epoch, m.epoch),
                  Op::kRetry);
  }
  if (refusal.empty()) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = live.find(m.rank);
    if (it != live.end()) {
      Conn *other = find(it->second);
      refusal = format(
          "rank %d is already connected from %s (two processes "
          "with the same rank?)",
          m.rank, other ? other->peer.c_str() : "?");
    }
  }
  if (!refusal.empty()) {
    SMD_WARN("store", "refused %s claiming rank %d: %s", c.peer.c_str(), m.rank, refusal.c_str());
    return reject(c, refusal);
  }
  c.joined = true;
  --unauthenticated;
  // A joiner's id follows the world's ranks and is never handed out twice,
  // so failed_ranks() names it alone.
  c.rank = m.rank == -1 ? world_size + next_joiner++ : m.rank;
  {
    std::lock_guard<std::mutex> lock(mu);
    live[c.rank] = c.id;
    failed.erase(c.rank);
  }
  changed.notify_all();
  SMD_INFO("store", "rank %d joined from %s", c.rank, c.peer.c_str());
  Message ok;
  ok.op = Op::kOk;
  if (m.world_size == wire::kJoinerHello) {
    ok.op = Op::kRanks;  // the id it was given
    ok.ranks.push_back(c.rank);
  }
  reply(c, ok);
}

void TcpStoreServer::Impl::set(Conn &c, Message &m) {
  kv[m.key] = std::move(m.value);
  Message ok;
  ok.op = Op::kOk;
  reply(c, ok);
  wake_waiters(m.key);
}

void TcpStoreServer::Impl::get(Conn &c, const Message &m) {
  Message r;
  auto it = kv.find(m.key);
  if (it != kv.end()) {
    r.op = Op::kValue;
    r.value = it->second;
    return reply(c, r);
  }
  if (m.number == 0) {
    r.op = Op::kTimeout;
    return reply(c, r);
  }
  c.waiting = true;
  c.wait_key = m.key;
  // Far-off timeouts are as good as none (and would overflow).
  constexpr int64_t kMaxWaitMs = INT64_MAX / kMsNs / 4;
  c.wait_deadline_ns =
      m.number < 0 || m.number > kMaxWaitMs ? kNoDeadline : now_ns() + m.number * kMsNs;
  waiters[m.key].push_back(c.id);
}

void TcpStoreServer::Impl::add(Conn &c, const Message &m) {
  int64_t value = 0;
  Message r;
  auto it = kv.find(m.key);
  if (it != kv.end() && !parse_decimal(it->second, &value)) {
    r.op = Op::kError;
    r.reason = format("the value under '%s' is not an integer", wire::printable(m.key).c_str());
    return reply(c, r);
  }
  if (__builtin_add_overflow(value, m.number, &value)) {
    r.op = Op::kError;
    r.reason = format("adding %lld to '%s' would overflow", static_cast<long long>(m.number),
                      wire::printable(m.key).c_str());
    return reply(c, r);
  }
  // Kept as decimal text, so a get() of a counter reads naturally.
  std::string text = std::to_string(value);
  kv[m.key] = Bytes(text.begin(), text.end());
  r.op = Op::kInteger;
  r.number = value;
  reply(c, r);
  wake_waiters(m.key);
}

void TcpStoreServer::Impl::goodbye(Conn &c) {
  c.goodbye = true;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = live.find(c.rank);
    if (it != live.end() && it->second == c.id) live.erase(it);
  }
  changed.notify_all();
  SMD_INFO("store", "rank %d said goodbye", c.rank);
  Message ok;
  ok.op = Op::kOk;
  reply(c, ok);
}

void TcpStoreServer::Impl::wake_waiters(const std::string &key) {
  auto it = waiters.find(key);
  if (it == waiters.end()) return;
  std::vector<uint64_t> ids = std::move(it->second);
  waiters.erase(it);
  Message r;
  r.op = Op::kValue;
  r.value = kv[key];
  for (uint64_t id : ids) {
    Conn *w = find(id);
    if (!w) continue;
    w->waiting = false;
    reply(*w, r);
    ready.push_back(id);
  }
}

void TcpStoreServer::Impl::stop_waiting(Conn &c) {
  if (!c.waiting) return;
  c.waiting = false;
  auto it = waiters.find(c.wait_key);
  if (it == waiters.end()) return;
  auto &ids = it->second;
  ids.erase(std::remove(ids.begin(), ids.end(), c.id), ids.end());
  if (ids.empty()) waiters.erase(it);
}

void TcpStoreServer::Impl::expire(int64_t now) {
  for (auto &[id, c] : conns) {
    if (c->closed) continue;
    if (c->waiting && c->wait_deadline_ns <= now) {
      stop_waiting(*c);
      Message r;
      r.op = Op::kTimeout;
      reply(*c, r);
      ready.push_back(id);
    } else if (!c->joined && c->accepted_ns + kHelloTimeoutNs <= now) {
      SMD_WARN("store", "closing the connection from %s: no HELLO within %lld s", c->peer.c_str(),
               static_cast<long long>(kHelloTimeoutNs / 1000 / kMsNs));
      close_conn(*c, "sent no HELLO");
    }
  }
}

void TcpStoreServer::Impl::reply(Conn &c, const Message &m) {
  Bytes frame = wire::encode(m);
  c.out.insert(c.out.end(), frame.begin(), frame.end());
  flush(c);
}

// Sends what the socket takes now; true when nothing is left to send.
bool TcpStoreServer::Impl::flush(Conn &c) {
  while (c.out_pending()) {
    ssize_t n = send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_sent += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    close_conn(c, n < 0 ? strerror(errno) : "send failed");
    return false;
  }
  c.out.clear();
  c.out_sent = 0;
  return true;
}

// Answers ERROR (or RETRY) with the reason and closes: the client reports
// the reason (or connects again).
void TcpStoreServer::Impl::reject(Conn &c, const std::string &reason, Op op) {
  Message r;
  r.op = op;
  r.reason = reason;
  reply(c, r);
  if (c.closed) return;
  // Unread input would make close() send a reset, which can destroy the
  // reply before the client reads it.
  shutdown(c.fd, SHUT_WR);
  char sink[4096];
  while (recv(c.fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
  close_conn(c, "refused");
}

void TcpStoreServer::Impl::close_conn(Conn &c, const char *why) {
  if (c.closed) return;
  stop_waiting(c);
  if (c.joined) {
    bool was_failure = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = live.find(c.rank);
      if (it != live.end() && it->second == c.id) {
        live.erase(it);
        if (!c.goodbye) {
          failed.insert(c.rank);
          was_failure = true;
        }
      }
    }
    changed.notify_all();
    if (was_failure)
      SMD_WARN("store",
               "rank %d (%s) left the store without saying goodbye "
               "(%s): counted as failed",
               c.rank, c.peer.c_str(), why);
  } else {
    --unauthenticated;
    SMD_TRACE("store", "connection from %s ended: %s", c.peer.c_str(), why);
  }
  close(c.fd);
  c.fd = -1;
  c.closed = true;
  c.in.clear();
  c.out.clear();
  c.out_sent = 0;
}

TcpStoreServer::TcpStoreServer(const std::string &bind_host, int port, std::string token,
                               int world_size, uint32_t epoch)
    : impl_(std::make_unique<Impl>()) {
  if (port < 0 || port > 65535)
    fail(SMD_ERR_INVALID_ARGUMENT, "store port %d is not a TCP port (0..65535)", port);
  if (world_size < 1)
    fail(SMD_ERR_INVALID_ARGUMENT, "store world size %d must be at least 1", world_size);
  impl_->token = std::move(token);
  impl_->world_size = world_size;
  impl_->epoch = epoch;
  impl_->unauthenticated_cap = unauthenticated_cap_from_limit();
  impl_->listen_on(bind_host, port);
  int pipefd[2];
  if (pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) != 0)
    fail_errno("cannot create the store server's wake-up pipe");
  impl_->wake_read = pipefd[0];
  impl_->wake_write = pipefd[1];
  impl_->thread = std::thread([impl = impl_.get()] { impl->serve(); });
  SMD_INFO("store", "serving the store on port %d for %d ranks", impl_->port, world_size);
}

TcpStoreServer::~TcpStoreServer() {
  impl_->stop.store(true, std::memory_order_release);
  char byte = 1;
  (void)!write(impl_->wake_write, &byte, 1);
  if (impl_->thread.joinable()) impl_->thread.join();
}

int TcpStoreServer::port() const { return impl_->port; }

int TcpStoreServer::unauthenticated_cap() const { return impl_->unauthenticated_cap; }

bool TcpStoreServer::wait_for_clients_to_leave(Deadline deadline) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  while (!impl_->live.empty()) {
    if (deadline.expired()) return false;
    // Short slices keep the deadline honest whatever clock the condition
    // variable uses.
    int64_t slice = std::min<int64_t>(deadline.remaining_ms(), 100);
    impl_->changed.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(slice, 1)));
  }
  return true;
}

std::vector<int> TcpStoreServer::failed_ranks() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return {impl_->failed.begin(), impl_->failed.end()};
}

std::vector<int> TcpStoreServer::connected_ranks() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<int> ranks;
  for (const auto &[rank, id] : impl_->live) ranks.push_back(rank);
  return ranks;
}

}  // namespace smd
