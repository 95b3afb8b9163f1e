// Library-level queries and settings: versions, result names, last error,
// datatypes, the calling thread's interrupt fd.
#include <smd.h>

#include "core/api/guard.h"
#include "core/exec/interrupt.h"
#include "core/util/dtype.h"

using namespace smd;

extern "C" {

SMD_API const char *smd_result_string(smd_result_t result) {
  switch (result) {
    case SMD_SUCCESS: return "SMD_SUCCESS";
    case SMD_IN_PROGRESS: return "SMD_IN_PROGRESS";
    case SMD_ERR_INVALID_ARGUMENT: return "SMD_ERR_INVALID_ARGUMENT";
    case SMD_ERR_INVALID_USAGE: return "SMD_ERR_INVALID_USAGE";
    case SMD_ERR_NO_MEMORY: return "SMD_ERR_NO_MEMORY";
    case SMD_ERR_TIMEOUT: return "SMD_ERR_TIMEOUT";
    case SMD_ERR_PEER_FAILURE: return "SMD_ERR_PEER_FAILURE";
    case SMD_ERR_ABORTED: return "SMD_ERR_ABORTED";
    case SMD_ERR_MISMATCH: return "SMD_ERR_MISMATCH";
    case SMD_ERR_TRANSPORT: return "SMD_ERR_TRANSPORT";
    case SMD_ERR_PLUGIN: return "SMD_ERR_PLUGIN";
    case SMD_ERR_NOT_SUPPORTED: return "SMD_ERR_NOT_SUPPORTED";
    case SMD_ERR_SYSTEM: return "SMD_ERR_SYSTEM";
    case SMD_ERR_BOOTSTRAP: return "SMD_ERR_BOOTSTRAP";
    case SMD_ERR_TRUNCATED: return "SMD_ERR_TRUNCATED";
    case SMD_ERR_INTERNAL: return "SMD_ERR_INTERNAL";
    case SMD_ERR_REVOKED: return "SMD_ERR_REVOKED";
    default: break;
  }
  return "SMD_ERR_UNKNOWN";
}

SMD_API const char *smd_last_error(void) { return last_error(); }

SMD_API smd_result_t smd_get_version(int *major, int *minor, int *patch) {
  if (major) *major = SMD_VERSION_MAJOR;
  if (minor) *minor = SMD_VERSION_MINOR;
  if (patch) *patch = SMD_VERSION_PATCH;
  clear_last_error();
  return SMD_SUCCESS;
}

SMD_API smd_result_t smd_datatype_size(smd_datatype_t datatype, size_t *size) {
  return guarded("smd_datatype_size", [&] {
    if (!size) fail(SMD_ERR_INVALID_ARGUMENT, "size is NULL");
    if (!valid_datatype(datatype))
      fail(SMD_ERR_INVALID_ARGUMENT, "unknown datatype %d", static_cast<int>(datatype));
    *size = datatype_size(datatype);
  });
}

SMD_API smd_result_t smd_init_options_init(smd_init_options_t *options) {
  return guarded("smd_init_options_init", [&] {
    if (!options) fail(SMD_ERR_INVALID_ARGUMENT, "options is NULL");
    smd_init_options_t defaults = SMD_INIT_OPTIONS_INIT;
    *options = defaults;
  });
}

SMD_API smd_result_t smd_set_interrupt_fd(int fd) {
  return guarded("smd_set_interrupt_fd", [&] {
    if (fd < -1)
      fail(SMD_ERR_INVALID_ARGUMENT, "fd %d: expected an open file descriptor, or -1", fd);
    set_interrupt_fd(fd);
  });
}

}  // extern "C"
