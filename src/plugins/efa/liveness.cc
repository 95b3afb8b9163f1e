// Peer death. Reliable-datagram providers say nothing about a peer that
// died: tcp;ofi_rxm keeps retrying the connection and answers -FI_EAGAIN,
// a posted receive waits forever, and efa fails sends only. So each
// context listens on a TCP socket and every endpoint connects to its
// peer's: the kernel closes a process's sockets whatever killed it, and
// keepalive probes notice a node that vanished. The listener greets each
// connection with the context's nonce, so a port reused by another
// process is recognised.
//
// While requests are pending, progress polls all watched sockets in one
// syscall at most every kTickNs; check_peer polls at once.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/fabric.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "context.h"

namespace smd_efa {

namespace {

constexpr uint64_t kTickNs = 50'000'000;
constexpr uint64_t kHelloMagic = 0x4f4c4c45485f4645ull;  // "EF_HELLO"

constexpr const char *kRefused = "its liveness socket refuses connections (the process is gone)";

struct Hello {
  uint64_t magic;
  uint64_t nonce;
};
static_assert(sizeof(Hello) == 16, "the hello is 16 bytes on the wire");

bool usable_ip(const struct sockaddr *sa) {
  if (sa == nullptr) return false;
  if (sa->sa_family == AF_INET) {
    auto *in = reinterpret_cast<const struct sockaddr_in *>(sa);
    return in->sin_addr.s_addr != htonl(INADDR_ANY);
  }
  if (sa->sa_family == AF_INET6) {
    auto *in6 = reinterpret_cast<const struct sockaddr_in6 *>(sa);
    return !IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) &&
           !IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr);  // needs a scope id
  }
  return false;
}

// The first interface that is up, not loopback, with an IPv4 (else a
// global IPv6) address.
bool interface_ip(struct sockaddr_storage *out) {
  struct ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (int family : {AF_INET, AF_INET6}) {
    for (struct ifaddrs *i = list; i != nullptr && !found; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != family) continue;
      if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
      if (!usable_ip(i->ifa_addr)) continue;
      memcpy(out, i->ifa_addr,
             family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
      found = true;
    }
    if (found) break;
  }
  freeifaddrs(list);
  return found;
}

// Where to listen: the provider's own IP when its names are socket
// addresses (tcp, sockets, udp), loopback when the world is one node,
// else the first real interface (efa names are not IP addresses).
bool choose_ip(Context *ctx, struct sockaddr_storage *out) {
  memset(out, 0, sizeof *out);
  uint32_t fmt = ctx->info->addr_format;
  if ((fmt == FI_SOCKADDR_IN || fmt == FI_SOCKADDR_IN6 || fmt == FI_SOCKADDR) &&
      ctx->name.size() <= sizeof *out) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    memcpy(&ss, ctx->name.data(), ctx->name.size());
    if (usable_ip(reinterpret_cast<struct sockaddr *>(&ss))) {
      *out = ss;
      return true;
    }
  }
  if (ctx->node_count <= 1 || !ctx->prov.remote_comm) {
    auto *in = reinterpret_cast<struct sockaddr_in *>(out);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return true;
  }
  return interface_ip(out);
}

void set_port(struct sockaddr_storage *ss, uint16_t port) {
  if (ss->ss_family == AF_INET) reinterpret_cast<struct sockaddr_in *>(ss)->sin_port = htons(port);
  else reinterpret_cast<struct sockaddr_in6 *>(ss)->sin6_port = htons(port);
}

socklen_t addr_len(const struct sockaddr_storage &ss) {
  return ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

// Keepalive finds a vanished node (no FIN, no RST) in about 20 s.
void keepalive(int fd) {
  int on = 1, idle = 10, intvl = 3, cnt = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

void accept_watchers(Context *ctx) {
  Hello hello{kHelloMagic, ctx->nonce};
  for (;;) {
    int fd = accept4(ctx->live.listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or nothing we can act on now
    keepalive(fd);
    // 16 bytes into a fresh socket's empty buffer: all or nothing.
    if (send(fd, &hello, sizeof hello, MSG_NOSIGNAL) != ssize_t(sizeof hello)) {
      close(fd);
      continue;
    }
    ctx->live.accepted.push_back(fd);
  }
}

std::string peer_text(Endpoint *ep, const char *what) {
  char text[200];
  snprintf(text, sizeof text, "efa peer rank %d: %s", ep->peer, what);
  return text;
}

// A watched socket has something to say: it connected, refused, greeted,
// or closed. Returns the peer's death, or "" while it lives.
std::string read_watch(Context *ctx, Endpoint *ep, short revents) {
  if (ep->watch == Watch::kConnecting) {
    if ((revents & (POLLOUT | POLLERR | POLLHUP)) == 0) return "";
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(ep->live_fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0) {
      ep->watch = Watch::kUp;
      return "";
    }
    if (err == ECONNREFUSED) return peer_text(ep, kRefused);
    // Unreachable or filtered: we cannot tell, so we do not guess.
    log_line(ctx, SMD_TRANSPORT_LOG_WARN,
             "efa: cannot watch rank %d (connect: %s); its death shows only "
             "through the provider",
             ep->peer, strerror(err));
    liveness_unwatch(ep);
    ep->watch = Watch::kUnwatched;
    return "";
  }
  for (;;) {
    uint8_t buf[64];
    ssize_t n = recv(ep->live_fd, buf, sizeof buf, 0);
    if (n > 0) {
      for (ssize_t i = 0; i < n && ep->hello_got < sizeof ep->hello; ++i)
        ep->hello[ep->hello_got++] = buf[i];
      if (ep->hello_got == sizeof ep->hello) {
        Hello h;
        memcpy(&h, ep->hello, sizeof h);
        if (h.magic != kHelloMagic || h.nonce != ep->peer_nonce)
          return peer_text(ep, "its liveness port now belongs to another process");
      }
      continue;
    }
    if (n == 0) return peer_text(ep, "connection closed (the process exited or finalized)");
    if (errno == EAGAIN || errno == EWOULDBLOCK) return "";
    if (errno == EINTR) continue;
    return peer_text(ep, strerror(errno));
  }
}

}  // namespace

Status liveness_open(Context *ctx) {
  struct sockaddr_storage ss;
  if (!choose_ip(ctx, &ss))
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM,
                "efa: no network interface for the liveness socket; set "
                "SMD_EFA_LIVENESS=0 to run without peer-death detection");
  set_port(&ss, 0);
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "efa: liveness socket: %s", strerror(errno));
  socklen_t len = addr_len(ss);
  if (bind(fd, reinterpret_cast<struct sockaddr *>(&ss), len) != 0 || listen(fd, 1024) != 0 ||
      getsockname(fd, reinterpret_cast<struct sockaddr *>(&ss), &len) != 0) {
    int err = errno;
    close(fd);
    char ip[INET6_ADDRSTRLEN] = "?";
    const void *a =
        ss.ss_family == AF_INET
            ? static_cast<const void *>(&reinterpret_cast<sockaddr_in *>(&ss)->sin_addr)
            : static_cast<const void *>(&reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_addr);
    inet_ntop(ss.ss_family, a, ip, sizeof ip);
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM,
                "efa: liveness socket on %s: %s (SMD_EFA_LIVENESS=0 turns it off)", ip,
                strerror(err));
  }
  ctx->live.listen_fd = fd;
  ctx->live.addr = ss;
  return SMD_TRANSPORT_OK;
}

void liveness_close(Context *ctx) {
  for (int fd : ctx->live.accepted) close(fd);
  ctx->live.accepted.clear();
  if (ctx->live.listen_fd >= 0) close(ctx->live.listen_fd);
  ctx->live.listen_fd = -1;
}

void liveness_watch(Context *ctx, Endpoint *ep, const struct sockaddr *addr, socklen_t len,
                    uint64_t nonce) {
  if (ctx->live.listen_fd < 0 || addr == nullptr) return;  // off here or there
  ep->peer_nonce = nonce;
  int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    log_line(ctx, SMD_TRANSPORT_LOG_WARN,
             "efa: cannot watch rank %d (socket: %s); its death shows only "
             "through the provider",
             ep->peer, strerror(errno));
    ep->watch = Watch::kUnwatched;
    return;
  }
  keepalive(fd);
  ep->live_fd = fd;
  if (connect(fd, addr, len) == 0) {
    ep->watch = Watch::kUp;
  } else if (errno == EINPROGRESS) {
    ep->watch = Watch::kConnecting;
  } else if (errno == ECONNREFUSED) {
    liveness_unwatch(ep);
    peer_lost(ctx, ep, peer_text(ep, kRefused));
  } else {
    log_line(ctx, SMD_TRANSPORT_LOG_WARN,
             "efa: cannot watch rank %d (connect: %s); its death shows only "
             "through the provider",
             ep->peer, strerror(errno));
    close(fd);
    ep->live_fd = -1;
    ep->watch = Watch::kUnwatched;
  }
}

void liveness_unwatch(Endpoint *ep) {
  if (ep->live_fd >= 0) close(ep->live_fd);
  ep->live_fd = -1;
  ep->watch = Watch::kNone;
}

void liveness_tick(Context *ctx, bool now) {
  if (ctx->live.listen_fd < 0) return;
  if (!now) {
    if (ctx->unfinished == 0) return;
    uint64_t t = monotonic_ns();
    if (t < ctx->live.next_tick_ns) return;
    ctx->live.next_tick_ns = t + kTickNs;
  }
  accept_watchers(ctx);
  std::vector<struct pollfd> fds;
  std::vector<Endpoint *> eps;
  for (Endpoint *ep : ctx->endpoints) {
    if (ep->dead || ep->live_fd < 0) continue;
    short events = ep->watch == Watch::kConnecting ? POLLOUT : POLLIN;
    fds.push_back({ep->live_fd, events, 0});
    eps.push_back(ep);
  }
  size_t watched = fds.size();
  for (int fd : ctx->live.accepted) fds.push_back({fd, POLLIN, 0});
  if (fds.empty()) return;
  if (poll(fds.data(), fds.size(), 0) <= 0) return;
  // Watchers that left: their sockets are closed here.
  std::vector<int> keep;
  for (size_t i = watched; i < fds.size(); ++i) {
    bool gone = false;
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[64];
      ssize_t n = recv(fds[i].fd, buf, sizeof buf, 0);
      gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
    if (gone) close(fds[i].fd);
    else keep.push_back(fds[i].fd);
  }
  ctx->live.accepted.swap(keep);
  for (size_t i = 0; i < watched; ++i) {
    // An earlier death in this loop may have drained the queue and failed
    // this endpoint too.
    if (fds[i].revents == 0 || eps[i]->dead || eps[i]->live_fd != fds[i].fd) continue;
    std::string death = read_watch(ctx, eps[i], fds[i].revents);
    if (!death.empty()) peer_lost(ctx, eps[i], death);
  }
}

void liveness_fds(Context *ctx, std::vector<int> *fds) {
  if (ctx->live.listen_fd < 0) return;
  fds->push_back(ctx->live.listen_fd);
  for (Endpoint *ep : ctx->endpoints)
    if (!ep->dead && ep->live_fd >= 0) fds->push_back(ep->live_fd);
}

}  // namespace smd_efa
