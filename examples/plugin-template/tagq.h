/*
 * tagq.h - tag matching: posted receives and unexpected messages.
 *
 * The ABI's matching rule (smd_transport.h, isend/irecv): a receive takes
 * a message from its endpoint with exactly its tag; messages of one tag
 * match in the order they were sent; different tags match in any order.
 * There are no wildcards. So per peer we keep two queues, both FIFO per
 * tag:
 *   posted      receives waiting for a message,
 *   unexpected  messages that arrived before their receive,
 * and for any (peer, tag) at most one of them is non-empty: an arriving
 * message first looks for a posted receive, a new receive first looks for
 * an unexpected message.
 *
 * Thousands of requests may be outstanding, so a queue is split into
 * buckets by a hash of the tag; each bucket is one FIFO in arrival order,
 * and the first entry with the tag in its bucket is the oldest with that
 * tag. Matching scans only entries whose tags share the bucket.
 */
#ifndef TCP_TAGQ_H
#define TCP_TAGQ_H

#include <stdint.h>

#include "list.h"

#define TCP_TAG_BUCKETS 32

/* What a tag queue holds: embed one in the queued object. */
typedef struct tcp_tagged {
  tcp_link link;
  uint64_t tag;
} tcp_tagged;

typedef struct tcp_tagq {
  tcp_fifo bucket[TCP_TAG_BUCKETS];
} tcp_tagq;

void tcp_tagq_push(tcp_tagq *q, tcp_tagged *e);
/* The oldest entry with exactly `tag`, removed; NULL if none. */
tcp_tagged *tcp_tagq_take(tcp_tagq *q, uint64_t tag);
/* Removes `e` if queued (cancel); returns 1 if it was. */
int tcp_tagq_remove(tcp_tagq *q, tcp_tagged *e);
/* Any entry, removed; NULL when empty (teardown). */
tcp_tagged *tcp_tagq_take_any(tcp_tagq *q);
/* The bucket `tag` falls in, for callers that search it themselves. */
tcp_fifo *tcp_tagq_bucket(tcp_tagq *q, uint64_t tag);

#endif /* TCP_TAGQ_H */
