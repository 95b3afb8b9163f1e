#include "raw_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "core/util/clock.h"

namespace smd::test {

int raw_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{60, 0};  // replies come at once; a minute only ends a hang
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool raw_send(int fd, const Bytes &data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += n;
  }
  return true;
}

namespace {
bool read_exact(int fd, uint8_t *buf, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = recv(fd, buf + got, size - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += n;
  }
  return true;
}
}  // namespace

std::optional<wire::Message> raw_reply(int fd) {
  uint8_t header[wire::kHeaderSize];
  if (!read_exact(fd, header, sizeof header)) return std::nullopt;
  uint32_t body = wire::frame_body_size(header, wire::kMaxFrame);
  Bytes frame(wire::kHeaderSize + body);
  std::copy(header, header + sizeof header, frame.begin());
  if (!read_exact(fd, frame.data() + wire::kHeaderSize, body)) return std::nullopt;
  return wire::decode(frame.data(), frame.size());
}

bool closed_by_peer(int fd, int timeout_ms) {
  Deadline deadline = Deadline::after_ms(timeout_ms);
  char buf[4096];
  while (!deadline.expired()) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(deadline.remaining_ms())) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EINTR) return true;  // reset
  }
  return false;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

Bytes hello_frame(const std::string &token, int rank, int world_size, uint32_t version,
                  uint32_t epoch) {
  wire::Message m;
  m.epoch = epoch;
  m.op = wire::Op::kHello;
  m.token = token;
  m.rank = rank;
  m.world_size = world_size;
  m.version = version;
  return wire::encode(m);
}

}  // namespace smd::test
