// Choosing the libfabric provider (SMD_EFA_PROVIDER, SMD_EFA_DOMAIN) and
// the richest set of capabilities it grants.
//
//   unset or "efa"  the efa provider only; without an EFA device init fails,
//                   so SMD_TRANSPORT=auto moves on to the next plugin (ucx)
//   "auto"          efa if present, else the best reliable tagged (RDM)
//                   provider: other hardware providers, then tcp;ofi_rxm,
//                   then net, sockets, udp;ofi_rxd; shm only on one node
//   a name          that provider: "tcp;ofi_rxm", or its core name "tcp"
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
// Framed providers: messages up to this size travel whole, and receives
// smaller than it take a bounce buffer of this size.
constexpr size_t kFrameBytes = 512;

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

// Order of preference under "auto": lower is better.
int preference(const char *prov) {
  std::string core = core_name(prov);
  std::string full = prov;
  if (core == "efa") return 0;
  if (full == "tcp;ofi_rxm") return 2;
  if (core == "net") return 3;
  if (core == "sockets") return 4;
  if (core == "udp") return 5;
  if (core == "shm") return 6;
  if (core == "tcp") return 2;
  return 1;  // verbs;ofi_rxm, psm3, cxi, opx...: hardware beats emulation
}

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

}  // namespace

Status select_provider(Context *ctx, struct fi_info **out) {
  *out = nullptr;
  const Config &cfg = ctx->cfg;
  apply_provider_quirks(ctx);
  InfoList all;
  int rc = query(FI_TAGGED, kMrModes, Wanted{}, &all);
  if (rc != 0 && rc != -FI_ENODATA)
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "efa: fi_getinfo failed: %s",
                fi_strerror(-rc));
  const bool unset = cfg.provider.empty();
  const std::string want = unset ? "efa" : cfg.provider;
  const bool automatic = want == "auto";

  struct fi_info *pick = nullptr;
  int best = 1 << 30;
  for (struct fi_info *i = all.head; i != nullptr; i = i->next) {
    const char *prov = i->fabric_attr->prov_name;
    if (!cfg.domain.empty() && cfg.domain != i->domain_attr->name) continue;
    if (automatic) {
      if (local_only_name(prov) && ctx->node_count > 1) continue;
      int p = preference(prov);
      if (p < best) {
        best = p;
        pick = i;
      }
    } else if (name_matches(prov, want)) {
      pick = i;
      break;
    }
  }
  if (pick == nullptr) {
    std::string offered = provider_list(all.head);
    const char *dom = cfg.domain.empty() ? "" : " in domain ";
    if (unset)
      return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                  "efa: no efa provider (no EFA device%s%s); libfabric offers "
                  "reliable tagged endpoints through: %s. SMD_EFA_PROVIDER is "
                  "unset, which means the efa provider only; set it to auto or "
                  "a provider name to use another",
                  dom, cfg.domain.c_str(), offered.c_str());
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                "efa: SMD_EFA_PROVIDER=%s%s%s: %s; libfabric offers reliable "
                "tagged endpoints through: %s",
                cfg.provider.c_str(), dom, cfg.domain.c_str(),
                automatic ? "no usable provider" : "no such provider",
                offered.c_str());
  }

  // The richest capability set the chosen provider and domain grant.
  std::string prov = pick->fabric_attr->prov_name;
  std::string fabric = pick->fabric_attr->name;
  std::string domain = pick->domain_attr->name;
  Wanted w{prov.c_str(), fabric.c_str(), domain.c_str()};
  uint64_t directed = cfg.directed_recv ? FI_DIRECTED_RECV : 0;
  const uint64_t ladder[] = {FI_TAGGED | directed | kRmaCaps, FI_TAGGED | directed,
                             FI_TAGGED | kRmaCaps, FI_TAGGED};
  InfoList chosen;
  for (uint64_t caps : ladder) {
    // Without FI_MR_LOCAL first: a provider that registers by itself
    // watches the memory it registered (its cache has a memory monitor).
    for (uint64_t mr : {kMrModes & ~uint64_t(FI_MR_LOCAL), kMrModes}) {
      if (query(caps, mr, w, &chosen) == 0) break;
      chosen.head = nullptr;
    }
    if (chosen.head != nullptr) break;
  }
  if (chosen.head == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                "efa: provider %s (domain %s) refuses reliable tagged "
                "endpoints with send-after-send ordering",
                prov.c_str(), domain.c_str());
  InfoList remote;
  bool remote_comm = query(FI_TAGGED | FI_REMOTE_COMM, kMrModes, w, &remote) == 0;
  if (!remote_comm && ctx->node_count > 1)
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                "efa: provider %s reaches only this node, but the world spans "
                "%d nodes",
                prov.c_str(), ctx->node_count);

  struct fi_info *info = fi_dupinfo(chosen.head);
  if (info == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_NO_MEMORY, "efa: fi_dupinfo failed");
  info->next = nullptr;  // fi_dupinfo copies one entry

  Provider &p = ctx->prov;
  p.name = prov;
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

  // Framing needs a frame of at least a header, sent by injection.
  p.framed = truncation_unsafe(p) && p.inject_size >= 16;
  p.frame = p.framed ? std::min<size_t>(p.inject_size, kFrameBytes) : 0;

  unsigned bits = tag_bits(info->ep_attr->mem_tag_format);
  unsigned need = SMD_TRANSPORT_TAG_BITS;
  if (!p.directed_recv) {
    p.rank_shift = SMD_TRANSPORT_TAG_BITS;
    need += bits_for(ctx->world_size);
  }
  if (p.framed) need = need > 62 ? 65 : 64;  // the top two bits mark frames
  if (bits < need) {
    fi_freeinfo(info);
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED,
                "efa: provider %s matches %u tag bits; %u are needed%s",
                prov.c_str(), bits, need,
                p.directed_recv ? "" : " (the sender's rank rides in the tag)");
  }

  const char *why;
  if (automatic)
    why = best == 0 ? "SMD_EFA_PROVIDER=auto: an EFA device is present"
          : best == 1 ? "SMD_EFA_PROVIDER=auto: no EFA device; a hardware provider ranks first"
                      : "SMD_EFA_PROVIDER=auto: no EFA device; tcp;ofi_rxm ranks before "
                        "net, sockets and udp;ofi_rxd";
  else if (unset)
    why = "SMD_EFA_PROVIDER unset: the efa provider";
  else
    why = "named by SMD_EFA_PROVIDER";
  log_line(ctx, SMD_TRANSPORT_LOG_INFO,
           "efa: provider %s, domain %s (%s; offered: %s); %s receives, %s, "
           "inject <= %zu B, %s%s",
           prov.c_str(), domain.c_str(), why, provider_list(all.head).c_str(),
           p.directed_recv ? "directed" : "rank-in-tag",
           p.rma ? "RMA reads" : "no RMA",
           p.inject_size,
           p.mr_local ? "local buffers registered (cache)" : "no local registration",
           p.framed ? "; messages over the frame size framed (provider truncation unsafe)" : "");
  *out = info;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_efa
