// Provider defects the plugin works around. Provider parameters are read
// from the environment when libfabric initialises (the first fi_getinfo
// of the process), so these run before that; a value the user set wins.
#include <rdma/fabric.h>

#include <cstdlib>

#include "context.h"

namespace smd_efa {

void apply_provider_quirks(Context *ctx) {
  // tcp;ofi_rxm before libfabric 1.19 (ofiwg/libfabric#8274): with dynamic
  // receive buffers, a message larger than the posted receive fails the
  // tcp connection instead of completing FI_ETRUNC, and every later
  // message to that peer is lost. Without them rxm truncates properly.
  if (FI_VERSION_LT(fi_version(), FI_VERSION(1, 19)) &&
      getenv("FI_OFI_RXM_ENABLE_DYN_RBUF") == nullptr) {
    setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 0);
    log_line(ctx, SMD_TRANSPORT_LOG_TRACE,
             "efa: libfabric %u.%u: FI_OFI_RXM_ENABLE_DYN_RBUF=0 (truncated "
             "receives would break tcp connections)",
             FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
  }
}

}  // namespace smd_efa
