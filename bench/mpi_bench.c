/* mpi_bench: the MPI edition of smd-bench, for bench/compare.sh.
 *
 * Same command line spirit and the same JSON keys as smd-bench, so that one
 * parser reads both:
 *   mpirun -np N mpi_bench COLLECTIVE [-b 8] [-e 64M] [-f 2] [-d float32] [-o sum]
 *                          [-n 20] [-w 5] [-c 1] [--json]
 *   COLLECTIVE: allreduce | allgather | reduce_scatter | broadcast
 *     allreduce       MPI_Allreduce            bytes = the vector       busbw = algbw * 2(n-1)/n
 *     allgather       MPI_Allgather            bytes = the whole output busbw = algbw * (n-1)/n
 *     reduce_scatter  MPI_Reduce_scatter_block bytes = the whole input  busbw = algbw * (n-1)/n
 *     broadcast       MPI_Bcast (root 0)       bytes = the vector       busbw = algbw
 * Out of place (as smd-bench's default), except MPI_Bcast, which has one
 * buffer. time_us = max over ranks of the mean time of one iteration, after
 * -w untimed warm-up iterations and a barrier (smd-bench's rule; nccl-tests
 * averages over ranks by default); with -c 1 one extra, untimed run on known
 * values is checked first: the timed calls are not checked ("checked" in the
 * JSON says whether that one was).
 * Only float32 (and float64) with sum are supported: that is what
 * compare.sh needs.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_ALLREDUCE, C_ALLGATHER, C_REDUCE_SCATTER, C_BROADCAST };
static const char *cname[] = {"allreduce", "allgather", "reduce_scatter", "broadcast"};

/* smd-bench's test value for (rank, i) with op sum: a small integer in -2..2
 * (tools/common/values.h), exact in float32, so sums are exact. */
static double value(int rank, size_t i) {
  uint64_t h = ((uint64_t)rank * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  return (double)((int)(h % 5) - 2);
}
static double expected(int p, size_t i) {
  double acc = 0;
  for (int r = 0; r < p; ++r) acc += value(r, i);
  return acc;
}

static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024, ++end;
  else if (*end == 'M' || *end == 'm') v *= 1024 * 1024, ++end;
  else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024, ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end || v < 0) {
    fprintf(stderr, "mpi_bench: bad size '%s'\n", s);
    exit(2);
  }
  return (size_t)v;
}

static void usage(const char *msg) {
  fprintf(stderr,
          "mpi_bench: %s\nusage: mpi_bench allreduce|allgather|reduce_scatter|broadcast [-b MIN] "
          "[-e MAX] "
          "[-f FACTOR] [-d float32|float64] [-o sum] [-n ITERS] [-w WARMUP] [-c 0|1] [--json] "
          "[--rss]\n",
          msg);
  exit(2);
}

typedef struct {
  int coll;
  size_t min_bytes, max_bytes;
  double factor;
  int dbl; /* float64 instead of float32 */
  int iters, warmup, check, json, rss;
} opts_t;

/* A "Vm...:   N kB" line of /proc/self/status, in KiB (0 if unreadable). */
static long long proc_status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long long v = 0;
  size_t n = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, n) && line[n] == ':') {
      v = atoll(line + n + 1);
      break;
    }
  fclose(f);
  return v;
}

static void parse(int argc, char **argv, opts_t *o) {
  *o = (opts_t){C_ALLREDUCE, 8, 64u << 20, 2.0, 0, 20, 5, 1, 0, 0};
  if (argc < 2) usage("no collective given");
  int found = 0;
  for (int c = 0; c < 4; ++c)
    if (!strcmp(argv[1], cname[c])) o->coll = c, found = 1;
  if (!found) usage("unknown collective");
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) {
      o->json = 1;
      continue;
    }
    if (!strcmp(a, "--rss")) {
      o->rss = 1;
      continue;
    }
    if (i + 1 >= argc) usage("option needs a value");
    const char *v = argv[++i];
    if (!strcmp(a, "-b")) o->min_bytes = parse_size(v);
    else if (!strcmp(a, "-e")) o->max_bytes = parse_size(v);
    else if (!strcmp(a, "-f")) o->factor = atof(v);
    else if (!strcmp(a, "-n")) o->iters = atoi(v);
    else if (!strcmp(a, "-w")) o->warmup = atoi(v);
    else if (!strcmp(a, "-c")) o->check = atoi(v) != 0;
    else if (!strcmp(a, "-d")) {
      if (!strcmp(v, "float32")) o->dbl = 0;
      else if (!strcmp(v, "float64")) o->dbl = 1;
      else usage("only float32 and float64 are supported");
    } else if (!strcmp(a, "-o")) {
      if (strcmp(v, "sum")) usage("only op sum is supported");
    } else usage("unknown option");
  }
  if (o->factor <= 1.0 && o->min_bytes != o->max_bytes) usage("-f must be greater than 1");
  if (o->min_bytes > o->max_bytes) usage("-b is larger than -e");
  if (o->iters < 1 || o->warmup < 0) usage("-n must be >= 1 and -w >= 0");
}

static void set(void *buf, size_t i, int dbl, double v) {
  if (dbl) ((double *)buf)[i] = v;
  else ((float *)buf)[i] = (float)v;
}
static double get(const void *buf, size_t i, int dbl) {
  return dbl ? ((const double *)buf)[i] : ((const float *)buf)[i];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  opts_t o;
  parse(argc, argv, &o);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Datatype dt = o.dbl ? MPI_DOUBLE : MPI_FLOAT;
  size_t es = o.dbl ? 8 : 4;
  const char *dname = o.dbl ? "float64" : "float32";
  const long long rss_init_kib = o.rss ? proc_status_kib("VmRSS") : 0;
  size_t user_buffer_bytes = 0; /* buffers the largest size used */
  if (rank == 0 && !o.json) {
    printf("# mpi_bench %s  ranks %d  dtype %s  op sum  iters %d  warmup %d  out-of-place\n",
           cname[o.coll], p, dname, o.iters, o.warmup);
    printf("# %12s %12s %9s %6s %12s %10s %10s %8s\n", "bytes", "count", "type", "op", "time_us",
           "algbw_GB/s", "busbw_GB/s", "errors");
  }
  for (size_t bytes = o.min_bytes;;) {
    if (bytes > o.max_bytes) break;
    size_t total = bytes / es, count, send_elems, recv_elems;
    double factor;
    switch (o.coll) {
      case C_ALLREDUCE:
        count = send_elems = recv_elems = total;
        factor = 2.0 * (p - 1) / p;
        break;
      case C_ALLGATHER:
        count = send_elems = total / p;
        recv_elems = count * p;
        factor = (double)(p - 1) / p;
        break;
      case C_REDUCE_SCATTER:
        count = recv_elems = total / p;
        send_elems = count * p;
        factor = (double)(p - 1) / p;
        break;
      default:
        count = send_elems = recv_elems = total;
        factor = 1.0;
        break;
    }
    /* Zeroed by writing, so every page is resident before the first call (as
     * smd-bench's std::vector buffers are; calloc's untouched zero pages
     * would make reads artificially cheap when -c 0 skips the fill). */
    size_t sb = (send_elems ? send_elems : 1) * es, rb = (recv_elems ? recv_elems : 1) * es;
    if (o.coll == C_BROADCAST) rb = es; /* MPI_Bcast has one buffer */
    void *send = malloc(sb);
    void *recv = malloc(rb);
    /* The empty asm keeps the compiler from turning malloc + memset(0) into
     * calloc, which would leave the pages untouched. */
    __asm__ volatile("" : : "r"(send), "r"(recv) : "memory");
    if (send) memset(send, 0, sb);
    if (recv) memset(recv, 0, rb);
    if (!send || !recv) {
      fprintf(stderr, "mpi_bench: out of memory at %zu bytes\n", bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
#define RUN_ONCE()                                                                                 \
  do {                                                                                             \
    switch (o.coll) {                                                                              \
      case C_ALLREDUCE: MPI_Allreduce(send, recv, (int)count, dt, MPI_SUM, MPI_COMM_WORLD); break; \
      case C_ALLGATHER:                                                                            \
        MPI_Allgather(send, (int)count, dt, recv, (int)count, dt, MPI_COMM_WORLD);                 \
        break;                                                                                     \
      case C_REDUCE_SCATTER:                                                                       \
        MPI_Reduce_scatter_block(send, recv, (int)count, dt, MPI_SUM, MPI_COMM_WORLD);             \
        break;                                                                                     \
      default: MPI_Bcast(send, (int)count, dt, 0, MPI_COMM_WORLD); break;                          \
    }                                                                                              \
  } while (0)
    {
      size_t used = (o.coll == C_BROADCAST ? send_elems : send_elems + recv_elems) * es;
      if (used > user_buffer_bytes) user_buffer_bytes = used;
    }
    uint64_t errors = 0;
    if (o.check) {
      for (size_t i = 0; i < send_elems; ++i) set(send, i, o.dbl, value(rank, i));
      RUN_ONCE();
      switch (o.coll) {
        case C_ALLREDUCE:
          for (size_t i = 0; i < count; ++i) errors += get(recv, i, o.dbl) != expected(p, i);
          break;
        case C_REDUCE_SCATTER:
          for (size_t i = 0; i < count; ++i)
            errors += get(recv, i, o.dbl) != expected(p, rank * count + i);
          break;
        case C_ALLGATHER:
          for (int r = 0; r < p; ++r)
            for (size_t i = 0; i < count; ++i)
              errors += get(recv, r * count + i, o.dbl) != value(r, i);
          break;
        default:
          for (size_t i = 0; i < count; ++i) errors += get(send, i, o.dbl) != value(0, i);
          break;
      }
    }
    for (int i = 0; i < o.warmup; ++i) RUN_ONCE();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < o.iters; ++i) RUN_ONCE();
    double local_us = (MPI_Wtime() - t0) * 1e6 / o.iters, time_us = 0;
    /* The slowest rank's mean decides, as in smd-bench and gloo_bench
     * (nccl-tests reports the mean over ranks by default). */
    MPI_Allreduce(&local_us, &time_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    uint64_t total_err = 0;
    MPI_Allreduce(&errors, &total_err, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    double algbw = time_us > 0 ? bytes / time_us / 1e3 : 0, busbw = algbw * factor;
    if (rank == 0) {
      if (o.json)
        printf(
            "{\"collective\": \"%s\", \"bytes\": %zu, \"count\": %zu, \"dtype\": \"%s\", \"op\": "
            "\"sum\", "
            "\"ranks\": %d, \"time_us\": %.3f, \"algbw_gbps\": %.4f, \"busbw_gbps\": %.4f, "
            "\"errors\": %llu, "
            "\"checked\": %d, \"in_place\": %d}\n",
            cname[o.coll], bytes, count, dname, p, time_us, algbw, busbw,
            (unsigned long long)total_err, o.check, o.coll == C_BROADCAST);
      else
        printf("  %12zu %12zu %9s %6s %12.2f %10.3f %10.3f %8llu\n", bytes, count, dname, "sum",
               time_us, algbw, busbw, (unsigned long long)total_err);
      fflush(stdout);
    }
    free(send);
    free(recv);
    if (bytes == o.max_bytes) break;
    size_t next = (size_t)(bytes * o.factor);
    bytes = next > bytes + 1 ? next : bytes + 1;
  }
  if (o.rss) {
    MPI_Barrier(MPI_COMM_WORLD);
    long long hwm = proc_status_kib("VmHWM");
    if (o.json)
      printf(
          "{\"rss\": \"%s\", \"rank\": %d, \"ranks\": %d, \"max_bytes\": %zu, \"rss_peak_kib\": "
          "%lld, "
          "\"rss_init_kib\": %lld, \"user_buffers_kib\": %zu}\n",
          cname[o.coll], rank, p, o.max_bytes, hwm, rss_init_kib, user_buffer_bytes / 1024);
    else
      printf("# rank %d: peak resident %lld KiB (after init %lld KiB), user buffers %zu KiB\n",
             rank, hwm, rss_init_kib, user_buffer_bytes / 1024);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
