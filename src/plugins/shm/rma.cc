// One-sided reads. Registration only records a range: CMA can read any
// address of a peer, so the remote key is just {pid, address, length}
// and iget is a process_vm_readv. Without CMA, iget asks the peer to
// stream the bytes (kGetReq), which needs the peer to progress.
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "context.h"
#include "peer_blob.h"
#include "remote_range.h"

namespace smd_shm {

using smd_plugin::check_remote_range;

struct RemoteKey {
  uint64_t magic;
  int32_t pid;
  uint32_t reserved;
  uint64_t addr;
  uint64_t size;
};
constexpr uint64_t kRemoteKeyMagic = 0x59454b525f4d4853ull;  // "SHM_RKEY"

Status mem_register(Context *ctx, void *ptr, size_t size, void **mr) {
  if (mr == nullptr || (ptr == nullptr && size != 0))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: mem_register: %s is NULL", mr ? "ptr" : "mr");
  auto *r = new Registration{kRegistrationMagic, static_cast<char *>(ptr), size};
  ctx->registrations.insert(r);
  *mr = r;
  return SMD_TRANSPORT_OK;
}

static Registration *as_registration(Context *ctx, void *mr) {
  auto *r = static_cast<Registration *>(mr);
  return ctx->registrations.count(r) != 0 ? r : nullptr;
}

Status mem_deregister(Context *ctx, void *mr) {
  Registration *r = as_registration(ctx, mr);
  if (r == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "shm: mem_deregister: %p is not a registration of this context", mr);
  ctx->registrations.erase(r);
  r->magic = 0;
  delete r;
  return SMD_TRANSPORT_OK;
}

Status mem_pack(Context *ctx, void *mr, void *buf, size_t *size) {
  Registration *r = as_registration(ctx, mr);
  if (r == nullptr || size == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: mem_pack: %s",
                r ? "size is NULL" : "unknown registration");
  if (buf == nullptr || *size < sizeof(RemoteKey)) {
    size_t had = buf ? *size : 0;
    *size = sizeof(RemoteKey);
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: remote key buffer of %zu bytes, need %zu",
                had, sizeof(RemoteKey));
  }
  RemoteKey k{kRemoteKeyMagic, int32_t(ctx->pid), 0, reinterpret_cast<uintptr_t>(r->ptr), r->size};
  memcpy(buf, &k, sizeof k);
  *size = sizeof k;
  return SMD_TRANSPORT_OK;
}

static Status check_key(Context *ctx, Endpoint *ep, uint64_t remote, const void *rkey,
                        size_t rkey_size, size_t size) {
  RemoteKey k;
  if (Status s =
          read_peer_blob(ctx, ep, rkey, rkey_size, kRemoteKeyMagic, "iget: ", "remote key", &k))
    return s;
  return check_remote_range(ctx, "shm: iget", remote, size, k.addr, k.size, ep->peer);
}

Status rma_get(Context *ctx, Endpoint *ep, void *local, uint64_t remote, const void *rkey,
               size_t rkey_size, size_t size, void **request) {
  *request = nullptr;
  if (rkey != nullptr)
    if (Status s = check_key(ctx, ep, remote, rkey, rkey_size, size)) return s;
  if (local == nullptr && size != 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: iget: local is NULL");
  if (ep->dead) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  if (size == 0) return SMD_TRANSPORT_OK;
  if (ep->self) {
    memcpy(local, reinterpret_cast<const void *>(remote), size);
    return SMD_TRANSPORT_OK;
  }
  if (ep->cma) {
    long n = cma_read(ep->pid, local, remote, size);
    if (n >= 0) return SMD_TRANSPORT_OK;
    if (n == -ESRCH) {
      peer_died(ctx, ep, "exited");
      return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
    }
    if (n != -EPERM && n != -EACCES && n != -ENOSYS)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                  "shm: iget of %zu bytes at 0x%llx of rank %d (pid %d): %s", size,
                  (unsigned long long)remote, ep->peer, int(ep->pid), strerror(int(-n)));
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "shm: process_vm_readv from rank %d denied (%s); igets from it "
             "go through the ring",
             ep->peer, strerror(int(-n)));
    ep->cma = false;
  }
  Request *r = request_start(ctx, ep, ReqKind::kGet, local, size, 0);
  r->want = size;
  r->phase = Phase::kRecvStream;
  send_control(ctx, ep, kGetReq, r->id(), size, remote);
  *request = r;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
