#include "node_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace smd_shm {

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_node_identity(NodeIdentity *out) {
  memset(out, 0, sizeof *out);
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) {
    errno = EIO;
    return false;
  }
  // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n": keep the 32 hex digits.
  int nibbles = 0;
  for (ssize_t i = 0; i < n && nibbles < 32; ++i) {
    int v = hex_value(text[i]);
    if (v < 0) continue;
    out->boot_id[nibbles / 2] |= uint8_t(nibbles % 2 == 0 ? v << 4 : v);
    ++nibbles;
  }
  if (nibbles != 32) {
    errno = EINVAL;
    return false;
  }
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) == 0) out->pid_ns = uint64_t(st.st_ino);
  return true;
}

void format_boot_id(const uint8_t id[16], char out[33]) {
  for (int i = 0; i < 16; ++i) snprintf(out + 2 * i, 3, "%02x", id[i]);
}

}  // namespace smd_shm
