#include "core/bootstrap/tcp_rendezvous.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/bootstrap/rendezvous_file.h"
#include "core/bootstrap/store_epoch.h"
#include "core/bootstrap/tcp_store_client.h"
#include "core/bootstrap/tcp_store_server.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {
namespace {

// A rank that reads a stale note (a crashed job's) tries again after this
// long; rank 0 rewrites the note before it serves.
constexpr int64_t kNoteRetryMs = 5000;

bool is_loopback(const std::string &addr) {
  return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0;
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

// The failures a rank that followed a note may cure by reading it again:
// a note left by an earlier job names another token or host.
bool note_may_be_stale(const Error &e) {
  if (e.code() != SMD_ERR_BOOTSTRAP && e.code() != SMD_ERR_TIMEOUT) return false;
  const std::string &m = e.message();
  return m.find("refused this rank") == std::string::npos ||
         m.find("token mismatch") != std::string::npos;
}

std::mutex registry_mu;
std::map<std::string, std::weak_ptr<TcpRendezvous>> registry;

}  // namespace

TcpRendezvous::~TcpRendezvous() {
  if (client_) client_->goodbye();
  if (server_) {
    // Let the other ranks say goodbye before the store disappears under them.
    server_->wait_for_clients_to_leave(Deadline::after_ms(std::min<int64_t>(timeout_ms_, 5000)));
    server_.reset();
  }
  if (!note_path_.empty()) remove_rendezvous_note(note_path_);
}

std::shared_ptr<TcpRendezvous> join_tcp_rendezvous(const TcpRendezvousConfig &c) {
  std::string key = format("%s:%d rank %d of %d job '%s' token '%s'", c.addr.c_str(), c.port,
                           c.rank, c.size, c.job_id.c_str(), c.token.c_str());
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    auto found = registry.find(key);
    if (auto shared = found == registry.end() ? nullptr : found->second.lock()) {
      SMD_INFO("store", "sharing this process's connection to the store at %s:%d", c.addr.c_str(),
               c.port);
      return shared;
    }
  }
  // Joining waits for the other ranks, who may be threads of this process
  // joining the same store: no lock is held meanwhile.
  std::shared_ptr<TcpRendezvous> r(new TcpRendezvous());
  r->timeout_ms_ = c.timeout_ms;
  uint32_t epoch = next_epoch("tcp store " + key);
  Deadline deadline = Deadline::after_ms(c.timeout_ms);

  std::string notes = param_string("SMD_RENDEZVOUS_DIR");
  bool use_note = notes != "off" && (c.token.empty() || c.addr.empty());
  if (!use_note && c.addr.empty())
    fail(SMD_ERR_BOOTSTRAP,
         "the launcher does not say where rank 0 runs and SMD_RENDEZVOUS_DIR=off: set "
         "SMD_MASTER_ADDR (or MASTER_ADDR) to rank 0's host");
  std::string token = c.token;
  if (!use_note && token.empty()) token = c.job_id;
  if (!use_note && c.token.empty() && !is_loopback(c.addr))
    SMD_WARN("init",
             "the store at %s:%d has no secret token (SMD_RENDEZVOUS_DIR=off and no "
             "SMD_JOB_TOKEN): any process that reaches it can join as a rank; see "
             "docs/SECURITY.md",
             c.addr.c_str(), c.port);
  std::string note_path;
  if (use_note) {
    std::string job_key = format("%s|%d|%d|%s", c.addr.c_str(), c.port, c.size, c.job_id.c_str());
    note_path = rendezvous_note_path(rendezvous_dir(is_loopback(c.addr)), job_key, epoch);
  }

  if (c.rank == 0) {
    if (use_note && token.empty()) token = random_token();
    std::string bind = is_loopback(c.addr) ? "127.0.0.1" : "";
    r->server_ = std::make_unique<TcpStoreServer>(bind, c.port, token, c.size, epoch);
    if (use_note) {
      write_rendezvous_note(note_path, {token, c.addr.empty() ? this_host() : c.addr, c.port});
      r->note_path_ = note_path;
      SMD_INFO("store", "the job token is in %s for the other ranks", note_path.c_str());
    }
    r->client_ = std::make_shared<TcpStoreClient>(c.addr.empty() ? "127.0.0.1" : c.addr, c.port,
                                                  token, 0, c.size, deadline, -1, epoch);
  } else if (!use_note) {
    r->client_ = std::make_shared<TcpStoreClient>(c.addr, c.port, token, c.rank, c.size, deadline,
                                                  -1, epoch);
  } else {
    for (;;) {
      RendezvousNote note = read_rendezvous_note(note_path, deadline);
      try {
        r->client_ = std::make_shared<TcpStoreClient>(
            c.addr.empty() ? note.host : c.addr, c.addr.empty() ? note.port : c.port,
            c.token.empty() ? note.token : c.token, c.rank, c.size,
            deadline.min(Deadline::after_ms(kNoteRetryMs)), -1, epoch);
        break;
      } catch (const Error &e) {
        if (deadline.expired() || !note_may_be_stale(e)) throw;
        SMD_INFO("store", "joining through the note %s: %s; reading it again", note_path.c_str(),
                 e.what());
      }
    }
  }
  r->store_ = r->client_;
  std::lock_guard<std::mutex> lock(registry_mu);
  for (auto it = registry.begin(); it != registry.end();)
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  registry[key] = r;
  return r;
}

}  // namespace smd
