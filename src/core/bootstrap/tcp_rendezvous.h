// The TCP store of a world as a rank sees it: the server (rank 0) and this
// rank's connection, with the job token settled first. Worlds of one
// process that name the same store (address, port, rank, world size, job)
// share one server and one connection; the last world to go says goodbye.
#pragma once

#include <memory>
#include <string>

#include "core/bootstrap/store.h"

namespace smd {

class TcpStoreServer;
class TcpStoreClient;

struct TcpRendezvousConfig {
  std::string addr;  // the store's host; "" = learn it from rank 0's note
  int port = 29500;
  std::string token;   // a secret the user gave (SMD_JOB_TOKEN, options); "" = none
  std::string job_id;  // the launcher's job id: the token when notes are off
  int rank = 0;
  int size = 1;
  int64_t timeout_ms = 300000;
};

class TcpRendezvous {
 public:
  ~TcpRendezvous();
  std::shared_ptr<Store> store() const { return store_; }
  bool serves() const { return server_ != nullptr; }

 private:
  friend std::shared_ptr<TcpRendezvous> join_tcp_rendezvous(const TcpRendezvousConfig &);
  TcpRendezvous() = default;
  std::unique_ptr<TcpStoreServer> server_;
  std::shared_ptr<TcpStoreClient> client_;
  std::shared_ptr<Store> store_;
  std::string note_path_;  // rank 0's note, removed at the end
  int64_t timeout_ms_ = 0;
};

// Joins (rank 0: serves, then joins) the store the config names, or shares
// the one this process already holds for it. Without a secret token, rank
// 0 draws one and hands it over in a private note (rendezvous_file.h);
// with SMD_RENDEZVOUS_DIR=off the job id is the token and a warning says
// that anyone who can reach a non-loopback store can join. Throws
// smd::Error SMD_ERR_BOOTSTRAP / SMD_ERR_TIMEOUT.
std::shared_ptr<TcpRendezvous> join_tcp_rendezvous(const TcpRendezvousConfig &config);

}  // namespace smd
