// SMD_EFA_* parameters: declared for smd-info (the table's params entry),
// read once at init through host->get_param.
#include <cstring>

#include "context.h"

namespace smd_efa {

const smd_transport_param_t kParams[] = {
    {"SMD_EFA_PROVIDER", "string", "auto",
     "libfabric provider of the efa transport: auto (efa when an EFA device is present, else "
     "the first provider with reliable tagged endpoints), or a name such as tcp;ofi_rxm, tcp "
     "or shm; a name also puts efa first under SMD_TRANSPORT=auto."},
    {"SMD_EFA_DOMAIN", "string", "",
     "libfabric domain (device) of the efa transport; default: the provider's first."},
    {"SMD_EFA_MR_LOCAL", "bool", "0",
     "Make the efa transport register local buffers even where the provider does not require "
     "it (the core then registers every buffer through its registration cache)."},
    {"SMD_EFA_DIRECTED_RECV", "bool", "0",
     "Let the efa transport use the provider's directed receives (FI_DIRECTED_RECV) instead of "
     "carrying the sender's rank in the tag. Only where every rank connects to every peer before "
     "any sends: a message from a peer not yet in the receiver's address vector never matches a "
     "directed receive, and the core connects on first use."},
    {"SMD_EFA_LIVENESS", "bool", "1",
     "Let the efa transport watch each peer through a TCP socket, so a dead peer fails "
     "requests instead of hanging them."},
    {nullptr, nullptr, nullptr, nullptr},
};

// Empty counts as unset.
static const char *param(Context *ctx, const char *name) {
  const char *v = smd_plugin::param(ctx, name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

static Status read_bool(Context *ctx, const char *name, bool *out) {
  const char *v = param(ctx, name);
  if (v == nullptr) return SMD_TRANSPORT_OK;
  if (strcmp(v, "1") == 0) *out = true;
  else if (strcmp(v, "0") == 0) *out = false;
  else return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s=%s: expected 0 or 1", name, v);
  return SMD_TRANSPORT_OK;
}

Status read_config(Context *ctx, Config *cfg) {
  if (const char *v = param(ctx, "SMD_EFA_PROVIDER")) cfg->provider = v;
  if (const char *v = param(ctx, "SMD_EFA_DOMAIN")) cfg->domain = v;
  if (Status s = read_bool(ctx, "SMD_EFA_MR_LOCAL", &cfg->force_mr_local)) return s;
  if (Status s = read_bool(ctx, "SMD_EFA_DIRECTED_RECV", &cfg->directed_recv)) return s;
  return read_bool(ctx, "SMD_EFA_LIVENESS", &cfg->liveness);
}

}  // namespace smd_efa
