/* socket.c - creating and tuning sockets. Every socket is nonblocking
 * (no entry may block: the ABI's progress rule) and close-on-exec (a rank
 * that forks a child must not leak its connections into it). */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A process that dies on a live host is noticed at once: its kernel
 * closes its sockets (FIN or reset). A dead host sends nothing, so:
 * keepalive probes notice an idle connection to it after KEEPIDLE +
 * KEEPCNT * KEEPINTVL seconds, and TCP_USER_TIMEOUT fails a connection
 * whose data stays unacknowledged, or unsent behind a zero window, that
 * long. The latter is the job's own deadline, never less: a live peer may
 * legitimately compute for a long time without reading. */
enum { kKeepIdleS = 5, kKeepIntervalS = 2, kKeepCount = 3 };
/* Bytes written but not yet sent that make the socket count as full. */
enum { kNotSentLowat = 256 * 1024 };

void tcp_socket_tune(int fd, int64_t user_timeout_ms) {
  int one = 1;
  /* Latency of small frames over Nagle's batching: the plugin already
   * writes whole frames with one sendmsg. */
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  /* Little unsent data in the kernel: a CTS we write while streaming to
   * the same peer waits behind all of it, and the peer's whole message
   * waits for that CTS (send.c). Data in flight is not limited by this,
   * so a stream still fills the link. */
#ifdef TCP_NOTSENT_LOWAT /* Linux 3.12, macOS; elsewhere the kernel's default */
  int lowat = kNotSentLowat;
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
#endif
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int idle = kKeepIdleS, interval = kKeepIntervalS, count = kKeepCount;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  if (user_timeout_ms <= 0 || user_timeout_ms > UINT32_MAX) return;
  unsigned int user_timeout = (unsigned int)user_timeout_ms;
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

int tcp_socket_listen(struct in_addr bind_addr, int *fd_out, uint16_t *port, char *why,
                      size_t why_len) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(why, why_len, "socket: %s", strerror(errno));
    return -1;
  }
  /* The address peers are told to dial (or every interface, when asked),
   * a port the kernel picks: the address blob tells peers both. */
  struct sockaddr_in any;
  memset(&any, 0, sizeof any);
  any.sin_family = AF_INET;
  any.sin_addr = bind_addr;
  any.sin_port = 0;
  socklen_t len = sizeof any;
  if (bind(fd, (struct sockaddr *)&any, sizeof any) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, (struct sockaddr *)&any, &len) != 0) {
    snprintf(why, why_len, "listening socket: %s", strerror(errno));
    close(fd);
    return -1;
  }
  *fd_out = fd;
  *port = ntohs(any.sin_port);
  return 0;
}

int tcp_socket_dial(const struct sockaddr_in *addr, int64_t user_timeout_ms, int *fd_out,
                    int *in_progress, char *why, size_t why_len) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(why, why_len, "socket: %s", strerror(errno));
    return -1;
  }
  tcp_socket_tune(fd, user_timeout_ms);
  *in_progress = 0;
  if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      snprintf(why, why_len, "connect: %s", strerror(errno));
      close(fd);
      return -1;
    }
    /* The handshake finishes in the background; progress() sees the
     * socket become writable and asks for the result. */
    *in_progress = 1;
  }
  *fd_out = fd;
  return 0;
}

int tcp_socket_dial_result(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

void tcp_socket_close(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

void tcp_socket_text(const struct sockaddr_in *addr, char *buf, size_t len) {
  char ip[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof ip);
  snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(addr->sin_port));
}
