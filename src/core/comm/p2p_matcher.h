// The user's point-to-point messages (smd_send / smd_recv), matched in the
// core so that a receive may name any source (SMD_ANY_SOURCE) or any tag
// (SMD_ANY_TAG), whatever transports serve its peers. Each message is an
// envelope (its size and user tag) on the communicator's envelope stream,
// then its payload on the user's tag. Receives take envelopes in the order
// they were posted, envelopes in the order they arrived, so each message
// is received exactly once; the payload is then received from the
// envelope's sender, which the transports match by (peer, tag) in order.
// A sender that must learn how its message was received (a stream-ordered
// send, which has no other way to fail alike with its receiver) flags its
// envelope, and the receiving rank's matcher answers with a receipt.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <smd.h>

#include "core/comm/communicator.h"

namespace smd {

class P2PMatcher {
 public:
  // What travels ahead of every user message.
  struct Envelope {
    uint64_t bytes = 0;
    int32_t tag = 0;
    int32_t flags = 0;  // kWantsReceipt
  };
  static constexpr int32_t kWantsReceipt = 1;
  // The receiving rank's answer to a flagged envelope, once its receive
  // finished: SMD_SUCCESS, or why the message was not taken.
  struct Receipt {
    uint64_t capacity = 0;  // the receive's buffer, in bytes
    int32_t result = SMD_SUCCESS;
    int32_t reserved = 0;
  };

  // A posted receive. peer / tag may be kAnySource / kAnyTag.
  struct Recv {
    int peer, tag;
    void *buf;
    size_t capacity;
    // Only a message of exactly `capacity` bytes (a stream-ordered receive:
    // its count cannot be asked before the stream has run).
    bool exact = false;
    bool wants_receipt = false;  // the sender's envelope asked for one
    // Set once matched: the message's sender, tag and size.
    bool matched = false;
    int source = -1, msg_tag = -1;
    size_t bytes = 0;
    P2PReq data{};
    std::vector<uint8_t> discard{};  // a payload too large for buf, drained
    bool done = false;
    smd_result_t error = SMD_SUCCESS;
    std::string message{};
  };
  static constexpr int kAnySource = SMD_ANY_SOURCE;
  static constexpr int kAnyTag = SMD_ANY_TAG;

  explicit P2PMatcher(Comm &c);
  ~P2PMatcher();  // cancels the envelope receives it has posted

  // A send: the envelope (which must live until both transfers finish) and
  // the payload.
  void isend(int peer, const void *buf, size_t bytes, int tag, Envelope *env, P2PReq *env_req,
             P2PReq *data_req);
  // The same, with a receipt asked for: `receipt_req` receives it into
  // `receipt` (both must live until the three transfers finish).
  void isend_with_receipt(int peer, const void *buf, size_t bytes, int tag, Envelope *env,
                          P2PReq *env_req, P2PReq *data_req, Receipt *receipt, P2PReq *receipt_req);
  std::shared_ptr<Recv> irecv(int peer, int tag, void *buf, size_t capacity, bool exact = false);
  // True once finished; throws smd::Error (a truncated message, a failed
  // peer) once it is, as Comm::test does.
  bool test(Recv &r);
  // Waits with the communicator's deadline and failure checks; a wait that
  // fails cancels the receive.
  void wait(Recv &r, const char *what);
  // Ends an unfinished receive without touching its buffer again (a
  // message it was receiving is dropped).
  void cancel(Recv &r);
  // Matches what it can without blocking, if receives are waiting (other
  // waits of the communicator call it, so that a posted receive's payload
  // moves while its owner waits for something else, as it did before
  // matching moved into the core).
  void poke();

 private:
  // Under mu_: posts envelope receives where none is, takes the envelopes
  // that arrived, matches posted receives in order.
  void progress_locked();
  void match_locked();
  void fail_peer_locked(int peer, smd_result_t code, const std::string &message);
  // Under mu_: answers a finished receive's sender if it asked; drives the
  // receipts in flight.
  void send_receipt_locked(const Recv &r);
  void progress_receipts_locked();
  Comm &comm_;
  uint64_t envelope_tag_;
  std::mutex mu_, send_mu_;
  std::atomic<bool> pending_{false};
  bool started_ = false;
  struct Listener {
    Envelope env;
    P2PReq req;
    bool posted = false;
    smd_result_t error = SMD_SUCCESS;  // the peer failed: no more from it
    std::string message;
  };
  std::vector<Listener> listeners_;  // one per member
  struct Arrival {
    int peer;
    Envelope env;
  };
  std::deque<Arrival> arrived_;
  std::deque<std::shared_ptr<Recv>> waiting_;  // posted, not matched yet
  struct OutgoingReceipt {
    Receipt receipt;
    P2PReq req;
  };
  std::deque<OutgoingReceipt> receipts_;  // sent, not finished yet
};

}  // namespace smd
