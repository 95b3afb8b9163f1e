// UCX status codes of finished operations, in the plugin ABI's terms.
#include "context.h"

namespace smd_ucx {

bool is_peer_failure(ucs_status_t s) {
  switch (s) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_REJECTED:
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_IO_ERROR: return true;
    default: return false;
  }
}

Status status_from_ucs(ucs_status_t s) {
  if (s == UCS_OK) return SMD_TRANSPORT_OK;
  if (s == UCS_INPROGRESS) return SMD_TRANSPORT_IN_PROGRESS;
  if (is_peer_failure(s)) return SMD_TRANSPORT_ERR_PEER;
  switch (s) {
    case UCS_ERR_MESSAGE_TRUNCATED: return SMD_TRANSPORT_ERR_TRUNCATED;
    case UCS_ERR_CANCELED: return SMD_TRANSPORT_ERR_CANCELED;
    case UCS_ERR_NO_MEMORY: return SMD_TRANSPORT_ERR_NO_MEMORY;
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR: return SMD_TRANSPORT_ERR_INVALID;
    case UCS_ERR_UNSUPPORTED: return SMD_TRANSPORT_ERR_UNSUPPORTED;
    case UCS_ERR_NO_DEVICE:
    case UCS_ERR_NO_RESOURCE:
    case UCS_ERR_NO_ELEM:
    case UCS_ERR_BUSY: return SMD_TRANSPORT_ERR_SYSTEM;
    default: return SMD_TRANSPORT_ERR_OTHER;
  }
}

}  // namespace smd_ucx
