#include "address.h"

#include <cstdio>
#include <cstring>

#include "layout.h"

namespace smd_shm {

bool check_address(const void *data, size_t size, const NodeIdentity &self, int32_t local_size,
                   AddressBlob *out, char *why, size_t why_cap) {
  if (data == nullptr || size != sizeof(AddressBlob)) {
    snprintf(why, why_cap, "address blob has %zu bytes, expected %zu (not an shm address?)",
             data == nullptr ? size_t(0) : size, sizeof(AddressBlob));
    return false;
  }
  AddressBlob a;
  memcpy(&a, data, sizeof a);
  if (a.magic != kAddressMagic) {
    snprintf(why, why_cap, "address blob is not an shm address (bad magic)");
    return false;
  }
  if (a.version != kAddressVersion || a.cell_size != kCellSize || a.ring_cells != kRingCells) {
    snprintf(why, why_cap,
             "address blob version %u (cells %u x %u B) does not match this "
             "plugin's version %u (cells %u x %u B): mixed plugin builds",
             a.version, a.ring_cells, a.cell_size, kAddressVersion, kRingCells, kCellSize);
    return false;
  }
  if (memcmp(a.node.boot_id, self.boot_id, sizeof self.boot_id) != 0) {
    char theirs[33], mine[33];
    format_boot_id(a.node.boot_id, theirs);
    format_boot_id(self.boot_id, mine);
    snprintf(why, why_cap,
             "address comes from another host (boot id %s, this host %s); "
             "the shm transport reaches only processes on this node",
             theirs, mine);
    return false;
  }
  if (a.node.pid_ns != self.pid_ns && a.node.pid_ns != 0 && self.pid_ns != 0) {
    snprintf(why, why_cap,
             "peer runs in another PID namespace (%llu, this process %llu); "
             "the shm transport needs one namespace to reach its memory",
             (unsigned long long)a.node.pid_ns, (unsigned long long)self.pid_ns);
    return false;
  }
  if (a.local_size != local_size || a.local_rank < 0 || a.local_rank >= local_size || a.pid <= 0 ||
      a.region_fd < 0 || a.region_bytes != region_bytes(uint32_t(local_size))) {
    snprintf(why, why_cap,
             "address blob is inconsistent: local rank %d of %d (this "
             "process has local size %d), pid %d, fd %d",
             a.local_rank, a.local_size, local_size, a.pid, a.region_fd);
    return false;
  }
  *out = a;
  return true;
}

}  // namespace smd_shm
