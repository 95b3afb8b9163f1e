#include "core/coll/agree/call_fingerprint.h"

#include <cstring>

#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/fnv1a.h"

namespace smd {

bool CallFingerprint::operator<(const CallFingerprint &o) const {
  return memcmp(this, &o, sizeof o) < 0;
}
bool CallFingerprint::operator==(const CallFingerprint &o) const {
  return memcmp(this, &o, sizeof o) == 0;
}

CallFingerprint fingerprint_of(const CollArgs &a, uint64_t seq) {
  CallFingerprint f;
  memset(static_cast<void *>(&f), 0, sizeof f);  // padding too: fingerprints compare as bytes
  f.kind = static_cast<int32_t>(a.kind);
  // alltoallv's counts legitimately differ between ranks: its count stays
  // 0 here and its pairs check their sizes themselves (alltoallv.cc).
  if (a.kind != CollKind::kBarrier) {
    f.datatype = static_cast<int32_t>(a.datatype);
    if (a.kind != CollKind::kAlltoallv) f.count = a.count;
  }
  bool reduces = a.kind == CollKind::kAllreduce || a.kind == CollKind::kReduceScatter ||
                 a.kind == CollKind::kReduce || a.kind == CollKind::kReduceScatterv;
  if (reduces) f.op = static_cast<int32_t>(a.op);
  if (a.kind == CollKind::kBroadcast || a.kind == CollKind::kReduce || per_rank_blocks(a.kind))
    f.root = a.root;  // v-collectives: the counts' digest
  f.subject = a.subject;
  f.seq = seq;
  return f;
}

std::string describe(const CallFingerprint &f, bool with_seq) {
  CollKind kind = static_cast<CollKind>(f.kind);
  std::string s = coll_name(kind);
  if (kind == CollKind::kAlltoallv) {
    s += format(" of %s", datatype_name(static_cast<smd_datatype_t>(f.datatype)));
  } else if (kind != CollKind::kBarrier) {
    s += format(" of %llu %s", static_cast<unsigned long long>(f.count),
                datatype_name(static_cast<smd_datatype_t>(f.datatype)));
    if (kind == CollKind::kAllreduce || kind == CollKind::kReduceScatter ||
        kind == CollKind::kReduce || kind == CollKind::kReduceScatterv)
      s += format(" (op %s)", op_name(static_cast<smd_op_t>(f.op)));
    if (kind == CollKind::kBroadcast || kind == CollKind::kReduce)
      s += format(" from root %d", f.root);
    if (per_rank_blocks(kind))
      s += format(" with counts digest %08x", static_cast<uint32_t>(f.root));
  }
  if (f.subject)
    s += format(" for subject %08x (a group's calls or sharded parameters)", f.subject);
  if (with_seq) s += format(" (call %llu)", static_cast<unsigned long long>(f.seq));
  return s;
}

uint32_t tag_salt_of(const CallFingerprint &f) {
  CallFingerprint g = f;
  g.seq = 0;
  // FNV-1a over the bytes, folded to the 6 bits the tag leaves free.
  uint64_t h = Fnv1a64().mix_bytes(&g, sizeof g).value();
  h ^= h >> 32;
  h ^= h >> 16;
  h ^= h >> 8;
  return static_cast<uint32_t>(h & 0x3F);
}

}  // namespace smd
