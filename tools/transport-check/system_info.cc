#include "system_info.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace tcheck {

uint64_t memory_available_bytes() {
  FILE *f = fopen("/proc/meminfo", "re");
  if (f == nullptr) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (fgets(line, sizeof line, f) != nullptr)
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  fclose(f);
  return uint64_t(kb) * 1024;
}

std::vector<std::string> list_dev_shm() {
  std::vector<std::string> names;
  DIR *d = opendir("/dev/shm");
  if (d == nullptr) return names;
  while (struct dirent *ent = readdir(d))
    if (strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0)
      names.push_back(ent->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> added_names(const std::vector<std::string> &before,
                                     const std::vector<std::string> &after) {
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  return added;
}

static bool is_shared_memory(const char *path) {
  return strstr(path, "/dev/shm/") != nullptr || strstr(path, "memfd:") != nullptr;
}

std::vector<std::string> shared_memory_held() {
  std::set<std::string> found;
  if (FILE *f = fopen("/proc/self/maps", "re")) {
    char line[1024];
    while (fgets(line, sizeof line, f) != nullptr) {
      char *path = strchr(line, '/');
      if (path == nullptr) continue;
      path[strcspn(path, "\n")] = '\0';
      if (is_shared_memory(path)) found.insert(std::string("mapping ") + path);
    }
    fclose(f);
  }
  if (DIR *d = opendir("/proc/self/fd")) {
    while (struct dirent *ent = readdir(d)) {
      char link[300], target[512];
      snprintf(link, sizeof link, "/proc/self/fd/%s", ent->d_name);
      ssize_t n = readlink(link, target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      if (is_shared_memory(target))
        found.insert(std::string("fd ") + ent->d_name + " " + target);
    }
    closedir(d);
  }
  return std::vector<std::string>(found.begin(), found.end());
}

}  // namespace tcheck
