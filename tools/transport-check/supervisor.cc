#include "supervisor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "registry.h"
#include "system_info.h"

namespace tcheck {

namespace {

std::string rank_list(const std::vector<int> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i != 0) s += ',';
    s += std::to_string(ranks[i]);
  }
  return s;
}

bool final_state(int s) { return s == kPass || s == kFail || s == kSkip || s == kNotRun; }

std::string describe_exit(int status) {
  char text[128];
  if (WIFSIGNALED(status))
    snprintf(text, sizeof text, "killed by signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else snprintf(text, sizeof text, "exited with status %d", WEXITSTATUS(status));
  return text;
}

class Supervisor {
 public:
  Supervisor(const Options &o, const Plan &plan, Arena *a)
      : o_(o), plan_(plan), a_(a), pids_(size_t(o.nranks), -1), gone_(size_t(o.nranks), false) {}

  void start(const LoadedPlugin &plugin) {
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < o_.nranks; ++r) {
      pid_t pid = fork();
      if (pid == 0) run_worker(plugin, a_, r, o_, plan_);
      if (pid < 0) {
        perror("smd-transport-check: fork");
        stop_all();
        exit(2);
      }
      pids_[size_t(r)] = pid;
    }
  }

  int run() {
    const std::vector<TestCase> &cases = test_cases();
    double run_deadline = now_seconds() + plan_.total_limit;
    for (size_t k = 0; k < plan_.tests.size(); ++k) {
      const TestCase &tc = cases[size_t(plan_.tests[k])];
      if (aborted_) {
        print_row(tc.name, "NOT RUN", "", {});
        ++failed_;
        continue;
      }
      watch(k, std::min(now_seconds() + plan_.limits[k], run_deadline));
      bool last = k + 1 == plan_.tests.size();
      std::vector<std::string> extra;
      if (last) {
        reap_all(10.0);
        std::vector<std::string> added = orphaned_dev_shm(added_names(shm_before_, list_dev_shm()));
        for (const std::string &n : added) extra.push_back("left in /dev/shm: " + n);
      }
      report(k, tc, extra);
    }
    stop_all();
    printf("%d passed, %d failed, %d skipped\n", passed_, failed_, skipped_);
    return failed_ == 0 ? 0 : 1;
  }

  void snapshot_dev_shm() { shm_before_ = list_dev_shm(); }

 private:
  // Waits until every rank finished test k, a rank dies, or time is up.
  void watch(size_t k, double deadline) {
    for (;;) {
      reap(k);
      if (aborted_) return;
      bool all = true;
      for (int r = 0; r < o_.nranks; ++r)
        if (!gone_[size_t(r)] && !final_state(a_->results[k][r].state.load())) all = false;
      if (all) return;
      if (now_seconds() > deadline) {
        for (int r = 0; r < o_.nranks; ++r) {
          Result &res = a_->results[k][r];
          if (gone_[size_t(r)] || final_state(res.state.load())) continue;
          snprintf(
              res.message, sizeof res.message, "timed out after %.0f s (%s)", plan_.limits[k],
              res.state.load() == kRunning ? "still in this test" : "still in the previous test");
          if (res.start == 0) res.start = now_seconds() - plan_.limits[k];
          res.end = now_seconds();
          res.state.store(kFail);
        }
        abort_run();
        return;
      }
      usleep(2000);
    }
  }

  // Collects exited ranks; one that dies unplanned fails test k.
  void reap(size_t k) {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      int r = rank_of(pid);
      if (r < 0) continue;
      gone_[size_t(r)] = true;
      if (a_->departed[r].load() || a_->finished[r].load()) continue;
      Result &res = a_->results[k][r];
      snprintf(res.message, sizeof res.message, "died: %s", describe_exit(status).c_str());
      if (res.start == 0) res.start = now_seconds();
      res.end = now_seconds();
      res.state.store(kFail);
      abort_run();
      for (int o = 0; o < o_.nranks; ++o) {
        Result &other = a_->results[k][o];
        if (other.state.load() != kRunning) continue;
        snprintf(other.message, sizeof other.message, "aborted: rank %d died", r);
        other.end = now_seconds();
        other.state.store(kFail);
      }
    }
  }

  void reap_all(double seconds) {
    double until = now_seconds() + seconds;
    while (now_seconds() < until) {
      bool any = false;
      for (int r = 0; r < o_.nranks; ++r) any = any || !gone_[size_t(r)];
      if (!any) return;
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        int r = rank_of(pid);
        if (r >= 0) gone_[size_t(r)] = true;
      } else {
        usleep(2000);
      }
    }
  }

  void abort_run() {
    aborted_ = true;
    stop_all();
  }

  void stop_all() {
    for (int r = 0; r < o_.nranks; ++r)
      if (pids_[size_t(r)] > 0 && !gone_[size_t(r)]) kill(pids_[size_t(r)], SIGKILL);
    for (int r = 0; r < o_.nranks; ++r)
      if (pids_[size_t(r)] > 0 && !gone_[size_t(r)]) {
        waitpid(pids_[size_t(r)], nullptr, 0);
        gone_[size_t(r)] = true;
      }
  }

  int rank_of(pid_t pid) const {
    for (int r = 0; r < o_.nranks; ++r)
      if (pids_[size_t(r)] == pid) return r;
    return -1;
  }

  void report(size_t k, const TestCase &tc, const std::vector<std::string> &extra) {
    int ranks = 0, fails = 0, skips = 0, notrun = 0;
    double start = 1e300, end = 0;
    std::vector<std::string> lines;
    std::map<std::string, std::vector<int>> notes;
    std::vector<std::pair<int, std::string>> failures;
    for (int r = 0; r < o_.nranks; ++r) {
      Result &res = a_->results[k][r];
      int s = res.state.load();
      if (s == kIdle) continue;  // departed before this test
      if (s == kNotRun) {
        ++notrun;
        continue;
      }
      ++ranks;
      start = std::min(start, res.start);
      end = std::max(end, res.end);
      if (s == kFail) {
        ++fails;
        failures.push_back({r, res.message});
      } else if (s == kSkip) {
        ++skips;
        notes[res.message].push_back(r);
      } else if (res.message[0] != '\0') {
        notes[res.message].push_back(r);
      }
    }
    // Root causes first, "aborted because another rank failed" last.
    std::stable_sort(failures.begin(), failures.end(), [](const auto &x, const auto &y) {
      return x.second.rfind("aborted:", 0) != 0 && y.second.rfind("aborted:", 0) == 0;
    });
    for (const auto &f : failures)
      lines.push_back("rank " + std::to_string(f.first) + ": " + f.second);
    for (const std::string &x : extra) lines.push_back(x);
    char detail[160];
    if (ranks == 0 && notrun > 0) {
      print_row(tc.name, "NOT RUN", "", {"connect_all failed"});
      ++failed_;
      return;
    }
    snprintf(detail, sizeof detail, "(%d rank%s, %.2f s)", ranks, ranks == 1 ? "" : "s",
             ranks > 0 ? std::max(0.0, end - start) : 0.0);
    if (fails > 0 || !extra.empty()) {
      print_row(tc.name, "FAIL", detail, lines);
      ++failed_;
    } else if (skips == ranks && ranks > 0) {
      print_row(tc.name, "SKIP", "(" + notes.begin()->first + ")", {});
      ++skipped_;
    } else {
      for (const auto &[text, who] : notes)
        lines.push_back(who.size() == size_t(ranks) ? "note: " + text
                                                    : "note (" + rank_list(who) + "): " + text);
      print_row(tc.name, "PASS", detail, lines);
      ++passed_;
    }
  }

  void print_row(const char *name, const char *verdict, const std::string &detail,
                 const std::vector<std::string> &lines) {
    printf("%-4s  %s  %s\n", verdict, name, detail.c_str());
    for (const std::string &l : lines) printf("      %s\n", l.c_str());
    fflush(stdout);
  }

  const Options &o_;
  const Plan &plan_;
  Arena *a_;
  std::vector<pid_t> pids_;
  std::vector<bool> gone_;
  std::vector<std::string> shm_before_;
  bool aborted_ = false;
  int passed_ = 0, failed_ = 0, skipped_ = 0;
};

}  // namespace

int supervise(const LoadedPlugin &plugin, const Options &o, const Plan &plan) {
  Arena *a = arena_create(o.nranks);
  if (a == nullptr) {
    perror("smd-transport-check: mmap");
    return 2;
  }
  const smd_transport_v1_t &t = plugin.table;
  printf("smd-transport-check: %s (%s), caps %s, %d ranks\n", t.name,
         t.description ? t.description : "", caps_string(t.caps).c_str(), o.nranks);
  Supervisor s(o, plan, a);
  s.snapshot_dev_shm();
  s.start(plugin);
  int status = s.run();
  arena_destroy(a);
  return status;
}

}  // namespace tcheck
