// SMD_EFA_* parameters, read once at init through host->get_param.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "context.h"

namespace smd_efa {

// Empty counts as unset.
static const char *param(Context *ctx, const char *name) {
  const char *v = smd_plugin::param(ctx, name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

static Status read_bool(Context *ctx, const char *name, bool *out) {
  const char *v = param(ctx, name);
  if (v == nullptr) return SMD_TRANSPORT_OK;
  if (strcmp(v, "1") == 0)
    *out = true;
  else if (strcmp(v, "0") == 0)
    *out = false;
  else
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s=%s: expected 0 or 1", name, v);
  return SMD_TRANSPORT_OK;
}

Status read_config(Context *ctx, Config *cfg) {
  if (const char *v = param(ctx, "SMD_EFA_PROVIDER")) cfg->provider = v;
  if (const char *v = param(ctx, "SMD_EFA_DOMAIN")) cfg->domain = v;
  if (const char *v = param(ctx, "SMD_EFA_MR_CACHE")) {
    char *end = nullptr;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n > 1000000)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                  "SMD_EFA_MR_CACHE=%s: expected a number of registrations "
                  "(0 .. 1000000)", v);
    cfg->mr_cache = size_t(n);
  }
  if (Status s = read_bool(ctx, "SMD_EFA_MR_LOCAL", &cfg->force_mr_local)) return s;
  if (Status s = read_bool(ctx, "SMD_EFA_DIRECTED_RECV", &cfg->directed_recv)) return s;
  return read_bool(ctx, "SMD_EFA_LIVENESS", &cfg->liveness);
}

}  // namespace smd_efa
