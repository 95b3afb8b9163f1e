// Choosing the libfabric provider (SMD_EFA_PROVIDER, SMD_EFA_DOMAIN) and
// the richest set of capabilities it grants.
//
//   unset or "auto"  efa when an EFA device is present, else the first
//                    provider in libfabric's own order (hardware first)
//                    that opens reliable tagged endpoints (FI_EP_RDM +
//                    FI_TAGGED); shm is skipped when the world spans nodes
//   a name           that provider: "tcp;ofi_rxm", or its core name "tcp";
//                    "efa" insists on the EFA device
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "context.h"

namespace smd_efa {

namespace {

constexpr uint32_t kApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
constexpr uint64_t kMrModes =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
constexpr uint64_t kRmaCaps = FI_RMA | FI_READ | FI_REMOTE_READ;
// Framed providers (framing.cc): the largest first part of a message,
// and so the size of every receive's bounce buffer.
constexpr size_t kFrameBytes = 4096;

struct InfoList {
  struct fi_info *head = nullptr;
  ~InfoList() {
    if (head != nullptr) fi_freeinfo(head);
  }
};

struct Wanted {
  const char *prov = nullptr;
  const char *fabric = nullptr;
  const char *domain = nullptr;
};

// Hints every query shares: reliable tagged endpoints, send-after-send
// ordering (same-tag messages match in the order sent), operation
// contexts we provide, and every registration mode the plugin handles.
int query(uint64_t caps, uint64_t mr_mode, const Wanted &w, InfoList *out) {
  struct fi_info *h = fi_allocinfo();
  if (h == nullptr) return -FI_ENOMEM;
  h->caps = caps;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->ep_attr->type = FI_EP_RDM;
  h->domain_attr->mr_mode = int(mr_mode);
  h->domain_attr->threading = FI_THREAD_DOMAIN;  // the core serialises calls
  h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS;
  if (w.prov != nullptr) h->fabric_attr->prov_name = strdup(w.prov);
  if (w.fabric != nullptr) h->fabric_attr->name = strdup(w.fabric);
  if (w.domain != nullptr) h->domain_attr->name = strdup(w.domain);
  int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, h, &out->head);
  fi_freeinfo(h);
  return rc;
}

std::string core_name(const char *prov) {
  const char *semi = strchr(prov, ';');
  return semi != nullptr ? std::string(prov, size_t(semi - prov)) : std::string(prov);
}

bool local_only_name(const char *prov) { return core_name(prov) == "shm"; }

// Under "auto": efa first, then libfabric's order.
bool is_efa(const char *prov) { return core_name(prov) == "efa"; }

bool name_matches(const char *prov, const std::string &want) {
  return want == prov || want == core_name(prov);
}

std::string provider_list(struct fi_info *list) {
  std::vector<std::string> seen;
  for (struct fi_info *i = list; i != nullptr; i = i->next) {
    std::string n = i->fabric_attr->prov_name;
    bool dup = false;
    for (const std::string &s : seen) dup = dup || s == n;
    if (!dup) seen.push_back(n);
  }
  std::string s;
  for (const std::string &n : seen) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

unsigned tag_bits(uint64_t format) {
  return format == 0 ? 64u : unsigned(64 - __builtin_clzll(format));
}

unsigned bits_for(int32_t n) {
  unsigned b = 0;
  while (b < 31 && (int64_t(1) << b) < int64_t(n)) ++b;
  return b;
}

// A provider and domain worth trying, in the order they are tried.
struct Candidate {
  std::string prov, fabric, domain;
};

std::vector<Candidate> candidates(struct fi_info *all, const Config &cfg, int32_t node_count,
                                  bool automatic) {
  std::vector<Candidate> efa, rest;
  for (struct fi_info *i = all; i != nullptr; i = i->next) {
    const char *prov = i->fabric_attr->prov_name;
    if (!cfg.domain.empty() && cfg.domain != i->domain_attr->name) continue;
    if (automatic ? local_only_name(prov) && node_count > 1 : !name_matches(prov, cfg.provider))
      continue;
    Candidate c{prov, i->fabric_attr->name, i->domain_attr->name};
    std::vector<Candidate> &to = automatic && is_efa(prov) ? efa : rest;
    bool seen = false;
    for (const Candidate &o : to)
      seen = seen || (o.prov == c.prov && o.fabric == c.fabric && o.domain == c.domain);
    if (!seen) to.push_back(c);
  }
  efa.insert(efa.end(), rest.begin(), rest.end());
  return efa;
}

// The richest capability set the candidate grants: directed receives and
// RMA reads if it can.
bool richest(const Candidate &c, const Config &cfg, InfoList *chosen) {
  Wanted w{c.prov.c_str(), c.fabric.c_str(), c.domain.c_str()};
  uint64_t directed = cfg.directed_recv ? FI_DIRECTED_RECV : 0;
  const uint64_t ladder[] = {FI_TAGGED | directed | kRmaCaps, FI_TAGGED | directed,
                             FI_TAGGED | kRmaCaps, FI_TAGGED};
  for (uint64_t caps : ladder)
    // Without FI_MR_LOCAL first: a provider that registers by itself
    // watches the memory it registered (its cache has a memory monitor).
    for (uint64_t mr : {kMrModes & ~uint64_t(FI_MR_LOCAL), kMrModes}) {
      if (query(caps, mr, w, chosen) == 0) return true;
      chosen->head = nullptr;
    }
  return false;
}

}  // namespace

Status select_provider(Context *ctx, struct fi_info **out) {
  *out = nullptr;
  const Config &cfg = ctx->cfg;
  apply_provider_quirks(ctx);
  InfoList all;
  int rc = query(FI_TAGGED, kMrModes, Wanted{}, &all);
  if (rc != 0 && rc != -FI_ENODATA)
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "efa: fi_getinfo failed: %s", fi_strerror(-rc));
  const bool automatic = cfg.provider.empty() || cfg.provider == "auto";
  std::vector<Candidate> list = candidates(all.head, cfg, ctx->node_count, automatic);
  InfoList chosen;
  const Candidate *pick = nullptr;
  for (const Candidate &c : list)
    if (richest(c, cfg, &chosen)) {
      pick = &c;
      break;
    }
  if (pick == nullptr) {
    const char *dom = cfg.domain.empty() ? "" : " in domain ";
    const char *what = !list.empty() ? "refuses reliable tagged endpoints with send-after-send "
                                       "ordering"
                       : automatic   ? "no usable provider"
                                     : "no such provider";
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                "efa: SMD_EFA_PROVIDER=%s%s%s: %s%s; libfabric offers reliable tagged "
                "endpoints through: %s",
                automatic ? "auto" : cfg.provider.c_str(), dom, cfg.domain.c_str(), what,
                automatic && ctx->node_count > 1 ? " (shm reaches one node only)" : "",
                provider_list(all.head).c_str());
  }
  const std::string prov = pick->prov, domain = pick->domain;
  Wanted w{prov.c_str(), pick->fabric.c_str(), domain.c_str()};
  InfoList remote;
  bool remote_comm = query(FI_TAGGED | FI_REMOTE_COMM, kMrModes, w, &remote) == 0;
  if (!remote_comm && ctx->node_count > 1)
    // Named on purpose: the "nodes" may be faked on one machine (SMD_NODE_ID).
    log_line(ctx, SMD_TRANSPORT_LOG_WARN,
             "efa: provider %s reaches only processes of this machine, but the world "
             "spans %d nodes",
             prov.c_str(), ctx->node_count);

  struct fi_info *info = fi_dupinfo(chosen.head);
  if (info == nullptr) return fail(ctx, SMD_TRANSPORT_ERR_NO_MEMORY, "efa: fi_dupinfo failed");
  info->next = nullptr;  // fi_dupinfo copies one entry

  Provider &p = ctx->prov;
  p.name = prov;
  p.shm = local_only_name(prov.c_str());
  p.domain = domain;
  p.directed_recv = (info->caps & FI_DIRECTED_RECV) != 0;
  p.rma = (info->caps & FI_RMA) != 0 && (info->caps & FI_READ) != 0;
  p.remote_comm = remote_comm;
  uint64_t mode = uint64_t(info->domain_attr->mr_mode);
  p.mr_local = (mode & FI_MR_LOCAL) != 0 || cfg.force_mr_local;
  p.mr_virt_addr = (mode & FI_MR_VIRT_ADDR) != 0;
  p.mr_prov_key = (mode & FI_MR_PROV_KEY) != 0;
  p.mr_endpoint = (mode & FI_MR_ENDPOINT) != 0;
  p.inject_size = info->tx_attr->inject_size;
  p.max_msg_size = info->ep_attr->max_msg_size;

  // Framing needs room for a header and some payload in an injection.
  p.framed = truncation_unsafe(p) && p.inject_size >= 64;
  p.frame = p.framed ? std::min<size_t>(p.inject_size, kFrameBytes) : 0;

  // The tag on the wire: the core's bits (framed: a cookie of as many),
  // the sender's rank above them without directed receives, and the two
  // top bits of framing.
  unsigned bits = tag_bits(info->ep_attr->mem_tag_format);
  unsigned need = SMD_TRANSPORT_TAG_BITS;
  if (!p.directed_recv) {
    p.rank_shift = SMD_TRANSPORT_TAG_BITS;
    need += bits_for(ctx->world_size);
  }
  if (p.framed) need = need > 62 ? 65 : 64;
  if (bits < need) {
    fi_freeinfo(info);
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                "efa: provider %s matches %u tag bits; %u are needed%s", prov.c_str(), bits, need,
                p.directed_recv ? "" : " (the sender's rank rides in the tag)");
  }

  const char *why = !automatic ? "named by SMD_EFA_PROVIDER"
                    : is_efa(prov.c_str())
                        ? "SMD_EFA_PROVIDER=auto: an EFA device is present"
                        : "SMD_EFA_PROVIDER=auto: no EFA device; the first reliable tagged "
                          "provider in libfabric's order";
  log_line(ctx, SMD_TRANSPORT_LOG_INFO,
           "efa: provider %s, domain %s (%s; offered: %s); %s receives, %s, "
           "inject <= %zu B, %s%s",
           prov.c_str(), domain.c_str(), why, provider_list(all.head).c_str(),
           p.directed_recv ? "directed" : "rank-in-tag", p.rma ? "RMA reads" : "no RMA",
           p.inject_size, p.mr_local ? "local buffers registered" : "no local registration",
           p.framed ? "; tags matched by the plugin (framed messages)" : "");
  *out = info;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_efa
