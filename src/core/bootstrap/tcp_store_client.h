// A rank's connection to the TCP store (tcp_store_server.h): the Store
// every rank, rank 0 included, forms the world through.
#pragma once

#include <mutex>
#include <string>

#include "core/bootstrap/store.h"
#include "core/bootstrap/store_protocol.h"

namespace smd {

class TcpStoreClient : public Store {
 public:
  // Connects to host:port (a name or IPv4 address) and presents token,
  // rank, world_size and epoch (store_epoch.h). The server may start later
  // than the client: refused or unreachable connects, connections lost
  // before the HELLO is answered and RETRY answers (a store of another
  // epoch of this job, one still shutting down, or one busy with
  // connections that have not presented their token) are retried with a
  // short backoff until connect_deadline. op_timeout_ms bounds every later request that has no
  // deadline of its own (set, add, check, failed_ranks); < 0 = SMD_TIMEOUT.
  // Throws smd::Error SMD_ERR_BOOTSTRAP when the store cannot be reached by
  // the deadline or refuses this rank ("store at 127.0.0.1:29500 refused
  // this rank: job token mismatch (another job owns this port?)").
  TcpStoreClient(const std::string &host, int port, std::string token, int rank, int world_size,
                 Deadline connect_deadline, int64_t op_timeout_ms = -1, uint32_t epoch = 1);

  // A joiner (smd_comm_join) passes rank -1 and world_size
  // wire::kJoinerHello: the store gives it an id, store_id() after.
  int store_id() const { return rank_; }

  // Closes the connection. Without goodbye() first, the server counts this
  // rank as failed.
  ~TcpStoreClient() override;

  TcpStoreClient(const TcpStoreClient &) = delete;
  TcpStoreClient &operator=(const TcpStoreClient &) = delete;

  // All methods are thread-safe (one request in flight at a time). Errors:
  // SMD_ERR_BOOTSTRAP "lost the store at host:port (rank 0 died?) ..." when
  // the connection breaks; SMD_ERR_TIMEOUT when the store does not answer
  // within the op timeout (get: its deadline, the message names the key);
  // SMD_ERR_INVALID_ARGUMENT for a value over the 64 MiB frame limit;
  // SMD_ERR_INVALID_USAGE for add() on a non-integer value or any call
  // after goodbye().
  void set(const std::string &key, const Bytes &value) override;
  Bytes get(const std::string &key, Deadline deadline) override;
  int64_t add(const std::string &key, int64_t delta) override;
  std::optional<std::vector<bool>> check(const std::vector<std::string> &keys) override;
  std::vector<int> failed_ranks() override;

  // Tells the store this rank leaves cleanly, then closes the connection.
  // Best effort and idempotent: a store that is already gone is not an
  // error (there is no one left to tell).
  void goodbye() override;

  // "tcp store HOST:PORT"
  std::string describe() const override;

 private:
  int connect_with_retry(Deadline deadline);
  // Connects and sends HELLO until the store lets this rank in.
  void join(Deadline deadline);
  // One HELLO on the open connection: true when joined, false (with *why)
  // when it is worth trying again on a new connection.
  bool send_hello(Deadline deadline, std::string *why);
  // Sends a request and returns its reply; what names the request for
  // errors ("GET 'key'"). Caller holds mu_.
  wire::Message call(const wire::Message &request, Deadline deadline, const std::string &what);
  void send_all(const Bytes &frame, Deadline deadline, const std::string &what);
  void recv_exact(uint8_t *buf, size_t size, Deadline deadline, const std::string &what);
  [[noreturn]] void lost(const std::string &what, const std::string &detail);
  // A reply that does not decode (frame header or body): one error for both,
  // and the connection is closed since the stream is out of step.
  [[noreturn]] void garbled(const std::string &what, const char *detail);
  void check_usable(const std::string &what) const;
  Deadline op_deadline() const;
  void expect(const wire::Message &reply, wire::Op op, const std::string &what);
  void disconnect();

  std::string host_;
  int port_;
  std::string address_;  // "host:port"
  std::string token_;
  int rank_;
  int world_size_;
  uint32_t epoch_;
  int64_t op_timeout_ms_;
  mutable std::mutex mu_;
  int fd_ = -1;
  bool said_goodbye_ = false;
  bool connection_lost_ = false;  // set by lost(): the peer went away
};

}  // namespace smd
