/*
 * tcp.h - the state of the TCP transport plugin and the internal functions
 * its source files share. Nothing here is visible outside the plugin: the
 * only exported symbol is smd_transport_plugin_v1 (entry.c), and the build
 * hides everything else (-fvisibility=hidden).
 *
 * Objects and who owns them:
 *
 *   tcp_ctx        one per init(): the listening socket, one tcp_peer per
 *                  world rank, every live request (so finalize can free
 *                  what the core never tested).
 *   tcp_peer       one per world rank; the endpoint handed to the core is a
 *                  pointer to it. Two one-way connections: out_fd (we
 *                  dialed; our frames to the peer) and in_fd (the peer
 *                  dialed; its frames to us). See wire.h.
 *   tcp_request    one per isend/irecv; the request handle is a pointer to
 *                  it. The core owns it until test() reports it done or
 *                  cancel() gives it back; the wire may hold on to a
 *                  cancelled one a little longer (`cancelled`).
 *   tcp_out        a frame waiting to be written: embedded in the request
 *                  it belongs to, so queueing never allocates.
 *   tcp_unexpected a message that arrived before its receive.
 */
#ifndef TCP_PLUGIN_H
#define TCP_PLUGIN_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4, ppoll, SOCK_NONBLOCK, TCP_USER_TIMEOUT */
#endif

#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include <smd_transport.h>

#include "list.h"
#include "tagq.h"
#include "wire.h"

typedef smd_transport_status_t tcp_status;
typedef struct tcp_ctx tcp_ctx;
typedef struct tcp_peer tcp_peer;
typedef struct tcp_request tcp_request;

/* Magic numbers let the entry points refuse a handle that is not ours. */
#define TCP_CTX_MAGIC 0x74637063u  /* "tcpc" */
#define TCP_PEER_MAGIC 0x74637065u /* "tcpe" */
#define TCP_REQ_MAGIC 0x74637072u  /* "tcpr" */

/* Size of the address blob (address.c). */
#define TCP_ADDRESS_SIZE 24

/* A frame waiting in a peer's send queue, or being written. */
typedef struct tcp_out {
  tcp_link link; /* in tcp_peer.sendq */
  unsigned char header[TCP_HEADER_SIZE];
  uint32_t kind; /* TCP_FRAME_* of the header, for completion */
  uint32_t flags;
  const char *payload; /* bytes after the header (user memory or `copy`) */
  size_t payload_len;
  size_t written;     /* of header + payload */
  char *copy;         /* owned payload after a cancel (send.c) */
  int queued;         /* in sendq, or the frame being written */
  tcp_request *owner; /* NULL for a connection's HELLO */
} tcp_out;

typedef enum tcp_req_kind { TCP_REQ_SEND = 1, TCP_REQ_RECV = 2 } tcp_req_kind;

/* Where a request is; each state but DONE has exactly one place. */
typedef enum tcp_req_state {
  TCP_SEND_QUEUED,     /* its EAGER or RTS frame is in peer->sendq */
  TCP_SEND_WAIT_CTS,   /* RTS written; in peer->awaiting_cts */
  TCP_SEND_STREAMING,  /* CTS came; in peer->bulk, writing DATA */
  TCP_RECV_POSTED,     /* in peer->posted */
  TCP_RECV_EAGER,      /* the reader is copying an EAGER payload into it */
  TCP_RECV_RENDEZVOUS, /* matched an RTS; CTS queued or sent; in
                          peer->awaiting_data */
  TCP_REQ_DONE         /* finished; waits for test() or cancel() */
} tcp_req_state;

struct tcp_request {
  uint32_t magic;
  tcp_req_kind kind;
  tcp_req_state state;
  tcp_ctx *ctx;
  tcp_peer *peer;
  tcp_tagged q;                     /* tag, and the link for whichever queue holds it */
  char *buf;                        /* the caller's buffer */
  size_t size;                      /* send: message size; receive: capacity */
  size_t msg_size;                  /* receive: the size the sender sent */
  size_t accepted;                  /* rendezvous: bytes that travel (<= both sizes) */
  size_t offset;                    /* rendezvous: bytes moved so far */
  uint64_t send_id;                 /* rendezvous: the RTS id */
  tcp_status status;                /* when DONE */
  size_t result;                    /* when DONE: bytes transferred */
  const char *why;                  /* when DONE with ERR_CANCELED: a static reason */
  int cancelled;                    /* the core let go; free once the wire is done */
  tcp_out out;                      /* its EAGER, RTS, DATA or CTS frame */
  tcp_out retract;                  /* its RETRACT frame after a cancel */
  tcp_request *all_prev, *all_next; /* tcp_ctx.requests */
};

/* A message that arrived before a receive was posted for it. */
typedef struct tcp_unexpected {
  tcp_tagged q;
  int rts; /* a rendezvous: no data here, only the RTS */
  size_t size;
  uint64_t send_id; /* rts */
  char *data;       /* eager: the payload (NULL when size is 0) */
} tcp_unexpected;

/* The receiving side of a peer: where the frame being read goes. */
typedef struct tcp_reader {
  unsigned char header[TCP_HEADER_SIZE];
  size_t header_got;
  tcp_frame frame; /* the frame whose payload is being read */
  int in_payload;
  char *dst; /* store the first `keep` payload bytes here, */
  size_t keep;
  size_t skip;        /* then read and drop `skip` more */
  size_t got;         /* payload bytes read so far */
  tcp_request *req;   /* the receive being filled, or NULL */
  tcp_unexpected *ux; /* the unexpected message being filled, or NULL */
} tcp_reader;

struct tcp_peer {
  uint32_t magic;
  tcp_ctx *ctx;
  int rank;
  int connected; /* connect() handed this endpoint to the core */
  int closed;    /* disconnect() was called: no more traffic */
  int dead;      /* its frames to us ended: everything fails */
  char why[200]; /* why it is dead or unreachable */

  /* Our direction: frames we send. */
  struct sockaddr_in addr; /* from its address blob */
  uint64_t nonce;          /* its listener's nonce (HELLO) */
  int out_fd;
  int out_connecting; /* nonblocking connect() not finished yet */
  int out_broken;     /* cannot send to it any more */
  int64_t late_ms;    /* out broke before its connection to us came:
                         when to stop waiting for it (0: not waiting) */
  tcp_out hello;
  tcp_fifo ctrlq;        /* tcp_out: CTS, written before anything else */
  tcp_fifo sendq;        /* tcp_out: HELLO, EAGER, RTS, RETRACT */
  tcp_fifo bulk;         /* requests streaming DATA, oldest CTS first */
  tcp_fifo awaiting_cts; /* sends whose RTS is out */
  tcp_out *current;      /* the frame being written */
  int bulk_turn;         /* alternate DATA chunks with sendq frames */

  /* Its direction: frames we receive. */
  int in_fd;
  tcp_reader rd;
  tcp_tagq posted;
  tcp_tagq unexpected;
  tcp_fifo awaiting_data; /* receives whose CTS went out, in that order */
};

/* A connection accepted on the listening socket, before its HELLO. */
typedef struct tcp_greeting {
  int fd;
  unsigned char header[TCP_HEADER_SIZE];
  size_t got;
  int64_t deadline_ms;
  struct tcp_greeting *next;
} tcp_greeting;

/* What one poll() slot stands for (progress.c). */
typedef enum tcp_slot_role {
  TCP_SLOT_LISTEN,
  TCP_SLOT_GREETING,
  TCP_SLOT_IN,
  TCP_SLOT_OUT
} tcp_slot_role;

struct tcp_ctx {
  uint32_t magic;
  const smd_transport_host_t *host; /* valid until finalize() returns */
  int rank;
  int world_size;
  int listen_fd;
  uint64_t nonce; /* tells our listener apart from a stale one */
  unsigned char address[TCP_ADDRESS_SIZE];
  char address_text[64]; /* "192.0.2.7:40311", for messages */
  tcp_peer *peers;       /* world_size entries */
  tcp_greeting *greetings;
  uint64_t next_send_id;
  tcp_request *requests; /* every live request */
  /* poll() set, rebuilt on each progress pass */
  struct pollfd *slots;
  tcp_slot_role *slot_role;
  void **slot_obj; /* tcp_peer or tcp_greeting */
  size_t slot_cap;
  char scratch[64 * 1024]; /* destination of payload bytes we drop */
};

/* ---- host.c: the host services ------------------------------------- */
/* Explains a failure through host->set_error and returns `st`. */
tcp_status tcp_fail(tcp_ctx *ctx, tcp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
tcp_status tcp_fail_host(const smd_transport_host_t *host, tcp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tcp_log(tcp_ctx *ctx, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int64_t tcp_now_ms(void);

/* ---- address.c: the address blob -------------------------------------- */
tcp_status tcp_address_choose(const smd_transport_host_t *host, struct in_addr *addr, char *how,
                              size_t how_len);
void tcp_address_encode(unsigned char out[TCP_ADDRESS_SIZE], struct in_addr addr, uint16_t port,
                        uint64_t nonce);
/* Returns 0 and fills addr and nonce, or -1 with the reason in `why`. */
int tcp_address_decode(const void *blob, size_t size, struct sockaddr_in *addr, uint64_t *nonce,
                       char *why, size_t why_len);

/* ---- socket.c: sockets --------------------------------------------- */
int tcp_socket_listen(struct in_addr bind_addr, int *fd, uint16_t *port, char *why, size_t why_len);
int tcp_socket_dial(const struct sockaddr_in *addr, int64_t user_timeout_ms, int *fd,
                    int *in_progress, char *why, size_t why_len);
/* 0 once a dial completed, else the errno it failed with. */
int tcp_socket_dial_result(int fd);
void tcp_socket_tune(int fd, int64_t user_timeout_ms);
void tcp_socket_close(int *fd);
/* "192.0.2.7:40311" */
void tcp_socket_text(const struct sockaddr_in *addr, char *buf, size_t len);

/* ---- context.c: init, finalize, get_address --------------------------- */
tcp_status tcp_context_init(const smd_transport_host_t *host, void **ctx);
tcp_status tcp_context_finalize(tcp_ctx *ctx);
tcp_status tcp_context_address(tcp_ctx *ctx, void *buf, size_t *size);

/* ---- connect.c: endpoints and connections ----------------------------- */
tcp_status tcp_endpoint_connect(tcp_ctx *ctx, int32_t rank, const void *blob, size_t size,
                                void **endpoint);
tcp_status tcp_endpoint_disconnect(tcp_ctx *ctx, tcp_peer *p);
void tcp_accept_all(tcp_ctx *ctx);
/* Reads a greeting's HELLO; frees it when it is done or refused. */
void tcp_greeting_read(tcp_ctx *ctx, tcp_greeting *g);
void tcp_greetings_expire(tcp_ctx *ctx);
void tcp_dial_finished(tcp_ctx *ctx, tcp_peer *p);

/* ---- send.c: isend and the writer ------------------------------------- */
tcp_status tcp_send_start(tcp_ctx *ctx, tcp_peer *p, const void *buf, size_t size, uint64_t tag,
                          void **request);
void tcp_send_cancel(tcp_ctx *ctx, tcp_request *r);
/* Writes queued frames until the socket is full. */
void tcp_writer_run(tcp_ctx *ctx, tcp_peer *p);
int tcp_writer_busy(const tcp_peer *p);
void tcp_queue_frame(tcp_peer *p, tcp_out *o, const tcp_frame *f, const char *payload, size_t len);
/* A CTS arrived for one of our RTS frames. */
void tcp_cts_arrived(tcp_ctx *ctx, tcp_peer *p, uint64_t send_id, uint64_t accepted);

/* ---- recv.c: irecv and the reader ------------------------------------- */
tcp_status tcp_recv_start(tcp_ctx *ctx, tcp_peer *p, void *buf, size_t size, uint64_t tag,
                          void **request);
void tcp_recv_cancel(tcp_ctx *ctx, tcp_request *r);
/* Reads and handles frames until the socket is empty. */
void tcp_reader_run(tcp_ctx *ctx, tcp_peer *p);
/* Forgets the frame being read; its receive completes with st. */
void tcp_reader_reset(tcp_ctx *ctx, tcp_peer *p, tcp_status st, const char *why);
void tcp_unexpected_free(tcp_unexpected *ux);

/* ---- request.c: lifetime of requests ---------------------------------- */
tcp_request *tcp_request_new(tcp_ctx *ctx, tcp_peer *p, tcp_req_kind kind, void *buf, size_t size,
                             uint64_t tag);
/* Marks it DONE with a status (or frees it if the core let go). */
void tcp_request_finish(tcp_ctx *ctx, tcp_request *r, tcp_status st, size_t result,
                        const char *why);
/* Frees a cancelled request once no queue or frame refers to it. */
void tcp_request_release_if_idle(tcp_ctx *ctx, tcp_request *r);
void tcp_request_free(tcp_ctx *ctx, tcp_request *r);
tcp_status tcp_request_test(tcp_ctx *ctx, tcp_request *r, int *done, size_t *size);
tcp_status tcp_request_cancel(tcp_ctx *ctx, tcp_request *r);

/* ---- progress.c: the progress engine and failures -------------------- */
/* One pass: poll every socket (up to timeout_us; 0 = do not block),
 * then accept, read and write whatever is ready. */
tcp_status tcp_progress(tcp_ctx *ctx, int64_t timeout_us);
/* The peer's frames to us ended (EOF, reset, protocol error): every
 * request on it completes with ERR_PEER. */
void tcp_peer_fail(tcp_ctx *ctx, tcp_peer *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Our connection to the peer broke: what needs it completes with
 * ERR_PEER; receives wait for the peer's own connection to end (or, if it
 * has none yet, for it to arrive: TCP_LATE_CONNECT_MS). */
void tcp_out_fail(tcp_ctx *ctx, tcp_peer *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* disconnect(): everything pending completes with `st`. */
void tcp_peer_shutdown(tcp_ctx *ctx, tcp_peer *p, tcp_status st, const char *why);

#endif /* TCP_PLUGIN_H */
