// The TCP key-value store that rank 0 serves for the world to form through.
//
// One background thread runs a poll loop over a nonblocking listening
// socket and every connection, so hundreds of ranks may join at once and a
// slow, silent or hostile peer never holds up the others. Only clients that
// open with a HELLO carrying the job token, the world size and a rank of
// the world not already connected are let in; anything malformed closes
// that one connection. Connections that have not yet presented the token
// are few and short-lived: at most unauthenticated_cap() at once (newer
// ones get RETRY and are closed) and each closed after a few seconds
// without a HELLO, so strangers cannot use up the job's file descriptors.
// A HELLO of another epoch of the job gets RETRY. GETs of absent keys wait inside the server (one
// waiter per connection, answered when the key is set or at the deadline
// the client sent). A rank whose connection closes without GOODBYE is
// remembered as failed. Wire format: store_protocol.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/util/clock.h"

namespace smd {

class TcpStoreServer {
 public:
  // Listens on bind_host:port ("" = every IPv4 interface; a host name or
  // address otherwise; port 0 = an ephemeral port, see port()) and starts
  // serving. Clients must present `token`, `world_size` and `epoch`.
  // Throws smd::Error: SMD_ERR_INVALID_ARGUMENT for a bad port or world
  // size, SMD_ERR_BOOTSTRAP when the address cannot be resolved or bound
  // ("cannot serve the store on port 29500: Address already in use ...").
  TcpStoreServer(const std::string &bind_host, int port, std::string token, int world_size,
                 uint32_t epoch = 1);

  // Stops the thread and closes every socket; clients still connected see
  // the store as lost. Does not wait for clients: call
  // wait_for_clients_to_leave() first for a clean exit.
  ~TcpStoreServer();

  TcpStoreServer(const TcpStoreServer &) = delete;
  TcpStoreServer &operator=(const TcpStoreServer &) = delete;

  // The port actually listened on (the ephemeral one when 0 was asked).
  int port() const;

  // How many connections may wait for their HELLO at once: an eighth of
  // the file descriptor limit at construction, between 4 and 256.
  int unauthenticated_cap() const;

  // Waits until no rank is connected without having said goodbye (every
  // rank that joined has said goodbye or disconnected), or the deadline.
  // Returns whether that happened. Rank 0 calls this after its own
  // client's goodbye() and before destroying the server, so that slower
  // ranks finish their last store operations. Thread-safe.
  bool wait_for_clients_to_leave(Deadline deadline);

  // Ranks whose connection closed without GOODBYE and that have not joined
  // again since, sorted (what clients' failed_ranks() return). Thread-safe.
  std::vector<int> failed_ranks() const;

  // Ranks connected now and not yet gone (HELLO accepted, no GOODBYE, not
  // disconnected), sorted. Thread-safe.
  std::vector<int> connected_ranks() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smd
