#include "shared_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace smd_shm {

void SharedMapping::reset() {
  if (base_ != nullptr) munmap(base_, size_);
  if (fd_ >= 0) close(fd_);
  base_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

void shared_name(char *out, size_t cap, const char *what, uint64_t id) {
  snprintf(out, cap, "smd-%s-%016llx", what, (unsigned long long)id);
}

FileError create_shared(const char *name, size_t size, SharedMapping *out) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return {"memfd_create", errno};
  if (ftruncate(fd, off_t(size)) != 0) {
    int err = errno;
    close(fd);
    return {"ftruncate", err};
  }
  void *base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    close(fd);
    return {"mmap", err};
  }
  out->adopt(base, size, fd);
  return {};
}

// readlink of a memfd reads "/memfd:<name> (deleted)".
static bool names_match(int fd, const char *name) {
  char link[64], target[512];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return false;
  target[n] = '\0';
  char expect[320];
  snprintf(expect, sizeof expect, "/memfd:%s ", name);
  return strncmp(target, expect, strlen(expect)) == 0;
}

FileError open_shared(pid_t pid, int fd, const char *name, size_t size, SharedMapping *out,
                      size_t *actual_size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", int(pid), fd);
  int mine = open(path, O_RDWR | O_CLOEXEC);
  if (mine < 0) return {"open", errno};
  if (!names_match(mine, name)) {
    close(mine);
    return {"name check", ESTALE};
  }
  struct stat st;
  if (fstat(mine, &st) != 0) {
    int err = errno;
    close(mine);
    return {"fstat", err};
  }
  if (size_t(st.st_size) < size) {
    close(mine);
    return {"size check", ERANGE};
  }
  size_t map_size = size_t(st.st_size);
  void *base = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
  int err = errno;
  close(mine);
  if (base == MAP_FAILED) return {"mmap", err};
  out->adopt(base, map_size, -1);
  if (actual_size != nullptr) *actual_size = map_size;
  return {};
}

uint64_t random_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, GRND_NONBLOCK) == ssize_t(sizeof id) && id != 0) return id;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  id = uint64_t(ts.tv_nsec) ^ (uint64_t(ts.tv_sec) << 30) ^ (uint64_t(getpid()) << 40);
  id ^= id >> 29;
  id *= 0xbf58476d1ce4e5b9ull;
  return id ^ (id >> 32);
}

}  // namespace smd_shm
