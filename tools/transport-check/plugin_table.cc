#include "plugin_table.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

namespace tcheck {

namespace {

struct Entry {
  const char *name;
  size_t offset;
  size_t end;  // offset + size: the struct_size that covers it
};

#define TCHECK_ENTRY(field)                                                            \
  Entry {                                                                              \
#field, offsetof(smd_transport_v1_t, field),                                       \
        offsetof(smd_transport_v1_t, field) + sizeof(((smd_transport_v1_t *)0)->field) \
  }

const Entry kRequired[] = {
    TCHECK_ENTRY(init),           TCHECK_ENTRY(finalize),   TCHECK_ENTRY(get_address),
    TCHECK_ENTRY(connect),        TCHECK_ENTRY(disconnect), TCHECK_ENTRY(mem_register),
    TCHECK_ENTRY(mem_deregister), TCHECK_ENTRY(isend),      TCHECK_ENTRY(irecv),
    TCHECK_ENTRY(test),           TCHECK_ENTRY(cancel),     TCHECK_ENTRY(progress),
};

bool entry_set(const smd_transport_v1_t &t, const Entry &e) {
  void *p = nullptr;
  memcpy(&p, reinterpret_cast<const char *>(&t) + e.offset, sizeof p);
  return p != nullptr;
}

std::string base_name(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

const char *status_name(smd_transport_status_t s) { return smd_transport_status_string(s); }

std::string caps_string(uint64_t caps) {
  static const struct {
    uint64_t bit;
    const char *name;
  } kNames[] = {
      {SMD_TRANSPORT_CAP_INTRA_NODE_ONLY, "INTRA_NODE_ONLY"},
      {SMD_TRANSPORT_CAP_THREAD_SAFE, "THREAD_SAFE"},
      {SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED, "REGISTRATION_REQUIRED"},
      {SMD_TRANSPORT_CAP_RMA, "RMA"},
      {SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS, "RMA_ANY_ADDRESS"},
      {SMD_TRANSPORT_CAP_SEGMENTS, "SEGMENTS"},
      {SMD_TRANSPORT_CAP_DEVICE_MEMORY, "DEVICE_MEMORY"},
  };
  std::string s;
  for (const auto &n : kNames)
    if ((caps & n.bit) != 0) {
      if (!s.empty()) s += '|';
      s += n.name;
    }
  return s.empty() ? "none" : s;
}

bool load_plugin(const std::string &path, LoadedPlugin *out, std::vector<std::string> *problems) {
  std::string name = base_name(path);
  auto problem = [&](const std::string &what) { problems->push_back(name + ": " + what); };
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *err = dlerror();
    problem(std::string("cannot load: ") + (err ? err : "unknown error"));
    return false;
  }
  auto entry = reinterpret_cast<smd_transport_entry_v1_t>(dlsym(handle, SMD_TRANSPORT_ENTRY_V1));
  if (entry == nullptr) {
    problem("missing symbol " SMD_TRANSPORT_ENTRY_V1);
    dlclose(handle);
    return false;
  }
  const smd_transport_v1_t *t = entry();
  if (t == nullptr) {
    problem(SMD_TRANSPORT_ENTRY_V1 "() returned NULL");
    dlclose(handle);
    return false;
  }
  if (t->abi_version != SMD_TRANSPORT_ABI_VERSION)
    problem("ABI version " + std::to_string(t->abi_version) + ", expected " +
            std::to_string(SMD_TRANSPORT_ABI_VERSION));
  size_t need = kRequired[sizeof kRequired / sizeof kRequired[0] - 1].end;
  if (t->struct_size < need)
    problem("table struct_size " + std::to_string(t->struct_size) + " is smaller than the " +
            std::to_string(need) + " bytes of the required v1 entries");
  if (!problems->empty()) {
    dlclose(handle);
    return false;
  }
  memcpy(&out->table, t, t->struct_size < sizeof out->table ? t->struct_size : sizeof out->table);
  const smd_transport_v1_t &c = out->table;
  if (c.name == nullptr || c.name[0] == '\0') problem("table has no name");
  for (const Entry &e : kRequired)
    if (!entry_set(c, e)) problem(std::string("entry '") + e.name + "' is NULL");
  if ((c.caps & SMD_TRANSPORT_CAP_RMA) != 0) {
    if (c.mem_pack == nullptr) problem("caps has RMA but entry 'mem_pack' is NULL");
    if (c.iget == nullptr) problem("caps has RMA but entry 'iget' is NULL");
  }
  if ((c.caps & SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS) != 0 && (c.caps & SMD_TRANSPORT_CAP_RMA) == 0)
    problem("caps has RMA_ANY_ADDRESS without RMA");
  if ((c.caps & SMD_TRANSPORT_CAP_SEGMENTS) != 0 &&
      (c.segment_create == nullptr || c.segment_attach == nullptr || c.segment_release == nullptr))
    problem("caps has SEGMENTS but a segment_* entry is NULL");
  if (!problems->empty()) {
    dlclose(handle);
    return false;
  }
  out->path = path;
  out->handle = handle;
  return true;
}

}  // namespace tcheck
