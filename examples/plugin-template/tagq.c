/* tagq.c - bucketed FIFO queues keyed by exact tag (see tagq.h). */
#include "tagq.h"

tcp_fifo *tcp_tagq_bucket(tcp_tagq *q, uint64_t tag) {
  /* The core packs communicator and sequence numbers into the tag, so the
   * low bits alone cluster: multiply by a 64-bit odd constant and keep the
   * top bits (Fibonacci hashing). */
  uint64_t h = tag * 0x9e3779b97f4a7c15ull;
  return &q->bucket[h >> 59]; /* 5 bits: TCP_TAG_BUCKETS == 32 */
}

void tcp_tagq_push(tcp_tagq *q, tcp_tagged *e) {
  tcp_fifo_push(tcp_tagq_bucket(q, e->tag), &e->link);
}

tcp_tagged *tcp_tagq_take(tcp_tagq *q, uint64_t tag) {
  tcp_fifo *b = tcp_tagq_bucket(q, tag);
  tcp_link *prev = NULL;
  for (tcp_link *it = b->head; it != NULL; prev = it, it = it->next) {
    tcp_tagged *e = TCP_CONTAINER(it, tcp_tagged, link);
    if (e->tag == tag) {
      tcp_fifo_unlink(b, prev, it);
      return e;
    }
  }
  return NULL;
}

int tcp_tagq_remove(tcp_tagq *q, tcp_tagged *e) {
  return tcp_fifo_remove(tcp_tagq_bucket(q, e->tag), &e->link);
}

tcp_tagged *tcp_tagq_take_any(tcp_tagq *q) {
  for (int i = 0; i < TCP_TAG_BUCKETS; ++i) {
    tcp_link *l = tcp_fifo_pop(&q->bucket[i]);
    if (l != NULL) return TCP_CONTAINER(l, tcp_tagged, link);
  }
  return NULL;
}
