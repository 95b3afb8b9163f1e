/*
 * wire.h - the framing protocol on a TCP connection.
 *
 * Connections are one-way. Each rank dials one connection to every peer it
 * connects to and sends all its frames for that peer on it; it receives
 * the peer's frames on the connection the peer dialed. So a connection
 * carries a HELLO and then frames in one direction only, and "who dials
 * whom" never races: both sides dial, each its own connection. (It also
 * means a reset of one direction cannot discard data of the other.)
 *
 * Every frame starts with a 32-byte header, integers big-endian:
 *
 *   offset  size  field
 *        0     4  kind   (TCP_FRAME_*)
 *        4     4  flags  (TCP_DATA_LAST, TCP_DATA_ABORT; version in HELLO)
 *        8     8  tag
 *       16     8  size   (payload bytes that follow, or see below)
 *       24     8  id     (a send's rendezvous id)
 *
 * Frames:
 *   HELLO    first frame of a connection: flags = TCP_WIRE_VERSION,
 *            tag = the nonce of the listener being greeted (from its
 *            address blob), size = the dialer's rank, id = world size.
 *   EAGER    a whole message: tag, size, then `size` payload bytes
 *            (size <= TCP_EAGER_LIMIT).
 *   RTS      "ready to send" a large message: tag, size, id; no payload.
 *   CTS      "clear to send", the receiver's answer to an RTS once a
 *            receive matched it: id = the RTS's id, size = how many bytes
 *            to send (the receive's capacity, if smaller: truncation).
 *   DATA     size payload bytes of the oldest CTS'd message; the last
 *            chunk has TCP_DATA_LAST; TCP_DATA_ABORT (no payload) ends a
 *            message whose send was cancelled mid-way.
 *   RETRACT  tag, id: the sender cancelled the send of that RTS; drop it
 *            if it is still unexpected.
 *
 * Small messages go eagerly (one frame, buffered by the receiver if no
 * receive is posted yet). Large ones use the RTS/CTS rendezvous so that an
 * unexpected 1 GiB message costs the receiver 32 bytes, not 1 GiB: the
 * payload travels only once a receive is waiting, straight into its
 * buffer.
 *
 * DATA frames carry no receive id. TCP keeps order, the sender answers
 * CTS frames in the order they arrive and streams one message at a time,
 * so DATA always belongs to the oldest receive whose CTS went out: the
 * receiver keeps those receives in a FIFO.
 */
#ifndef TCP_WIRE_H
#define TCP_WIRE_H

#include <stdint.h>

#define TCP_WIRE_VERSION 1u
#define TCP_HEADER_SIZE 32

/* Largest message sent eagerly. Larger ones take the rendezvous. */
#define TCP_EAGER_LIMIT (64u * 1024u)
/* DATA frames carry at most this much, so frames for other messages
 * (CTS, small sends) are never stuck behind a whole 1 GiB payload: a
 * frame queued while a chunk is half written waits for the rest of it.
 * Receivers take DATA frames of any size up to what their CTS asked for. */
#define TCP_CHUNK (256u * 1024u)

enum tcp_frame_kind {
  TCP_FRAME_HELLO = 1,
  TCP_FRAME_EAGER = 2,
  TCP_FRAME_RTS = 3,
  TCP_FRAME_CTS = 4,
  TCP_FRAME_DATA = 5,
  TCP_FRAME_RETRACT = 6
};

#define TCP_DATA_LAST 1u
#define TCP_DATA_ABORT 2u

typedef struct tcp_frame {
  uint32_t kind;
  uint32_t flags;
  uint64_t tag;
  uint64_t size;
  uint64_t id;
} tcp_frame;

void tcp_frame_encode(unsigned char out[TCP_HEADER_SIZE], const tcp_frame *f);
void tcp_frame_decode(const unsigned char in[TCP_HEADER_SIZE], tcp_frame *f);
const char *tcp_frame_name(uint32_t kind);

/* Big-endian integers, also used by the address blob. */
void tcp_put_u16(unsigned char *p, uint16_t v);
void tcp_put_u32(unsigned char *p, uint32_t v);
void tcp_put_u64(unsigned char *p, uint64_t v);
uint16_t tcp_get_u16(const unsigned char *p);
uint32_t tcp_get_u32(const unsigned char *p);
uint64_t tcp_get_u64(const unsigned char *p);

#endif /* TCP_WIRE_H */
