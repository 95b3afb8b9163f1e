// probe(): how suitable efa is on this machine, for SMD_TRANSPORT=auto.
// It leads where it is the right choice: an EFA device is present, or
// SMD_EFA_PROVIDER names a provider (the user asked for libfabric).
// Elsewhere it follows ucx, which drives InfiniBand/RoCE natively, and
// over TCP the two are close (docs/PLUGINS.md). Looks only at sysfs and
// the variable: no libfabric call, which would load its providers.
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "context.h"

namespace smd_efa {

// True when /sys/class/infiniband lists a device bound to the efa driver.
static bool efa_device_present() {
  DIR *d = opendir("/sys/class/infiniband");
  if (d == nullptr) return false;
  bool found = false;
  while (struct dirent *e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string link = std::string("/sys/class/infiniband/") + e->d_name + "/device/driver";
    char target[PATH_MAX];
    ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    if (strcmp(base != nullptr ? base + 1 : target, "efa") == 0) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

int32_t probe_machine(const smd_transport_host_t *host, char *why, size_t why_size) {
  if (efa_device_present()) {
    snprintf(why, why_size, "an EFA device is present");
    return 100;
  }
  const char *provider = host->get_param(host->host, "SMD_EFA_PROVIDER");
  if (provider != nullptr && *provider != '\0' && strcmp(provider, "auto") != 0) {
    snprintf(why, why_size, "SMD_EFA_PROVIDER=%s asks for libfabric", provider);
    return 90;
  }
  snprintf(why, why_size, "no EFA device");
  return 30;
}

}  // namespace smd_efa
