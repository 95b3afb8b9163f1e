// libfabric error codes as the plugin ABI sees them.
#include <rdma/fi_errno.h>

#include <cerrno>

#include "context.h"

namespace smd_efa {

bool is_peer_error(int err) {
  switch (err < 0 ? -err : err) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_ESHUTDOWN:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case FI_EHOSTDOWN:
    case FI_ETIMEDOUT:
    case EPIPE:
    case FI_EIO:            // tcp: the connection failed under the operation
    case FI_EADDRNOTAVAIL:  // efa: the peer's address handle is gone
      return true;
    default: return false;
  }
}

Status status_of_fi_error(int err) {
  if (err < 0) err = -err;
  if (is_peer_error(err)) return SMD_TRANSPORT_ERR_PEER;
  switch (err) {
    case FI_ETRUNC: return SMD_TRANSPORT_ERR_TRUNCATED;
    case FI_ECANCELED: return SMD_TRANSPORT_ERR_CANCELED;
    case FI_ENOMEM: return SMD_TRANSPORT_ERR_NO_MEMORY;
    case FI_EINVAL:
    case FI_EMSGSIZE:
    case FI_EBADF:
    case FI_EFAULT: return SMD_TRANSPORT_ERR_INVALID;
    case FI_ENOSYS:
    case FI_EOPNOTSUPP: return SMD_TRANSPORT_ERR_UNSUPPORTED;
    default: return SMD_TRANSPORT_ERR_SYSTEM;
  }
}

}  // namespace smd_efa
