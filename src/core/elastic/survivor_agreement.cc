#include "core/elastic/survivor_agreement.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

namespace {

// One member's slot in one agreement: "v <flag> <proposal>" written by the
// member itself, or "dead" written by a survivor that declared it failed.
// Whoever's add on the claim key returns 1 owns the slot and writes it;
// the store orders the adds, so each slot has one writer and one value.
struct Slot {
  bool voted = false;
  uint32_t flag = 0, proposal = 0;
};

std::string vote_text(uint32_t flag, uint32_t proposal) {
  return format("v %u %u", flag, proposal);
}

std::optional<Slot> parse_slot(const Bytes &b) {
  std::string s(b.begin(), b.end());
  Slot slot;
  if (s == "dead") return slot;
  unsigned f = 0, p = 0;
  if (sscanf(s.c_str(), "v %u %u", &f, &p) != 2) return std::nullopt;
  slot.voted = true;
  slot.flag = f;
  slot.proposal = p;
  return slot;
}

// The slot's value when it has been written, without waiting long.
std::optional<Bytes> read_if_written(Store &store, const std::string &key) {
  if (auto present = store.check({key})) {
    if (present->empty() || !(*present)[0]) return std::nullopt;
    return store.get(key, Deadline::after_ms(1000));
  }
  // A store that cannot tell (an injected one): a short wait.
  try {
    return store.get(key, Deadline::after_ms(5));
  } catch (const Error &e) {
    if (e.code() == SMD_ERR_TIMEOUT) return std::nullopt;
    throw;
  }
}

class Agreement {
 public:
  Agreement(Comm &c, Store &store)
      : c_(c),
        store_(store),
        base_(format("smd/elastic/%u/%d/agree/%u", c.id(), c.world_rank(0), c.next_agreement())),
        slots_(size_t(c.size())) {}

  SurvivorAgreement run(uint32_t flag, uint32_t proposal) {
    int64_t timeout_ms = c_.ctx().timeout_ms() > 0 ? c_.ctx().timeout_ms() : 300000;
    int64_t declare_at = now_ns() + timeout_ms * 1000000;
    // A slot claimed but never written (its owner died between its two
    // store operations) is waited for one more timeout, then reported.
    int64_t give_up_at = declare_at + timeout_ms * 1000000;
    vote(flag, proposal);
    auto pause = std::chrono::microseconds(200);
    for (;;) {
      int open = 0;
      std::vector<int> store_failed = store_.failed_ranks();
      for (int r = 0; r < c_.size(); ++r) {
        if (slots_[size_t(r)]) continue;
        if (auto b = read_if_written(store_, key("slot", r))) {
          slots_[size_t(r)] = parse_slot(*b);
          if (!slots_[size_t(r)])
            fail(SMD_ERR_INTERNAL, "agreement on %s: malformed slot of rank %d", c_.where().c_str(),
                 r);
          continue;
        }
        if (looks_failed(r, store_failed) || now_ns() >= declare_at) declare(r);
        if (!slots_[size_t(r)]) ++open;
      }
      if (open == 0) break;
      if (now_ns() >= give_up_at)
        fail(SMD_ERR_TIMEOUT,
             "agreement on %s: %d member slot(s) were claimed but never written (a member died "
             "during its vote); call smd_comm_agree or smd_comm_shrink again",
             c_.where().c_str(), open);
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(5)) pause *= 2;
    }
    return result();
  }

 private:
  std::string key(const char *what, int r) const {
    return format("%s/%s/%d", base_.c_str(), what, r);
  }

  void vote(uint32_t flag, uint32_t proposal) {
    int me = c_.rank();
    if (store_.add(key("claim", me), 1) != 1)
      fail(SMD_ERR_PEER_FAILURE,
           "agreement on %s: the survivors declared this rank failed before it arrived "
           "(it came later than SMD_TIMEOUT, or a transport lost it)",
           c_.where().c_str());
    std::string v = vote_text(flag, proposal);
    store_.set(key("slot", me), Bytes(v.begin(), v.end()));
    slots_[size_t(me)] = Slot{true, flag, proposal};
  }

  bool looks_failed(int r, const std::vector<int> &store_failed) {
    int w = c_.world_rank(r);
    const std::vector<int> &known = c_.agreed_failed();
    return std::find(store_failed.begin(), store_failed.end(), w) != store_failed.end() ||
           std::find(known.begin(), known.end(), w) != known.end() ||
           !c_.ctx().transport_sees_alive(w);
  }

  void declare(int r) {
    if (store_.add(key("claim", r), 1) != 1) return;  // its owner writes it
    static const std::string dead = "dead";
    store_.set(key("slot", r), Bytes(dead.begin(), dead.end()));
    slots_[size_t(r)] = Slot{};
    SMD_INFO("elastic", "%s: declared rank %d (%s) failed", c_.where().c_str(), r,
             c_.ctx().describe_rank(c_.world_rank(r)).c_str());
  }

  SurvivorAgreement result() {
    SurvivorAgreement out;
    for (int r = 0; r < c_.size(); ++r) {
      const Slot &s = *slots_[size_t(r)];
      if (s.voted) {
        out.flag &= s.flag;
        out.max_proposal = std::max(out.max_proposal, s.proposal);
        out.survivors.push_back(r);
      } else {
        out.failed.push_back(r);
        int w = c_.world_rank(r);
        std::vector<int> &known = c_.agreed_failed();
        if (std::find(known.begin(), known.end(), w) == known.end()) known.push_back(w);
      }
    }
    return out;
  }

  Comm &c_;
  Store &store_;
  std::string base_;
  std::vector<std::optional<Slot>> slots_;
};

}  // namespace

SurvivorAgreement agree_among_survivors(Comm &comm, uint32_t flag, uint32_t proposal) {
  Store *store = comm.ctx().store();
  if (!store) {
    // A world of one process without a store: nobody else to agree with.
    SurvivorAgreement alone;
    alone.flag = flag;
    alone.max_proposal = proposal;
    alone.survivors.push_back(comm.rank());
    return alone;
  }
  try {
    return Agreement(comm, *store).run(flag, proposal);
  } catch (const Error &e) {
    if (e.code() == SMD_ERR_BOOTSTRAP)
      fail(SMD_ERR_PEER_FAILURE,
           "agreement on %s: lost the store (%s): it is served by world rank "
           "0's process, whose loss is not survivable",
           comm.where().c_str(), e.what());
    throw;
  }
}

}  // namespace smd
