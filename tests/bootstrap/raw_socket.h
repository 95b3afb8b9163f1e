// Plain sockets for tests that talk to the store server byte by byte,
// the way a broken or hostile peer would.
#pragma once

#include <optional>
#include <string>

#include "core/bootstrap/store_protocol.h"

namespace smd::test {

// A blocking IPv4 connection to 127.0.0.1:port (receives time out after
// 5 s so a test cannot hang); the test closes it.
int raw_connect(int port);

// Writes all of data; false if the connection broke.
bool raw_send(int fd, const Bytes &data);

// Reads one reply frame, or nullopt if the connection ended first.
std::optional<wire::Message> raw_reply(int fd);

// Whether the server closes the connection within timeout_ms (whatever it
// sends before that is read and dropped).
bool closed_by_peer(int fd, int timeout_ms = 60000);

// A port nothing listens on right now.
int free_port();

// The frame of a HELLO.
Bytes hello_frame(const std::string &token, int rank, int world_size,
                  uint32_t version = wire::kVersion, uint32_t epoch = 1);

}  // namespace smd::test
