#include "core/plugin/network_order.h"

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <cstring>

#include "core/util/params.h"

namespace smd {

bool efa_device_present() {
  DIR *d = opendir("/sys/class/infiniband");
  if (!d) return false;
  bool found = false;
  while (struct dirent *e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string link = std::string("/sys/class/infiniband/") + e->d_name + "/device/driver";
    char target[PATH_MAX];
    ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    if (strcmp(base ? base + 1 : target, "efa") == 0) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

NetworkOrder network_plugin_order() {
  std::string provider = param_string("SMD_EFA_PROVIDER");
  if (efa_device_present()) return {{"efa", "ucx"}, "an EFA device is present"};
  if (!provider.empty() && provider != "auto")
    return {{"efa", "ucx"}, "SMD_EFA_PROVIDER=" + provider + " asks for libfabric"};
  return {{"ucx", "efa"}, "no EFA device"};
}

}  // namespace smd
