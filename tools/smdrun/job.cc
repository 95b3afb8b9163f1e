#include "job.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "wait_status.h"

extern char **environ;

namespace smdrun {
namespace {

using namespace std::chrono_literals;

// How long ranks get between SIGTERM and SIGKILL.
constexpr auto kKillDelay = 2s;
// How long output is still read once every rank is gone, for pipes kept
// open by something a rank left behind.
constexpr auto kDrainLimit = 1s;

Job::Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Job::Clock::duration>(std::chrono::duration<double>(s));
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

Job::Job(const Options &options, JobSpec spec, SignalWatch &signals)
    : options_(options), spec_(std::move(spec)), signals_(signals) {}

void Job::launch() {
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!devnull.valid())
    throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  std::vector<std::string> base;
  for (char **e = environ; *e; ++e) base.emplace_back(*e);

  // --bind-to core: rank r on the (r mod C)-th CPU smdrun may use.
  std::vector<int> cpus = options_.bind_core ? allowed_cpus() : std::vector<int>();
  ranks_.reserve(static_cast<size_t>(options_.nranks));
  for (int r = 0; r < options_.nranks; ++r) {
    int cpu = cpus.empty() ? -1 : cpus[static_cast<size_t>(r) % cpus.size()];
    try {
      SpawnedRank child = spawn_rank(options_.command, rank_environment(spec_, r, base),
                                     devnull.get(), signals_, cpu);
      std::string tag;
      if (options_.tag_output) tag.append("[").append(std::to_string(r)).append("] ");
      ranks_.push_back(Rank{r, child.pid, RankStream(std::move(child.out), tag, stdout_),
                            RankStream(std::move(child.err), tag, stderr_)});
    } catch (const SpawnError &) {
      for (Rank &rank : ranks_) {
        rank.signal(SIGKILL);
        ::waitpid(rank.pid, nullptr, 0);
      }
      ranks_.clear();
      throw;
    }
  }
}

int Job::supervise() {
  if (options_.timeout_s) timeout_at_ = Clock::now() + seconds(*options_.timeout_s);
  std::vector<pollfd> fds;
  std::vector<RankStream *> streams;  // streams[i] polls as fds[i + 1]
  for (;;) {
    streams.clear();
    for (Rank &rank : ranks_)
      for (RankStream *s : {&rank.out, &rank.err})
        if (s->open()) streams.push_back(s);
    if (!any_running()) {
      if (streams.empty()) break;
      if (!drain_until_) drain_until_ = Clock::now() + kDrainLimit;
    }

    fds.assign(1, pollfd{signals_.fd(), POLLIN, 0});
    for (RankStream *s : streams) fds.push_back(pollfd{s->fd(), POLLIN, 0});
    int timeout_ms = -1;
    if (auto deadline = next_deadline()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      timeout_ms = static_cast<int>(std::max<long>(0, left.count()));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));

    for (size_t i = 0; i < streams.size(); ++i)
      if (fds[i + 1].revents) streams[i]->pump();
    if (fds[0].revents)
      for (int sig : signals_.take()) {
        if (sig == SIGCHLD) reap();
        else on_signal(sig);
      }
    on_deadlines(Clock::now());
  }
  return exit_code_.value_or(0);
}

void Job::reap() {
  int status;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    auto rank = std::find_if(ranks_.begin(), ranks_.end(),
                             [&](const Rank &r) { return r.pid == pid && r.running; });
    if (rank != ranks_.end()) on_exit(*rank, status);
  }
}

void Job::on_exit(Rank &rank, int status) {
  rank.running = false;
  // Its last words come before smdrun's verdict on it.
  rank.out.drain();
  rank.err.drain();
  bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (!failed) return;
  if (!rank.ended_by_smdrun(status)) {
    say("rank " + std::to_string(rank.index) + " (pid " + std::to_string(rank.pid) + ") " +
        describe_wait_status(status));
    if (rank.err.saw_loader_error() && !loader_hint_given_) {
      loader_hint_given_ = true;
      say("hint: the dynamic loader could not find a shared library the program "
          "needs (its message is above); put the folder that holds it (libsmd's: "
          "the build's src/ or the install's lib/) on LD_LIBRARY_PATH, or install it");
    }
    settle_exit_code(exit_code_of(status));
  }
  // A failure, or a rank ending of a signal smdrun passed on while others
  // ignore it, ends the job: the others usually notice the dead peer and
  // fail with their own, more telling, messages, so they get the grace
  // period first. Once the job is stopping this is not restarted.
  if (!stopping_ && any_running()) {
    stopping_ = true;
    term_at_ = Clock::now() + seconds(options_.grace_s);
  }
}

void Job::on_signal(int sig) {
  settle_exit_code(128 + sig);
  if (!any_running()) return;
  if (!first_stop_signal_) {
    first_stop_signal_ = sig;
    say("received " + signal_name(sig) + "; forwarding it to ranks " + running_list() +
        " (send it again to kill them)");
    signal_running(sig);
  } else {
    stopping_ = true;
    std::string again =
        sig == first_stop_signal_ ? " again" : " after " + signal_name(first_stop_signal_);
    say("received " + signal_name(sig) + again + "; killing ranks " + running_list());
    signal_running(SIGKILL);
  }
}

void Job::on_deadlines(Clock::time_point now) {
  if (timeout_at_ && now >= *timeout_at_) {
    timeout_at_.reset();
    if (any_running()) {
      say("timeout after " + format_seconds(*options_.timeout_s) +
          " s; ranks still running: " + running_list());
      settle_exit_code(124);
      stopping_ = true;
      signal_running(SIGTERM);
      term_at_.reset();
      kill_at_ = now + kKillDelay;
    }
  }
  if (term_at_ && now >= *term_at_) {
    term_at_.reset();
    if (any_running()) {
      say("grace period over; sending SIGTERM to ranks " + running_list());
      signal_running(SIGTERM);
      kill_at_ = now + kKillDelay;
    }
  }
  if (kill_at_ && now >= *kill_at_) {
    kill_at_.reset();
    if (any_running()) {
      say("ranks " + running_list() + " still running after SIGTERM; sending SIGKILL");
      signal_running(SIGKILL);
    }
  }
  if (drain_until_ && now >= *drain_until_)
    for (Rank &rank : ranks_) {
      rank.out.close();
      rank.err.close();
    }
}

void Job::signal_running(int sig) {
  for (Rank &rank : ranks_)
    if (rank.running) rank.signal(sig);
}

std::optional<Job::Clock::time_point> Job::next_deadline() const {
  std::optional<Clock::time_point> next;
  for (const auto &d : {timeout_at_, term_at_, kill_at_, drain_until_})
    if (d && (!next || *d < *next)) next = d;
  return next;
}

std::string Job::running_list() const {
  std::string list;
  for (const Rank &rank : ranks_)
    if (rank.running) list.append(list.empty() ? "" : ",").append(std::to_string(rank.index));
  return list;
}

bool Job::any_running() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank &r) { return r.running; });
}

void Job::settle_exit_code(int code) {
  if (!exit_code_) exit_code_ = code;
}

void Job::say(const std::string &line) { stderr_.write("smdrun: " + line + "\n"); }

}  // namespace smdrun
