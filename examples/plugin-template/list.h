/*
 * list.h - an intrusive singly linked FIFO, the only container the plugin
 * needs.
 *
 * "Intrusive" means the link lives inside the object that is queued (a
 * request, a frame, an unexpected message), so queueing never allocates:
 * isend and irecv cannot fail half-way because a list node could not be
 * allocated. TCP_CONTAINER gets from the link back to its object.
 */
#ifndef TCP_LIST_H
#define TCP_LIST_H

#include <stddef.h>

typedef struct tcp_link {
  struct tcp_link *next;
} tcp_link;

typedef struct tcp_fifo {
  tcp_link *head;
  tcp_link *tail;
} tcp_fifo;

#define TCP_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline int tcp_fifo_empty(const tcp_fifo *q) { return q->head == NULL; }

static inline void tcp_fifo_push(tcp_fifo *q, tcp_link *l) {
  l->next = NULL;
  if (q->tail != NULL) q->tail->next = l;
  else q->head = l;
  q->tail = l;
}

static inline tcp_link *tcp_fifo_pop(tcp_fifo *q) {
  tcp_link *l = q->head;
  if (l == NULL) return NULL;
  q->head = l->next;
  if (q->head == NULL) q->tail = NULL;
  l->next = NULL;
  return l;
}

/* Unlinks `l` given the link before it (NULL when `l` is the head). */
static inline void tcp_fifo_unlink(tcp_fifo *q, tcp_link *prev, tcp_link *l) {
  if (prev != NULL) prev->next = l->next;
  else q->head = l->next;
  if (q->tail == l) q->tail = prev;
  l->next = NULL;
}

/* Removes `l` if it is queued; linear, used only on the rare paths
 * (cancel, a peer's retraction). Returns 1 if it was found. */
static inline int tcp_fifo_remove(tcp_fifo *q, tcp_link *l) {
  tcp_link *prev = NULL;
  for (tcp_link *it = q->head; it != NULL; prev = it, it = it->next)
    if (it == l) {
      tcp_fifo_unlink(q, prev, l);
      return 1;
    }
  return 0;
}

#endif /* TCP_LIST_H */
