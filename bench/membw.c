/* membw: the memory-bandwidth probe behind bench/compare.sh's reference rate.
 *
 * Kernels (float32 arrays, SIZE bytes per array):
 *   memcpy  dst = src             (glibc memcpy)
 *   add     c[i] = a[i] + b[i]    (read two, write one: the reduction step)
 * each with 1 and 2 threads (pthreads; each thread takes a contiguous half),
 * for each SIZE (default 256 MiB: DRAM; 4 MiB: in cache where the L3 holds
 * the arrays, which bench/report.py checks against the measured L3).
 *
 * Every repetition is timed barrier to barrier; the tool reports the best and
 * the median over repetitions, as
 *   gbps        bytes copied (memcpy) or bytes of output (add) per second
 *   traffic     total memory traffic per second: 2 x SIZE for memcpy (read +
 *               write), 3 x SIZE for add (read a, read b, write c). The
 *               read-for-ownership of a cached store is NOT counted: the
 *               reference counts logical traffic in the same way.
 *
 * Output: one JSON object per (kernel, threads, size) with --json, else a
 * table.  usage: membw [--json] [--sizes 256M,4M] [--threads 1,2] [--min-time S]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K_MEMCPY, K_ADD };
static const char *kname[] = {"memcpy", "add"};

typedef struct {
  pthread_barrier_t *start, *stop;
  int kernel, inner;
  float *a, *b, *c;
  size_t n; /* elements of this thread's part */
  volatile int *quit;
  double t_start, t_end; /* of the last repetition, taken by the worker itself */
} worker_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_kernel(int kernel, float *restrict c, const float *restrict a,
                       const float *restrict b, size_t n) {
  if (kernel == K_MEMCPY) {
    memcpy(c, a, n * sizeof(float));
  } else {
    for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  }
}

static void *worker(void *arg) {
  worker_t *w = arg;
  for (;;) {
    pthread_barrier_wait(w->start);
    if (*w->quit) return NULL;
    w->t_start = now_s();
    for (int k = 0; k < w->inner; ++k) run_kernel(w->kernel, w->c, w->a, w->b, w->n);
    w->t_end = now_s();
    pthread_barrier_wait(w->stop);
  }
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  else if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

static void *alloc_touch(size_t bytes, float init) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes) != 0) {
    perror("membw: posix_memalign");
    exit(1);
  }
  float *f = p;
  for (size_t i = 0; i < bytes / sizeof(float); ++i) f[i] = init + (float)(i & 7);
  return p;
}

/* Runs one (kernel, threads, size) point; fills best/median seconds per pass. */
static void measure(int kernel, int nthreads, size_t bytes, double min_time, int reps, double *best,
                    double *median) {
  size_t n = bytes / sizeof(float);
  float *a = alloc_touch(bytes, 1.0f), *b = alloc_touch(bytes, 2.0f), *c = alloc_touch(bytes, 0.0f);
  /* Enough passes per timed repetition that it lasts about min_time / reps. */
  run_kernel(kernel, c, a, b, n);
  double t0 = now_s();
  run_kernel(kernel, c, a, b, n);
  double one = now_s() - t0;
  int inner = (int)(min_time / reps / (one > 1e-7 ? one : 1e-7));
  if (inner < 1) inner = 1;
  if (inner > 100000) inner = 100000;

  pthread_barrier_t start, stop;
  pthread_barrier_init(&start, NULL, nthreads + 1);
  pthread_barrier_init(&stop, NULL, nthreads + 1);
  volatile int quit = 0;
  pthread_t tid[64];
  worker_t w[64];
  size_t per = (n / nthreads) & ~(size_t)15;
  for (int t = 0; t < nthreads; ++t) {
    size_t off = per * t, cnt = t == nthreads - 1 ? n - off : per;
    w[t] = (worker_t){&start, &stop, kernel, inner, a + off, b + off, c + off, cnt, &quit, 0, 0};
    pthread_create(&tid[t], NULL, worker, &w[t]);
  }
  double *times = calloc(reps, sizeof(double));
  /* The workers time themselves: with as many workers as CPUs, this (main)
   * thread may not run between the barriers. A repetition lasts from the first
   * worker's start to the last worker's end. */
  for (int r = 0; r < reps; ++r) {
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&stop);
    double t0 = w[0].t_start, t1 = w[0].t_end;
    for (int t = 1; t < nthreads; ++t) {
      if (w[t].t_start < t0) t0 = w[t].t_start;
      if (w[t].t_end > t1) t1 = w[t].t_end;
    }
    times[r] = (t1 - t0) / inner;
  }
  quit = 1;
  pthread_barrier_wait(&start);
  for (int t = 0; t < nthreads; ++t) pthread_join(tid[t], NULL);
  qsort(times, reps, sizeof(double), cmp_double);
  *best = times[0];
  *median = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
  free(times);
  free(a);
  free(b);
  free(c);
  pthread_barrier_destroy(&start);
  pthread_barrier_destroy(&stop);
}

int main(int argc, char **argv) {
  int json = 0, reps = 7;
  double min_time = 0.7; /* seconds per point, all repetitions together */
  char sizes_arg[256] = "256M,4M", threads_arg[64] = "1,2";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      snprintf(sizes_arg, sizeof sizes_arg, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      snprintf(threads_arg, sizeof threads_arg, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) min_time = atof(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else {
      fprintf(
          stderr,
          "usage: membw [--json] [--sizes 256M,4M] [--threads 1,2] [--min-time S] [--reps R]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (!json)
    printf("# %-7s %7s %10s %12s %12s %14s %14s\n", "kernel", "threads", "bytes", "best_GB/s",
           "median_GB/s", "best_traffic", "median_traffic");
  char sbuf[256];
  snprintf(sbuf, sizeof sbuf, "%s", sizes_arg);
  for (char *ss = NULL, *s = strtok_r(sbuf, ",", &ss); s; s = strtok_r(NULL, ",", &ss)) {
    size_t bytes = parse_size(s) & ~(size_t)4095;
    for (int kernel = K_MEMCPY; kernel <= K_ADD; ++kernel) {
      char tbuf[64];
      snprintf(tbuf, sizeof tbuf, "%s", threads_arg);
      for (char *ts = NULL, *t = strtok_r(tbuf, ",", &ts); t; t = strtok_r(NULL, ",", &ts)) {
        int nthreads = atoi(t);
        if (nthreads < 1 || nthreads > 64) continue;
        double best, median;
        measure(kernel, nthreads, bytes, min_time, reps, &best, &median);
        double streams = kernel == K_MEMCPY ? 2.0 : 3.0;
        double g_best = bytes / best / 1e9, g_med = bytes / median / 1e9;
        if (json)
          printf(
              "{\"probe\": \"membw\", \"kernel\": \"%s\", \"threads\": %d, \"bytes\": %zu, "
              "\"best_gbps\": %.3f, \"median_gbps\": %.3f, \"best_traffic_gbps\": %.3f, "
              "\"median_traffic_gbps\": %.3f, \"traffic_per_byte\": %.0f, \"reps\": %d}\n",
              kname[kernel], nthreads, bytes, g_best, g_med, g_best * streams, g_med * streams,
              streams, reps);
        else
          printf("  %-7s %7d %10zu %12.2f %12.2f %14.2f %14.2f\n", kname[kernel], nthreads, bytes,
                 g_best, g_med, g_best * streams, g_med * streams);
        fflush(stdout);
      }
    }
  }
  return 0;
}
