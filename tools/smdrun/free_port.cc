#include "free_port.h"

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

#include "fd_io.h"

namespace smdrun {
namespace {

// The port bound on one resolved address, or 0 with errno set.
int bound_port(const addrinfo &ai) {
  UniqueFd sock(::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC, ai.ai_protocol));
  if (!sock.valid() || ::bind(sock.get(), ai.ai_addr, ai.ai_addrlen) != 0) return 0;
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(sock.get(), reinterpret_cast<sockaddr *>(&bound), &len) != 0) return 0;
  if (bound.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
}

}  // namespace

int pick_free_port(const std::string &addr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  int rc = ::getaddrinfo(addr.c_str(), "0", &hints, &found);
  if (rc != 0)
    throw std::runtime_error("cannot resolve master address '" + addr + "': " + ::gai_strerror(rc));
  int port = 0;
  int err = 0;
  for (addrinfo *ai = found; ai && port == 0; ai = ai->ai_next) {
    port = bound_port(*ai);
    if (port == 0) err = errno;
  }
  ::freeaddrinfo(found);
  if (port == 0)
    throw std::runtime_error("cannot find a free port on '" + addr + "': " + std::strerror(err) +
                             " (give one with --master-port)");
  return port;
}

}  // namespace smdrun
