#include "core/bootstrap/tcp_store_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <random>

#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {
namespace {

using wire::Message;
using wire::Op;

// How long past a GET's deadline the server's TIMEOUT reply may take to
// arrive before the store counts as unresponsive.
constexpr int64_t kReplyGraceMs = 5000;
// One connect attempt waits at most this long, so a dropped SYN (a full
// listen backlog) is retried instead of waited out.
constexpr int64_t kAttemptMs = 3000;
constexpr int64_t kFirstBackoffMs = 10;
constexpr int64_t kMaxBackoffMs = 500;
constexpr int64_t kGoodbyeMs = 10000;

int poll_timeout(Deadline d, int64_t cap_ms = INT_MAX) {
  if (d.at_ns() == INT64_MAX && cap_ms == INT_MAX) return -1;
  return static_cast<int>(std::min(d.remaining_ms(), cap_ms));
}

// Waits for `events` on fd until the deadline; false if it passed.
bool wait_for(int fd, short events, Deadline deadline, int64_t cap_ms = INT_MAX) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, poll_timeout(deadline, cap_ms));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) fail_errno("poll on the store connection");
    if (n == 0) return false;
  }
}

// A nonblocking connect to one resolved address; -1 (with *why) if it
// fails. A connect to an absent listener on a local ephemeral port can
// connect the socket to itself; that counts as refused.
int try_connect(const addrinfo *ai, Deadline deadline, std::string *why) {
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) fail_errno("cannot create a socket for the store");
  int err = 0;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS || err == EINTR) {
      if (!wait_for(fd, POLLOUT, deadline, kAttemptMs)) {
        err = ETIMEDOUT;
      } else {
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
  }
  if (err == 0) {
    sockaddr_storage self{}, peer{};
    socklen_t self_len = sizeof self, peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&self), &self_len) == 0 &&
        getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peer_len) == 0 &&
        self_len == peer_len && memcmp(&self, &peer, self_len) == 0)
      err = ECONNREFUSED;
  }
  if (err != 0) {
    *why = strerror(err);
    close(fd);
    return -1;
  }
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// A request about one key; *what names it in errors ("SET 'key'").
Message keyed(Op op, const char *verb, const std::string &key, std::string *what) {
  *what = format("%s '%s'", verb, wire::printable(key).c_str());
  Message m;
  m.op = op;
  m.key = key;
  return m;
}

}  // namespace

TcpStoreClient::TcpStoreClient(const std::string &host, int port, std::string token, int rank,
                               int world_size, Deadline connect_deadline, int64_t op_timeout_ms,
                               uint32_t epoch)
    : host_(host),
      port_(port),
      address_(format("%s:%d", host.c_str(), port)),
      token_(std::move(token)),
      rank_(rank),
      world_size_(world_size),
      epoch_(epoch),
      op_timeout_ms_(op_timeout_ms > 0 ? op_timeout_ms : param_seconds_ms("SMD_TIMEOUT")) {
  if (host.empty()) fail(SMD_ERR_INVALID_ARGUMENT, "no store host given (set SMD_MASTER_ADDR)");
  if (port < 1 || port > 65535)
    fail(SMD_ERR_INVALID_ARGUMENT, "store port %d is not a TCP port (1..65535)", port);
  if (world_size == wire::kJoinerHello && rank == -1) {
    // a joiner: the store gives it an id (rank_ below)
  } else if (world_size < 1 || rank < 0 || rank >= world_size)
    fail(SMD_ERR_INVALID_ARGUMENT, "rank %d is not in a world of %d ranks", rank, world_size);
  std::lock_guard<std::mutex> lock(mu_);
  join(connect_deadline);
  SMD_INFO("store", "rank %d joined the store at %s", rank_, address_.c_str());
}

TcpStoreClient::~TcpStoreClient() { disconnect(); }

int TcpStoreClient::connect_with_retry(Deadline deadline) {
  int64_t start_ms = now_ms();
  int64_t backoff = kFirstBackoffMs;
  // Jitter spreads the retries of many ranks started together.
  std::minstd_rand rng(static_cast<uint32_t>(now_ns()) ^
                       static_cast<uint32_t>(getpid() * 2654435761u) ^
                       static_cast<uint32_t>(rank_));
  std::string why;
  std::string service = std::to_string(port_);
  for (int attempt = 1;; ++attempt) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res = nullptr;
    int rc = getaddrinfo(host_.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
      // Name service may lag behind the job start: retried like a refusal.
      why = format("cannot resolve '%s': %s", host_.c_str(), gai_strerror(rc));
    } else {
      for (const addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = try_connect(ai, deadline, &why);
        if (fd >= 0) {
          freeaddrinfo(res);
          if (attempt > 1)
            SMD_INFO("store", "reached the store at %s after %d attempts", address_.c_str(),
                     attempt);
          return fd;
        }
      }
      freeaddrinfo(res);
    }
    if (deadline.expired())
      fail(SMD_ERR_BOOTSTRAP,
           "could not reach the store at %s within %lld ms (%d attempts, last: "
           "%s); is rank 0 running, and do SMD_MASTER_ADDR/SMD_MASTER_PORT "
           "point at it?",
           address_.c_str(), static_cast<long long>(now_ms() - start_ms), attempt, why.c_str());
    if (attempt == 1)
      SMD_INFO("store", "store at %s not reachable yet (%s); retrying", address_.c_str(),
               why.c_str());
    int64_t pause = backoff / 2 + static_cast<int64_t>(rng() % backoff);
    pause = std::min(pause, deadline.remaining_ms());
    if (pause > 0) usleep(static_cast<useconds_t>(pause * 1000));
    backoff = std::min(backoff * 2, kMaxBackoffMs);
  }
}

void TcpStoreClient::join(Deadline deadline) {
  int64_t backoff = kFirstBackoffMs;
  for (int attempt = 1;; ++attempt) {
    fd_ = connect_with_retry(deadline);
    std::string why;
    try {
      Deadline answer = Deadline::after_ms(std::max<int64_t>(deadline.remaining_ms(), kAttemptMs));
      if (send_hello(op_deadline().min(answer), &why)) return;
    } catch (...) {
      disconnect();
      throw;
    }
    disconnect();
    if (deadline.expired())
      fail(SMD_ERR_BOOTSTRAP,
           "the store at %s did not let this rank in within the deadline "
           "(%d attempts, last: %s)",
           address_.c_str(), attempt, why.c_str());
    if (attempt == 1)
      SMD_INFO("store", "store at %s: %s; trying again", address_.c_str(), why.c_str());
    int64_t pause = std::min(backoff, deadline.remaining_ms());
    if (pause > 0) usleep(static_cast<useconds_t>(pause * 1000));
    backoff = std::min(backoff * 2, kMaxBackoffMs);
  }
}

bool TcpStoreClient::send_hello(Deadline deadline, std::string *why) {
  Message hello;
  hello.op = Op::kHello;
  hello.token = token_;
  hello.rank = rank_;
  hello.world_size = world_size_;
  hello.epoch = epoch_;
  Message r;
  connection_lost_ = false;
  try {
    r = call(hello, deadline, "HELLO");
  } catch (const Error &e) {
    // A store that goes away or stays silent during HELLO is most likely
    // the previous world's, shutting down: the next one may take the port.
    if (!connection_lost_ && e.code() != SMD_ERR_TIMEOUT) throw;
    *why = e.message();
    return false;
  }
  if (r.op == Op::kRetry) {
    *why = r.reason;
    return false;
  }
  if (r.op == Op::kError)
    fail(SMD_ERR_BOOTSTRAP, "store at %s refused this rank: %s", address_.c_str(),
         r.reason.c_str());
  if (world_size_ == wire::kJoinerHello && r.op == Op::kRanks && r.ranks.size() == 1) {
    rank_ = r.ranks[0];  // a joiner's id; a reconnect presents it again
    return true;
  }
  expect(r, Op::kOk, "HELLO");
  return true;
}

Message TcpStoreClient::call(const Message &request, Deadline deadline, const std::string &what) {
  check_usable(what);
  send_all(wire::encode(request), deadline, what);
  uint8_t header[wire::kHeaderSize];
  recv_exact(header, sizeof header, deadline, what);
  uint32_t body = 0;
  try {
    body = wire::frame_body_size(header, wire::kMaxFrame);
  } catch (const Error &e) {
    garbled(what, e.what());
  }
  Bytes frame(wire::kHeaderSize + body);
  std::copy(header, header + sizeof header, frame.begin());
  recv_exact(frame.data() + wire::kHeaderSize, body, deadline, what);
  try {
    return wire::decode(frame.data(), frame.size());
  } catch (const Error &e) {
    garbled(what, e.what());
  }
}

void TcpStoreClient::send_all(const Bytes &frame, Deadline deadline, const std::string &what) {
  size_t sent = 0;
  while (sent < frame.size()) {
    ssize_t n = send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd_, POLLOUT, deadline)) {
        // Half a request on the wire: the connection cannot be reused.
        disconnect();
        fail(SMD_ERR_TIMEOUT, "the store at %s took no %s before the deadline", address_.c_str(),
             what.c_str());
      }
      continue;
    }
    lost(what, n < 0 ? strerror(errno) : "send failed");
  }
}

void TcpStoreClient::recv_exact(uint8_t *buf, size_t size, Deadline deadline,
                                const std::string &what) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = recv(fd_, buf + got, size - got, MSG_DONTWAIT);
    if (n > 0) {
      got += n;
      continue;
    }
    if (n == 0) lost(what, "connection closed");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) lost(what, strerror(errno));
    if (!wait_for(fd_, POLLIN, deadline)) {
      // A late reply would be taken for the next request's: start over.
      disconnect();
      fail(SMD_ERR_TIMEOUT,
           "the store at %s did not answer %s before the "
           "deadline",
           address_.c_str(), what.c_str());
    }
  }
}

void TcpStoreClient::lost(const std::string &what, const std::string &detail) {
  disconnect();
  connection_lost_ = true;
  fail(SMD_ERR_BOOTSTRAP, "lost the store at %s (rank 0 died?) during %s: %s", address_.c_str(),
       what.c_str(), detail.c_str());
}

void TcpStoreClient::garbled(const std::string &what, const char *detail) {
  disconnect();
  fail(SMD_ERR_BOOTSTRAP, "the store at %s answered %s with garbage (not an smd store?): %s",
       address_.c_str(), what.c_str(), detail);
}

void TcpStoreClient::check_usable(const std::string &what) const {
  if (said_goodbye_)
    fail(SMD_ERR_INVALID_USAGE, "%s on the store at %s after this rank said goodbye", what.c_str(),
         address_.c_str());
  if (fd_ < 0)
    fail(SMD_ERR_BOOTSTRAP,
         "lost the store at %s (rank 0 died?) earlier; "
         "cannot send %s",
         address_.c_str(), what.c_str());
}

Deadline TcpStoreClient::op_deadline() const {
  return op_timeout_ms_ > 0 ? Deadline::after_ms(op_timeout_ms_) : Deadline::never();
}

void TcpStoreClient::expect(const Message &reply, Op op, const std::string &what) {
  if (reply.op == op) return;
  if (reply.op == Op::kError)
    fail(SMD_ERR_INVALID_USAGE, "the store at %s refused %s: %s", address_.c_str(), what.c_str(),
         reply.reason.c_str());
  disconnect();
  fail(SMD_ERR_BOOTSTRAP, "the store at %s answered %s with %s (mixed smd versions?)",
       address_.c_str(), what.c_str(), wire::op_name(reply.op));
}

void TcpStoreClient::disconnect() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void TcpStoreClient::set(const std::string &key, const Bytes &value) {
  std::string what;
  Message m = keyed(Op::kSet, "SET", key, &what);
  m.value = value;
  std::lock_guard<std::mutex> lock(mu_);
  expect(call(m, op_deadline(), what), Op::kOk, what);
}

Bytes TcpStoreClient::get(const std::string &key, Deadline deadline) {
  std::string what;
  Message m = keyed(Op::kGet, "GET", key, &what);
  // Deadlines decades away are as good as none (and would overflow below).
  constexpr int64_t kForeverMs = int64_t{1} << 40;
  bool forever = deadline.remaining_ms() > kForeverMs;
  m.number = forever ? -1 : deadline.remaining_ms();
  Deadline reply_deadline = forever ? deadline : Deadline::after_ms(m.number + kReplyGraceMs);
  std::lock_guard<std::mutex> lock(mu_);
  int64_t start_ms = now_ms();
  Message r = call(m, reply_deadline, what);
  if (r.op == Op::kTimeout)
    fail(SMD_ERR_TIMEOUT, "timed out after %lld ms waiting for key '%s' in %s",
         static_cast<long long>(now_ms() - start_ms), wire::printable(key).c_str(),
         describe().c_str());
  expect(r, Op::kValue, what);
  return std::move(r.value);
}

int64_t TcpStoreClient::add(const std::string &key, int64_t delta) {
  std::string what;
  Message m = keyed(Op::kAdd, "ADD", key, &what);
  m.number = delta;
  std::lock_guard<std::mutex> lock(mu_);
  Message r = call(m, op_deadline(), what);
  expect(r, Op::kInteger, what);
  return r.number;
}

std::optional<std::vector<bool>> TcpStoreClient::check(const std::vector<std::string> &keys) {
  std::string what = format("CHECK of %zu keys", keys.size());
  Message m;
  m.op = Op::kCheck;
  m.keys = keys;
  std::lock_guard<std::mutex> lock(mu_);
  Message r = call(m, op_deadline(), what);
  expect(r, Op::kFlags, what);
  if (r.flags.size() != keys.size()) {
    disconnect();
    fail(SMD_ERR_BOOTSTRAP, "the store at %s answered %s with %zu flags", address_.c_str(),
         what.c_str(), r.flags.size());
  }
  return std::move(r.flags);
}

std::vector<int> TcpStoreClient::failed_ranks() {
  Message m;
  m.op = Op::kFailedRanks;
  std::lock_guard<std::mutex> lock(mu_);
  Message r = call(m, op_deadline(), "FAILED_RANKS");
  expect(r, Op::kRanks, "FAILED_RANKS");
  return {r.ranks.begin(), r.ranks.end()};
}

void TcpStoreClient::goodbye() {
  std::lock_guard<std::mutex> lock(mu_);
  if (said_goodbye_) return;
  if (fd_ >= 0) {
    Message m;
    m.op = Op::kGoodbye;
    try {
      Deadline d = op_deadline().min(Deadline::after_ms(kGoodbyeMs));
      expect(call(m, d, "GOODBYE"), Op::kOk, "GOODBYE");
    } catch (const Error &e) {
      SMD_INFO("store", "goodbye to the store at %s not delivered: %s", address_.c_str(), e.what());
    }
  }
  disconnect();
  said_goodbye_ = true;
}

std::string TcpStoreClient::describe() const { return "tcp store " + address_; }

}  // namespace smd
