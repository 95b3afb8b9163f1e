/* interface.h - network interface names ("eth0", "lo", as NCCL_SOCKET_IFNAME
 * takes them) to IPv4 addresses, with getifaddrs. */
#ifndef SMD_TCP_INTERFACE_H
#define SMD_TCP_INTERFACE_H

#include <netinet/in.h>
#include <stddef.h>

/* The IPv4 address of the interface called `name`, or else of the first
 * interface whose name starts with `name` ("eth" finds eth0); a leading
 * '=' asks for the exact name only. Returns 0 when found, -1 when no
 * interface with an IPv4 address matches: then `known` lists those there
 * are ("lo 127.0.0.1, eth0 10.0.0.2"). */
int tcp_interface_address(const char *name, struct in_addr *out, char *known, size_t known_len);

#endif
