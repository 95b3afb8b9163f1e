/* interface.c - see interface.h. */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include "interface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static struct in_addr ipv4_of(const struct ifaddrs *i) {
  return ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
}

int tcp_interface_address(const char *name, struct in_addr *out, char *known, size_t known_len) {
  struct ifaddrs *list = NULL;
  if (known_len > 0) known[0] = '\0';
  if (name == NULL || name[0] == '\0' || getifaddrs(&list) != 0) return -1;
  int exact_only = name[0] == '=';
  if (exact_only) ++name;
  size_t n = strlen(name);
  const struct ifaddrs *exact = NULL, *prefix = NULL;
  size_t used = 0;
  for (const struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
    if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
    if (exact == NULL && strcmp(i->ifa_name, name) == 0) exact = i;
    if (prefix == NULL && !exact_only && strncmp(i->ifa_name, name, n) == 0) prefix = i;
    char text[INET_ADDRSTRLEN];
    struct in_addr a = ipv4_of(i);
    inet_ntop(AF_INET, &a, text, sizeof text);
    if (used < known_len) {
      int w =
          snprintf(known + used, known_len - used, "%s%s %s", used ? ", " : "", i->ifa_name, text);
      used += w > 0 ? (size_t)w : 0;
    }
  }
  const struct ifaddrs *chosen = exact != NULL ? exact : prefix;
  if (chosen != NULL) *out = ipv4_of(chosen);
  freeifaddrs(list);
  return chosen != NULL ? 0 : -1;
}
