#include "system_info.h"

#include <dirent.h>
#include <sys/stat.h>
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

// Every /dev/shm path some visible process maps or holds open.
static std::set<std::string> dev_shm_in_use() {
  std::set<std::string> used;
  DIR *proc = opendir("/proc");
  if (proc == nullptr) return used;
  char path[600], target[600], line[1024];
  while (struct dirent *p = readdir(proc)) {
    if (p->d_name[0] < '0' || p->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/maps", p->d_name);
    if (FILE *f = fopen(path, "re")) {
      while (fgets(line, sizeof line, f) != nullptr)
        if (char *at = strstr(line, "/dev/shm/")) {
          at[strcspn(at, " \n")] = '\0';
          used.insert(at + strlen("/dev/shm/"));
        }
      fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%s/fd", p->d_name);
    DIR *fds = opendir(path);
    if (fds == nullptr) continue;
    while (struct dirent *fd = readdir(fds)) {
      snprintf(path, sizeof path, "/proc/%s/fd/%s", p->d_name, fd->d_name);
      ssize_t n = readlink(path, target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      if (strncmp(target, "/dev/shm/", 9) == 0) used.insert(target + 9);
    }
    closedir(fds);
  }
  closedir(proc);
  return used;
}

std::vector<std::string> orphaned_dev_shm(const std::vector<std::string> &names) {
  std::set<std::string> used = dev_shm_in_use();
  std::vector<std::string> orphans;
  for (const std::string &n : names) {
    struct stat st;
    std::string path = "/dev/shm/" + n;
    if (stat(path.c_str(), &st) != 0) continue;  // gone meanwhile
    if (st.st_uid != geteuid() || used.count(n) != 0) continue;
    orphans.push_back(n);
  }
  return orphans;
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
      if (is_shared_memory(target)) found.insert(std::string("fd ") + ent->d_name + " " + target);
    }
    closedir(d);
  }
  return std::vector<std::string>(found.begin(), found.end());
}

}  // namespace tcheck
