/* cacheline_probe: the cost of handing data from one core to another, the
 * two microbenchmarks docs/PERFORMANCE.md quotes.
 *
 *   pingpong  two threads, pinned to two CPUs, bounce one cache line: thread
 *             A stores an odd number and waits for B's even answer, B waits
 *             for it and stores the next one. A round trip is two line
 *             transfers; reported in ns (min, median, max over --reps
 *             repetitions of --iters round trips).
 *   handoff   thread A copies SIZE bytes (default 64 KiB) from a private
 *             source into a buffer that thread B read just before (its lines
 *             sit in B's cache), then B reads the whole buffer; A's copy uses
 *             ordinary stores (memcpy) or non-temporal ones (SSE2 streaming
 *             stores, which hand the lines over through memory instead of
 *             taking them back from B's cache). Reported in us per copy and
 *             per read (median and min over --iters handoffs).
 *
 * The CPUs are the first two of the process's affinity mask unless --cpus
 * A,B names them; with fewer than two CPUs nothing is measured (exit 0, a
 * note). Output: one JSON object per measurement with --json, else a table.
 *
 * usage: cacheline_probe [--json] [--quick] [--cpus A,B] [--iters N] [--reps R]
 *                        [--size BYTES] [--test pingpong|handoff|all]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define LINE 64

typedef struct {
  int json, cpu[2], iters, reps;
  size_t size;
  int pingpong, handoff;
} opts_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static int pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void usage(const char *msg) {
  fprintf(stderr,
          "cacheline_probe: %s\nusage: cacheline_probe [--json] [--quick] [--cpus A,B] [--iters N] "
          "[--reps R] "
          "[--size BYTES] [--test pingpong|handoff|all]\n",
          msg);
  exit(2);
}

/* ---- pingpong ------------------------------------------------------------------- */

typedef struct {
  _Alignas(LINE) _Atomic uint64_t line; /* the bounced line, alone in it */
  _Alignas(LINE) int cpu, iters;
} pingpong_t;

static void *pong(void *arg) {
  pingpong_t *pp = arg;
  pin(pp->cpu);
  for (uint64_t i = 0; i < (uint64_t)pp->iters; ++i) {
    while (atomic_load_explicit(&pp->line, memory_order_acquire) != 2 * i + 1) {
    }
    atomic_store_explicit(&pp->line, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

/* One repetition: ns per round trip, or < 0 if a thread could not start. */
static double pingpong_once(const opts_t *o) {
  static pingpong_t pp;
  atomic_store(&pp.line, 0);
  pp.cpu = o->cpu[1];
  pp.iters = o->iters;
  pthread_t t;
  if (pthread_create(&t, NULL, pong, &pp)) return -1;
  double t0 = now_s();
  for (uint64_t i = 0; i < (uint64_t)o->iters; ++i) {
    atomic_store_explicit(&pp.line, 2 * i + 1, memory_order_release);
    while (atomic_load_explicit(&pp.line, memory_order_acquire) != 2 * i + 2) {
    }
  }
  double ns = (now_s() - t0) * 1e9 / o->iters;
  pthread_join(t, NULL);
  return ns;
}

static void run_pingpong(const opts_t *o) {
  double *v = calloc(o->reps, sizeof *v);
  if (!v) usage("out of memory");
  for (int r = 0; r < o->reps; ++r) v[r] = pingpong_once(o);
  qsort(v, o->reps, sizeof *v, cmp_double);
  if (o->json)
    printf(
        "{\"probe\": \"cacheline\", \"test\": \"pingpong\", \"cpus\": [%d, %d], \"iters\": %d, "
        "\"reps\": %d, "
        "\"round_trip_ns_min\": %.1f, \"round_trip_ns_median\": %.1f, \"round_trip_ns_max\": "
        "%.1f}\n",
        o->cpu[0], o->cpu[1], o->iters, o->reps, v[0], v[o->reps / 2], v[o->reps - 1]);
  else
    printf(
        "pingpong  CPUs %d,%d  %d round trips x %d reps: round trip %.1f ns median (min %.1f, max "
        "%.1f)\n",
        o->cpu[0], o->cpu[1], o->iters, o->reps, v[o->reps / 2], v[0], v[o->reps - 1]);
  free(v);
}

/* ---- handoff -------------------------------------------------------------------- */

typedef struct {
  _Alignas(LINE) _Atomic int turn; /* 0: the writer's turn, 1: the reader's */
  _Alignas(LINE) const opts_t *o;
  unsigned char *shared;
  int nontemporal;
  double *read_us;
  volatile uint64_t sink;
} handoff_t;

static void copy_stream(unsigned char *dst, const unsigned char *src, size_t n) {
#ifdef __SSE2__
  for (size_t i = 0; i + 16 <= n; i += 16)
    _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
  _mm_sfence();
#else
  memcpy(dst, src, n);
#endif
}

static uint64_t read_all(const unsigned char *p, size_t n) {
  uint64_t acc = 0;
  for (size_t i = 0; i < n; i += sizeof(uint64_t)) {
    uint64_t x;
    memcpy(&x, p + i, sizeof x);
    acc += x;
  }
  return acc;
}

static void *reader(void *arg) {
  handoff_t *h = arg;
  pin(h->o->cpu[1]);
  for (int i = -1; i < h->o->iters; ++i) { /* i = -1: the first read warms B's cache */
    while (i >= 0 && atomic_load_explicit(&h->turn, memory_order_acquire) != 1) {
    }
    double t0 = now_s();
    h->sink += read_all(h->shared, h->o->size);
    if (i >= 0) h->read_us[i] = (now_s() - t0) * 1e6;
    atomic_store_explicit(&h->turn, 0, memory_order_release);
  }
  return NULL;
}

static void run_handoff(const opts_t *o, int nontemporal) {
  handoff_t h = {0};
  h.o = o;
  h.nontemporal = nontemporal;
  unsigned char *src = aligned_alloc(LINE, o->size);
  h.shared = aligned_alloc(LINE, o->size);
  h.read_us = calloc(o->iters, sizeof(double));
  double *write_us = calloc(o->iters, sizeof(double));
  if (!src || !h.shared || !h.read_us || !write_us) usage("out of memory");
  for (size_t i = 0; i < o->size; ++i) src[i] = (unsigned char)i, h.shared[i] = 0;
  atomic_store(&h.turn, 1); /* the reader starts by reading (warming its cache) */
  pthread_t t;
  if (pthread_create(&t, NULL, reader, &h)) usage("cannot start a thread");
  for (int i = 0; i < o->iters; ++i) {
    while (atomic_load_explicit(&h.turn, memory_order_acquire) != 0) {
    }
    src[i % o->size] ^= 1; /* the copy is never the same twice */
    double t0 = now_s();
    if (nontemporal) copy_stream(h.shared, src, o->size);
    else memcpy(h.shared, src, o->size);
    write_us[i] = (now_s() - t0) * 1e6;
    atomic_store_explicit(&h.turn, 1, memory_order_release);
  }
  pthread_join(t, NULL);
  qsort(write_us, o->iters, sizeof(double), cmp_double);
  qsort(h.read_us, o->iters, sizeof(double), cmp_double);
  const char *kind = nontemporal ? "nontemporal" : "ordinary";
  if (o->json)
    printf(
        "{\"probe\": \"cacheline\", \"test\": \"handoff\", \"stores\": \"%s\", \"cpus\": [%d, %d], "
        "\"bytes\": %zu, \"iters\": %d, \"write_us_median\": %.2f, \"write_us_min\": %.2f, "
        "\"read_us_median\": %.2f, \"read_us_min\": %.2f}\n",
        kind, o->cpu[0], o->cpu[1], o->size, o->iters, write_us[o->iters / 2], write_us[0],
        h.read_us[o->iters / 2], h.read_us[0]);
  else
    printf(
        "handoff   CPUs %d,%d  %zu bytes, %-11s stores: write %.2f us, then read %.2f us (medians "
        "of %d; "
        "min %.2f, %.2f)\n",
        o->cpu[0], o->cpu[1], o->size, kind, write_us[o->iters / 2], h.read_us[o->iters / 2],
        o->iters, write_us[0], h.read_us[0]);
  free(src);
  free(h.shared);
  free(h.read_us);
  free(write_us);
}

/* ---- main ----------------------------------------------------------------------- */

static opts_t parse(int argc, char **argv) {
  opts_t o = {0, {-1, -1}, 1000000, 5, 64 * 1024, 1, 1};
  int quick = 0, iters_set = 0, reps_set = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) {
      o.json = 1;
      continue;
    }
    if (!strcmp(a, "--quick")) {
      quick = 1;
      continue;
    }
    if (i + 1 >= argc) usage("option needs a value");
    const char *v = argv[++i];
    if (!strcmp(a, "--cpus")) {
      if (sscanf(v, "%d,%d", &o.cpu[0], &o.cpu[1]) != 2 || o.cpu[0] < 0 || o.cpu[1] < 0 ||
          o.cpu[0] == o.cpu[1])
        usage("--cpus needs two different CPU numbers A,B");
    } else if (!strcmp(a, "--iters")) o.iters = atoi(v), iters_set = 1;
    else if (!strcmp(a, "--reps")) o.reps = atoi(v), reps_set = 1;
    else if (!strcmp(a, "--size")) o.size = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--test")) {
      o.pingpong = !strcmp(v, "pingpong") || !strcmp(v, "all");
      o.handoff = !strcmp(v, "handoff") || !strcmp(v, "all");
      if (!o.pingpong && !o.handoff) usage("--test is pingpong, handoff or all");
    } else usage("unknown option");
  }
  if (quick) {
    if (!iters_set) o.iters = 10000;
    if (!reps_set) o.reps = 3;
  }
  if (o.iters < 1 || o.reps < 1) usage("--iters and --reps must be >= 1");
  if (o.size < LINE || o.size % LINE) usage("--size must be a positive multiple of 64");
  return o;
}

int main(int argc, char **argv) {
  opts_t o = parse(argc, argv);
  if (o.cpu[0] < 0) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) usage("sched_getaffinity failed");
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; ++c)
      if (CPU_ISSET(c, &set)) o.cpu[k++] = c;
    if (o.cpu[1] < 0) {
      printf(
          o.json
              ? "{\"probe\": \"cacheline\", \"note\": \"fewer than two CPUs: nothing measured\"}\n"
              : "cacheline_probe: fewer than two CPUs: nothing measured\n");
      return 0;
    }
  }
  /* The main thread is A; the threads it starts pin themselves to B. */
  if (pin(o.cpu[1])) usage("cannot run on the second CPU (see --cpus)");
  if (pin(o.cpu[0])) usage("cannot run on the first CPU (see --cpus)");
  if (o.pingpong) run_pingpong(&o);
  if (o.handoff) {
    opts_t h = o;
    if (h.iters > 2000) h.iters = 2000; /* handoffs take microseconds, not nanoseconds */
    run_handoff(&h, 0);
#ifdef __SSE2__
    run_handoff(&h, 1);
#else
    printf(o.json ? "{\"probe\": \"cacheline\", \"note\": \"no SSE2: no non-temporal handoff\"}\n"
                  : "cacheline_probe: no SSE2: no non-temporal handoff\n");
#endif
  }
  fflush(stdout);
  return 0;
}
