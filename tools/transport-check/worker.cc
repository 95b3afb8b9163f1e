#include "worker.h"

#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "harness.h"
#include "registry.h"

namespace tcheck {

namespace {

void host_log(void *host, int level, const char *message) {
  auto *e = static_cast<Env *>(host);
  if (!e->verbose) return;
  const char *name = level == SMD_TRANSPORT_LOG_WARN   ? "warn"
                     : level == SMD_TRANSPORT_LOG_INFO ? "info"
                                                       : "trace";
  fprintf(stderr, "[rank %d] %s: %s\n", e->rank, name, message ? message : "");
}

void host_set_error(void *host, const char *message) {
  static_cast<Env *>(host)->last_error = message ? message : "";
}

const char *host_get_param(void *, const char *name) { return getenv(name); }

void record(Result &res, int state, const std::string &message) {
  snprintf(res.message, sizeof res.message, "%s", message.c_str());
  res.end = now_seconds();
  res.state.store(state);
}

}  // namespace

void run_worker(const LoadedPlugin &plugin, Arena *arena, int rank, const Options &o,
                const Plan &plan) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
  Env env(plugin.table, arena, rank, o.nranks, o.verbose);
  smd_transport_host_t &h = env.host;
  h.struct_size = sizeof h;
  h.abi_version = SMD_TRANSPORT_ABI_VERSION;
  h.host = &env;
  h.rank = rank;
  h.world_size = o.nranks;
  h.local_rank = rank;
  h.local_size = o.nranks;
  h.node_index = 0;
  h.node_count = 1;
  h.timeout_ms = int64_t(plan.total_limit * 1000);
  h.log = host_log;
  h.set_error = host_set_error;
  h.get_param = host_get_param;

  const std::vector<TestCase> &cases = test_cases();
  for (size_t k = 0; k < plan.tests.size(); ++k) {
    const TestCase &tc = cases[size_t(plan.tests[k])];
    Result &res = arena->results[k][rank];
    bool setup_test = tc.run == test_connect_all || tc.run == test_finalize;
    if (!env.connected && !setup_test) {
      env.begin(int(k), now_seconds() + plan.limits[k]);
      res.start = now_seconds();
      record(res, kNotRun, "not run: connect_all failed");
      env.end();
      continue;
    }
    env.begin(int(k), now_seconds() + plan.limits[k] * 0.9);
    res.start = now_seconds();
    res.state.store(kRunning);
    int state = kPass;
    std::string message;
    try {
      tc.run(env);
      message = env.notes();
    } catch (const TestFailure &f) {
      state = kFail;
      message = f.message;
      int none = 0;
      arena->failed_by[k].compare_exchange_strong(none, rank + 1);
    } catch (const TestSkip &s) {
      state = kSkip;
      message = s.reason;
    } catch (const TestAborted &a) {
      state = kFail;
      message = "aborted: rank " + std::to_string(a.rank) + " failed this test";
    } catch (const std::exception &ex) {
      state = kFail;
      message = std::string("exception: ") + ex.what();
      int none = 0;
      arena->failed_by[k].compare_exchange_strong(none, rank + 1);
    }
    record(res, state, message);
    env.end();
    // Without a full mesh nothing else can run, on any rank.
    if (tc.run == test_connect_all && arena->failed_by[k].load() != 0) env.connected = false;
  }
  arena->finished[rank].store(1);
  fflush(stdout);
  fflush(stderr);
  _exit(0);
}

}  // namespace tcheck
