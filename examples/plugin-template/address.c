/* address.c - this context's address blob: what the core sends every peer
 * (through its rendezvous store) so that the peer's connect() can reach
 * us.
 *
 * Layout, 24 bytes, integers big-endian:
 *
 *   offset  size  field
 *        0     4  magic "SMDT"
 *        4     2  version (TCP_WIRE_VERSION)
 *        6     2  TCP port of our listening socket
 *        8     4  IPv4 address peers should dial
 *       12     4  reserved, zero
 *       16     8  nonce: a random number of this context
 *
 * The blob is data from another process: connect() checks everything in
 * it before use. The nonce goes back to us in the HELLO of every
 * connection, so a connection meant for another job (or an older context
 * that used the same port) is refused instead of mixed into this one.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include "interface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_ADDRESS_MAGIC 0x534d4454u /* "SMDT" */

static int is_loopback(struct in_addr a) { return (ntohl(a.s_addr) >> 24) == 127; }

/* The first IPv4 address of `name`, preferring one that is not loopback. */
static int resolve(const char *name, int want_non_loopback, struct in_addr *out, char *err,
                   size_t err_len) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(name, NULL, &hints, &res);
  if (rc != 0) {
    snprintf(err, err_len, "%s", gai_strerror(rc));
    return -1;
  }
  int found = -1;
  for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
    struct in_addr a = ((const struct sockaddr_in *)(const void *)ai->ai_addr)->sin_addr;
    if (want_non_loopback && is_loopback(a)) continue;
    *out = a;
    found = 0;
    break;
  }
  freeaddrinfo(res);
  if (found != 0) snprintf(err, err_len, "only loopback addresses");
  return found;
}

/* The first interface that is up and not loopback. */
static int first_interface(struct in_addr *out, char *name, size_t name_len) {
  struct ifaddrs *list = NULL;
  if (getifaddrs(&list) != 0) return -1;
  int found = -1;
  for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
    if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    *out = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
    snprintf(name, name_len, "%s", i->ifa_name);
    found = 0;
    break;
  }
  freeifaddrs(list);
  return found;
}

tcp_status tcp_address_choose(const smd_transport_host_t *host, struct in_addr *addr, char *how,
                              size_t how_len) {
  char err[160];
  /* 1. The user's choice. Parameters come from host->get_param, never
   *    getenv: the core may take them from elsewhere than the
   *    environment, and it declares every SMD_* name in its registry. */
  const char *wanted = host->get_param(host->host, "SMD_TCP_ADDR");
  if (wanted != NULL && wanted[0] != '\0') {
    /* An address, else an interface name (before host names: "lo" or
     * "eth0" is what NCCL_SOCKET_IFNAME users write), else a host name. */
    char interfaces[512];
    if (inet_pton(AF_INET, wanted, addr) == 1 ||
        tcp_interface_address(wanted, addr, interfaces, sizeof interfaces) == 0 ||
        (wanted[0] != '=' && resolve(wanted, 0, addr, err, sizeof err) == 0)) {
      char text[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, addr, text, sizeof text);
      snprintf(how, how_len, "SMD_TCP_ADDR=%s (%s)", wanted, text);
      return SMD_TRANSPORT_OK;
    }
    return tcp_fail_host(host, SMD_TRANSPORT_ERR_INVALID,
                         "tcp: SMD_TCP_ADDR=%s is not an IPv4 address, the name of an interface "
                         "with one (this host has: %s), or a host name that resolves to one (%s)",
                         wanted, interfaces[0] ? interfaces : "none",
                         wanted[0] == '=' ? "exact interface name asked" : err);
  }
  /* 2. Every rank of the world on this host: loopback always works. */
  if (host->node_count <= 1) {
    addr->s_addr = htonl(INADDR_LOOPBACK);
    snprintf(how, how_len, "every rank is on this node");
    return SMD_TRANSPORT_OK;
  }
  /* 3. What the host name resolves to, as other hosts would see it. */
  char name[256];
  if (gethostname(name, sizeof name) == 0) {
    name[sizeof name - 1] = '\0';
    if (resolve(name, 1, addr, err, sizeof err) == 0) {
      snprintf(how, how_len, "host name %s", name);
      return SMD_TRANSPORT_OK;
    }
  }
  /* 4. Many hosts map their name to 127.0.1.1: take an interface. */
  char ifname[IF_NAMESIZE + 1];
  if (first_interface(addr, ifname, sizeof ifname) == 0) {
    snprintf(how, how_len, "interface %s (the host name gives no other address)", ifname);
    return SMD_TRANSPORT_OK;
  }
  addr->s_addr = htonl(INADDR_LOOPBACK);
  snprintf(how, how_len,
           "no address but loopback found: ranks on other hosts cannot connect; "
           "set SMD_TCP_ADDR");
  return SMD_TRANSPORT_OK;
}

void tcp_address_encode(unsigned char out[TCP_ADDRESS_SIZE], struct in_addr addr, uint16_t port,
                        uint64_t nonce) {
  memset(out, 0, TCP_ADDRESS_SIZE);
  tcp_put_u32(out, TCP_ADDRESS_MAGIC);
  tcp_put_u16(out + 4, (uint16_t)TCP_WIRE_VERSION);
  tcp_put_u16(out + 6, port);
  memcpy(out + 8, &addr.s_addr, 4); /* already in network order */
  tcp_put_u64(out + 16, nonce);
}

int tcp_address_decode(const void *blob, size_t size, struct sockaddr_in *addr, uint64_t *nonce,
                       char *why, size_t why_len) {
  const unsigned char *b = (const unsigned char *)blob;
  if (blob == NULL || size != TCP_ADDRESS_SIZE) {
    snprintf(why, why_len, "address blob of %zu bytes, expected %d", blob ? size : 0,
             TCP_ADDRESS_SIZE);
    return -1;
  }
  if (tcp_get_u32(b) != TCP_ADDRESS_MAGIC) {
    snprintf(why, why_len, "address blob is not a tcp plugin address (bad magic)");
    return -1;
  }
  if (tcp_get_u16(b + 4) != TCP_WIRE_VERSION) {
    snprintf(why, why_len, "peer speaks tcp wire version %u, this plugin %u",
             (unsigned)tcp_get_u16(b + 4), TCP_WIRE_VERSION);
    return -1;
  }
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_port = htons(tcp_get_u16(b + 6));
  memcpy(&addr->sin_addr.s_addr, b + 8, 4);
  *nonce = tcp_get_u64(b + 16);
  if (addr->sin_port == 0 || addr->sin_addr.s_addr == htonl(INADDR_ANY)) {
    snprintf(why, why_len, "address blob has no port or address");
    return -1;
  }
  return 0;
}
