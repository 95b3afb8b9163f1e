// The shm provider names each endpoint's shared memory after its process
// ("PID:N:M" under /dev/shm) and unlinks it when the endpoint closes. A
// peer killed outright never does, so a survivor reclaims the region of a
// peer it saw die, once that process is really gone: the name then
// belongs to no one (a later process can reuse neither the pid's region
// nor its memory). Unlinking leaves existing mappings intact.
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "context.h"

namespace smd_efa {

static bool process_gone(int32_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) == -1 && errno == ESRCH) return true;
  // A zombie (its parent has not reaped it yet) holds no memory any more.
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
  FILE *f = fopen(path, "re");
  if (f == nullptr) return errno == ENOENT;
  bool zombie = false;
  if (fgets(line, sizeof line, f) != nullptr) {
    const char *state = strrchr(line, ')');
    zombie = state != nullptr && (state[2] == 'Z' || state[2] == 'X');
  }
  fclose(f);
  return zombie;
}

void remember_region(Context *ctx, Endpoint *ep, const uint8_t *name, size_t len) {
  if (!ctx->prov.shm || ep->pid <= 0) return;
  const char *text = reinterpret_cast<const char *>(name);
  std::string s(text, strnlen(text, len));
  size_t scheme = s.find("://");
  if (scheme != std::string::npos) s.erase(0, scheme + 3);
  // Only a region that names the peer's own process, and no path.
  if (s.rfind(std::to_string(ep->pid) + ":", 0) == 0 && s.find('/') == std::string::npos)
    ep->region = s;
}

// A killed process may still be tearing down when its sockets close.
static bool gone_soon(int32_t pid) {
  for (int i = 0; i < 40; ++i) {
    if (process_gone(pid)) return true;
    struct timespec nap = {0, 5'000'000};
    nanosleep(&nap, nullptr);
  }
  return false;
}

void reclaim_region(Context *ctx, Endpoint *ep) {
  if (!ep->dead || ep->region.empty()) return;
  if (!gone_soon(ep->pid)) {
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "efa: rank %d (process %d) is still running: its /dev/shm/%s stays", ep->peer,
             int(ep->pid), ep->region.c_str());
    ep->region.clear();
    return;
  }
  struct stat st;
  std::string path = "/dev/shm/" + ep->region;
  if (stat(path.c_str(), &st) == 0 && st.st_uid == geteuid() &&
      shm_unlink(("/" + ep->region).c_str()) == 0)
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "efa: removed /dev/shm/%s, left by rank %d (process %d, gone)", ep->region.c_str(),
             ep->peer, int(ep->pid));
  ep->region.clear();
}

}  // namespace smd_efa
