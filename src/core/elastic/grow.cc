#include "core/elastic/grow.h"

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap/store_protocol.h"
#include "core/bootstrap/tcp_store_client.h"
#include "core/coll/select/algo_config.h"
#include "core/coll/create/comm_create.h"
#include "core/comm/communicator.h"
#include "core/comm/context.h"
#include "core/comm/tags.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

namespace {

// Keys in the store every process of the job reaches (the world's base
// store): grows and joiners meet there.
//   smd/grow/count            grows started (a grow's number g)
//   smd/grow/admitted         joiner slots reserved by grows so far
//   smd/grow/joiners          slots taken by joiners so far
//   smd/grow/claim/<j>        add 1: 1 = yours (a joiner's, or a grow's
//                             that timed out and voided it)
//   smd/grow/slot/<j>         the ticket: "<g> <rank> <size>"
//   smd/grow/<g>/outcome      "ok", or "<code> <message>" for everyone
//   smd/grow/<g>/sid/<rank>   each process's store id
//   smd/grow/<g>/world/...    the successor world's own keys
const char *const kGrow = "smd/grow/";

std::string text_of(const Bytes &b) { return std::string(b.begin(), b.end()); }
Bytes bytes_of(const std::string &s) { return Bytes(s.begin(), s.end()); }

long long parse_number(const Bytes &b, const char *what) {
  std::string s = text_of(b);
  long long v = 0;
  char extra = 0;
  if (sscanf(s.c_str(), "%lld%c", &v, &extra) != 1)
    fail(SMD_ERR_INTERNAL, "grow: malformed %s '%s' in the store", what, s.c_str());
  return v;
}

// The successor world's store: its own key prefix, and the store's failed
// ids (first-world ranks, joiners' ids) read as its ranks.
class GrownWorldStore : public Store {
 public:
  GrownWorldStore(std::shared_ptr<Store> base, std::string prefix, std::vector<int> store_ids)
      : inner_(std::make_shared<PrefixStore>(base, std::move(prefix))),
        ids_(std::move(store_ids)) {}
  void set(const std::string &key, const Bytes &value) override { inner_->set(key, value); }
  Bytes get(const std::string &key, Deadline deadline) override {
    return inner_->get(key, deadline);
  }
  int64_t add(const std::string &key, int64_t delta) override { return inner_->add(key, delta); }
  std::optional<std::vector<bool>> check(const std::vector<std::string> &keys) override {
    return inner_->check(keys);
  }
  std::vector<int> failed_ranks() override {
    std::vector<int> out;
    for (int id : inner_->failed_ranks())
      for (size_t r = 0; r < ids_.size(); ++r)
        if (ids_[r] == id && id >= 0) out.push_back(static_cast<int>(r));
    return out;
  }
  // The connection outlives this world (its owner says goodbye).
  void goodbye() override {}
  std::string describe() const override { return inner_->describe(); }

 private:
  std::shared_ptr<Store> inner_;
  std::vector<int> ids_;
};

// A joiner's own connection to the TCP store: it leaves with a goodbye
// when the last world over it goes.
struct JoinerConnection {
  std::shared_ptr<TcpStoreClient> client;
  ~JoinerConnection() {
    if (!client) return;  // the store refused it
    try {
      client->goodbye();
    } catch (const Error &e) {
      SMD_TRACE("store", "goodbye: %s", e.what());
    }
  }
};

struct Ticket {
  long long grow = 0;
  int rank = 0, size = 0;
};

void fail_unless_ok(Store &base, const std::string &gp, Deadline deadline) {
  std::string outcome = text_of(base.get(gp + "outcome", deadline));
  if (outcome == "ok") return;
  int code = atoi(outcome.c_str());
  size_t space = outcome.find(' ');
  if (code <= 0 || space == std::string::npos) code = SMD_ERR_INTERNAL, space = 0;
  throw Error(static_cast<smd_result_t>(code), outcome.substr(space + 1));
}

// Every process of the successor: the store ids, then the world.
std::shared_ptr<Comm> form_successor(std::shared_ptr<Store> base, std::shared_ptr<void> owner,
                                     const Ticket &t, int store_id, int64_t timeout_ms,
                                     const std::string &transport) {
  std::string gp = format("%s%lld/", kGrow, t.grow);
  Deadline deadline = Deadline::after_ms(timeout_ms);
  base->set(gp + "sid/" + std::to_string(t.rank), bytes_of(std::to_string(store_id)));
  std::vector<int> ids(size_t(t.size));
  for (int r = 0; r < t.size; ++r)
    ids[size_t(r)] = static_cast<int>(
        parse_number(base->get(gp + "sid/" + std::to_string(r), deadline), "store id"));
  WorldConfig c;
  c.rank = t.rank;
  c.size = t.size;
  c.launcher = "grow";
  c.launcher_why = format("grow %lld of the job's store", t.grow);
  c.timeout_ms = timeout_ms;
  c.transport = transport;
  c.injected_store = std::make_shared<GrownWorldStore>(base, gp + "world/", std::move(ids));
  c.store_id = store_id;
  c.base_store = std::move(base);
  c.store_owner = std::move(owner);
  return form_world(c, AlgoConfig::parse(param_string("SMD_ALGO")));
}

// The grow's leader (rank 0 of the communicator): checks the members
// agree, reserves the slots, waits for joiners, publishes the outcome.
std::string lead(Comm &comm, Store &cs, Store &base, const std::string &ck, long long g, int n_new,
                 int64_t wait_ms, Deadline deadline) {
  for (int r = 1; r < comm.size(); ++r) {
    long long n = parse_number(cs.get(format("%s/n/%d", ck.c_str(), r), deadline), "joiner count");
    if (n != n_new)
      return format(
          "%d grow of %s: rank 0 admits %d new processes, rank %d %lld (every member must "
          "pass the same count)",
          SMD_ERR_MISMATCH, comm.where().c_str(), n_new, r, n);
  }
  if (n_new < 0 || comm.size() + n_new > kMaxCommRanks)
    return format("%d grow of %s: %d new processes is not in [0, %d]", SMD_ERR_INVALID_ARGUMENT,
                  comm.where().c_str(), n_new, kMaxCommRanks - comm.size());
  int size = comm.size() + n_new;
  long long end = base.add(format("%sadmitted", kGrow), n_new), start = end - n_new;
  for (long long j = start + 1; j <= end; ++j)
    base.set(format("%sslot/%lld", kGrow, j),
             bytes_of(format("%lld %lld %d", g, comm.size() + (j - start - 1), size)));
  Deadline joiners_by = Deadline::after_ms(wait_ms);
  auto pause = std::chrono::microseconds(500);
  for (;;) {
    int open = 0;
    for (long long j = start + 1; j <= end; ++j)
      if (base.add(format("%sclaim/%lld", kGrow, j), 0) < 1) ++open;
    if (open == 0) return "ok";
    if (joiners_by.expired()) break;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(20)) pause *= 2;
  }
  // Void the slots nobody took (the claim orders us against a joiner that
  // comes now: it takes the next slot, for a later grow).
  int voided = 0;
  for (long long j = start + 1; j <= end; ++j)
    if (base.add(format("%sclaim/%lld", kGrow, j), 1) == 1) ++voided;
  if (voided == 0) return "ok";
  return format("%d grow of %s: %d of %d new processes joined within %.1f s", SMD_ERR_TIMEOUT,
                comm.where().c_str(), n_new - voided, n_new, wait_ms / 1000.0);
}

}  // namespace

std::shared_ptr<Comm> grow_comm(Comm &comm, int n_new, int64_t wait_ms) {
  Context &ctx = comm.ctx();
  Store *cs = ctx.store();
  std::shared_ptr<Store> base = ctx.base_store();
  if (!cs || !base)
    fail(SMD_ERR_INVALID_USAGE,
         "grow of %s: the world formed without a store (one process, no "
         "injected store), so no process can join it",
         comm.where().c_str());
  int64_t timeout_ms = ctx.timeout_ms() > 0 ? ctx.timeout_ms() : 300000;
  if (wait_ms <= 0) wait_ms = timeout_ms;
  Deadline deadline = Deadline::after_ms(wait_ms + timeout_ms);
  std::string ck =
      format("smd/elastic/%u/%d/grow/%u", comm.id(), comm.world_rank(0), comm.next_agreement());
  cs->set(format("%s/n/%d", ck.c_str(), comm.rank()), bytes_of(std::to_string(n_new)));
  long long g = 0;
  if (comm.rank() == 0) {
    g = base->add(format("%scount", kGrow), 1);
    cs->set(ck + "/g", bytes_of(std::to_string(g)));
    std::string outcome;
    try {
      outcome = lead(comm, *cs, *base, ck, g, n_new, wait_ms, deadline);
    } catch (const Error &e) {
      // A member that never came, a lost store: everyone ends with it.
      outcome = format("%d %s", static_cast<int>(e.code()), e.what());
    }
    base->set(format("%s%lld/outcome", kGrow, g), bytes_of(outcome));
  } else {
    g = parse_number(cs->get(ck + "/g", deadline), "grow number");
  }
  fail_unless_ok(*base, format("%s%lld/", kGrow, g), deadline);
  SMD_INFO("elastic", "growing %s by %d to %d ranks (grow %lld)", comm.where().c_str(), n_new,
           comm.size() + n_new, g);
  Ticket t{g, comm.rank(), comm.size() + n_new};
  return form_successor(base, ctx.store_owner(), t, ctx.store_id(), timeout_ms,
                        param_string("SMD_TRANSPORT"));
}

std::shared_ptr<Comm> join_grown_comm(const smd_init_options_t *options) {
  WorldConfig config = resolve_world_config(options);
  std::shared_ptr<Store> base = config.injected_store;
  std::shared_ptr<void> owner;
  int store_id = -1;
  if (!base) {
    if (config.store_addr.empty())
      fail(SMD_ERR_INVALID_ARGUMENT,
           "smd_comm_join: the store's address is not known: set "
           "SMD_MASTER_ADDR (or MASTER_ADDR) or smd_init_options_t.store_addr");
    if (config.job_token.empty())
      fail(SMD_ERR_INVALID_ARGUMENT,
           "smd_comm_join: no job token: set SMD_JOB_TOKEN (the one "
           "the job's ranks use) or smd_init_options_t.job_token");
    auto joiner = std::make_shared<JoinerConnection>();
    try {
      joiner->client = std::make_shared<TcpStoreClient>(config.store_addr, config.store_port,
                                                        config.job_token, -1, wire::kJoinerHello,
                                                        Deadline::after_ms(config.timeout_ms));
    } catch (const Error &e) {
      fail(e.code(), "smd_comm_join: %s", e.what());
    }
    store_id = joiner->client->store_id();
    base = joiner->client;
    owner = joiner;
  }
  if (!config.store_prefix.empty()) base = std::make_shared<PrefixStore>(base, config.store_prefix);
  Deadline deadline = Deadline::after_ms(config.timeout_ms);
  long long j = 0;
  for (;;) {
    // A slot already claimed was voided by a grow that timed out: the
    // next one is for a later grow.
    j = base->add(format("%sjoiners", kGrow), 1);
    if (base->add(format("%sclaim/%lld", kGrow, j), 1) == 1) break;
  }
  Ticket t;
  try {
    std::string s = text_of(base->get(format("%sslot/%lld", kGrow, j), deadline));
    if (sscanf(s.c_str(), "%lld %d %d", &t.grow, &t.rank, &t.size) != 3)
      fail(SMD_ERR_INTERNAL, "smd_comm_join: malformed ticket '%s' in the store", s.c_str());
  } catch (const Error &e) {
    if (e.code() != SMD_ERR_TIMEOUT) throw;
    fail(SMD_ERR_TIMEOUT,
         "smd_comm_join: no grow admitted this process within %.1f s (it waits "
         "as joiner %lld at %s)",
         config.timeout_ms / 1000.0, j, base->describe().c_str());
  }
  fail_unless_ok(*base, format("%s%lld/", kGrow, t.grow), Deadline::after_ms(config.timeout_ms));
  SMD_INFO("elastic", "joining grow %lld as rank %d of %d", t.grow, t.rank, t.size);
  return form_successor(base, owner, t, store_id, config.timeout_ms, config.transport);
}

}  // namespace smd
