#include "core/fusion/group_agreement.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/coll/agree/call_fingerprint.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/fnv1a.h"
#include "core/util/log.h"

namespace smd {

namespace {

constexpr size_t kMostListsRead = 16;

// One call as the store carries it: its index among the group's calls
// and its fingerprint (without subject or sequence number).
struct ListedCall {
  int32_t index = 0;
  int32_t unused = 0;
  CallFingerprint fingerprint;
};

// A call's fingerprint without its subject (the group's digest itself).
CallFingerprint plain_fingerprint(const CollArgs &a) {
  CallFingerprint f = fingerprint_of(a, 0);
  f.subject = 0;
  return f;
}

std::vector<ListedCall> list_of(const std::vector<GroupCall *> &calls) {
  std::vector<ListedCall> out(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    memset(static_cast<void *>(&out[i]), 0, sizeof out[i]);
    out[i].index = calls[i]->index;
    out[i].fingerprint = plain_fingerprint(calls[i]->args);
  }
  return out;
}

std::string key_of(Comm &c, uint64_t group, int rank) {
  return format("%s/group%llu/%d", c.abort_key().c_str(), static_cast<unsigned long long>(group),
                rank);
}

std::string describe_call(const std::vector<ListedCall> &list, size_t k) {
  if (k >= list.size()) return format("no call (its group has %zu collectives here)", list.size());
  return format("call %d of the group, %s", list[k].index, describe(list[k].fingerprint).c_str());
}

}  // namespace

uint32_t group_subject(const std::vector<GroupCall *> &calls) {
  // The fields of the calls' fingerprints in order, then their number,
  // mixed a word at a time from the fields (it runs for every group: a byte
  // at a time, or words reread from the fingerprint's memory, cost
  // microseconds for 64 calls).
  uint64_t h = Fnv1a64::kOffsetBasis;
  auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  };
  auto word = [](int32_t hi, int32_t lo) { return uint64_t(uint32_t(hi)) << 32 | uint32_t(lo); };
  // Every field but seq and subject: one more field needs mixing here.
  static_assert(sizeof(CallFingerprint) == 40, "a new fingerprint field: mix it in");
  for (const GroupCall *g : calls) {
    CallFingerprint f = fingerprint_of(g->args, 0);
    mix(word(f.kind, f.datatype));
    mix(word(f.op, f.root));
    mix(f.count);
  }
  mix(calls.size());
  uint32_t s = static_cast<uint32_t>(h ^ (h >> 32));
  return s ? s : 1;
}

void publish_group_calls(Comm &c, const std::vector<GroupCall *> &calls, uint64_t group) {
  Store *store = c.ctx().store();
  if (!store || c.abort_key().empty() || c.size() < 2) return;
  std::vector<ListedCall> mine = list_of(calls);
  const uint8_t *p = reinterpret_cast<const uint8_t *>(mine.data());
  try {
    store->set(key_of(c, group, c.rank()), Bytes(p, p + mine.size() * sizeof(ListedCall)));
  } catch (const Error &e) {
    SMD_TRACE("coll", "publishing a group's calls: %s", e.what());
  }
}

std::string name_group_difference(Comm &c, const std::vector<GroupCall *> &calls, uint64_t group) {
  Store *store = c.ctx().store();
  if (!store || c.abort_key().empty() || c.size() < 2) return "";
  publish_group_calls(c, calls, group);
  std::vector<ListedCall> mine = list_of(calls);
  int n = c.size(), me = c.rank();
  // The ring neighbours, then further out, a bounded number: the lists
  // live in the store, and every member reads some.
  std::vector<int> unread;
  for (int d = 1; d <= n / 2 && unread.size() < kMostListsRead; ++d) {
    unread.push_back((me + d) % n);
    if ((me + n - d) % n != (me + d) % n) unread.push_back((me + n - d) % n);
  }
  // The difference, or "" when theirs equals mine.
  auto compare = [&](int peer, const Bytes &b) -> std::string {
    std::vector<ListedCall> theirs(b.size() / sizeof(ListedCall));
    memcpy(static_cast<void *>(theirs.data()), b.data(), theirs.size() * sizeof(ListedCall));
    size_t k = 0;
    while (k < mine.size() && k < theirs.size() && mine[k].fingerprint == theirs[k].fingerprint)
      ++k;
    if (k == mine.size() && k == theirs.size()) return "";
    return format(
        "the ranks' groups differ at their collective %zu on %s: %s on rank %d, %s on rank %d",
        k + 1, c.where().c_str(), describe_call(mine, k).c_str(), me,
        describe_call(theirs, k).c_str(), peer);
  };
  // Every member that fails the group publishes its list, but not at the
  // same moment (one learns of the failure from the store, one is slow to
  // be scheduled): lists are read as they come, so that one late member
  // whose calls equal these delays nothing when another's already differ.
  // The bound only covers a member that never publishes (then the plain
  // mismatch stands).
  Deadline until = Deadline::after_ms(std::min<int64_t>(c.ctx().timeout_ms(), 5000));
  int64_t pause_ms = 2;
  try {
    while (!unread.empty()) {
      std::vector<std::string> keys;
      for (int peer : unread) keys.push_back(key_of(c, group, peer));
      std::optional<std::vector<bool>> present = store->check(keys);
      std::vector<int> later;
      for (size_t i = 0; i < unread.size(); ++i) {
        if (present && !(*present)[i]) {
          later.push_back(unread[i]);
          continue;
        }
        // Present (read at once), or a store that cannot tell (a short wait).
        Deadline wait =
            present ? until : Deadline::after_ms(std::min<int64_t>(pause_ms, until.remaining_ms()));
        try {
          std::string difference = compare(unread[i], store->get(keys[i], wait));
          if (!difference.empty()) return difference;
        } catch (const Error &e) {
          if (e.code() != SMD_ERR_TIMEOUT || until.expired()) throw;
          later.push_back(unread[i]);
        }
      }
      if (later.empty()) return "";
      if (until.expired()) break;
      if (present) {
        // Nothing to read yet: wait a little on the nearest one's key (it
        // ends the pause early when that list comes).
        try {
          store->get(key_of(c, group, later.front()),
                     Deadline::after_ms(std::min<int64_t>(pause_ms, until.remaining_ms())));
        } catch (const Error &e) {
          if (e.code() != SMD_ERR_TIMEOUT) throw;
        }
      }
      pause_ms = std::min<int64_t>(pause_ms * 2, 100);
      unread.swap(later);
    }
  } catch (const Error &e) {
    SMD_TRACE("coll", "naming a group's difference: %s", e.what());
  }
  return "";
}

}  // namespace smd
