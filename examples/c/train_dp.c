/*
 * train_dp.c - data-parallel training through libsmd, in plain C.
 *
 * Every rank holds a full copy of a small MLP (16 inputs -> 32 tanh hidden
 * units -> 1 output, mean squared error) and trains it with SGD on the same
 * stream of global batches. Each step, rank r takes its contiguous shard of
 * the global batch, computes the gradient of its shard, and one
 * smd_allreduce(SUM) over a single flat buffer combines the shards, exactly
 * like PyTorch's DistributedDataParallel does with its gradient buckets.
 * Since every rank applies the same update to the same parameters, the
 * replicas stay identical without ever exchanging parameters again.
 *
 * At the end, rank 0 retrains the model alone (no communication) on the same
 * global batches and checks that both runs give the same parameters, up to
 * float rounding: the order in which floats are summed is the only
 * difference between the two.
 *
 *   smdrun -n 4 build/examples/train_dp              # 4 ranks
 *   build/examples/train_dp --steps 500 --batch 128  # no launcher: 1 rank
 *
 * The smd calls to look at: smd_comm_init, smd_comm_rank/size,
 * smd_broadcast, smd_allreduce, smd_comm_destroy (and smd_last_error on
 * failure). Everything else is the model.
 *
 * Exit status: 0 when the loss fell and both checks passed, 1 when a check
 * failed, 2 on bad usage or an smd error.
 */
#include <smd.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- model size and fixed settings ------------------------------------ */

enum { N_IN = 16, N_HIDDEN = 32 };

/* All parameters live in ONE flat float buffer, so one collective moves
 * them all (one broadcast at start, one allreduce of their gradients per
 * step). These are the offsets of each tensor in it. */
enum {
  OFF_W1 = 0,                        /* [N_HIDDEN][N_IN] input -> hidden */
  OFF_B1 = OFF_W1 + N_HIDDEN * N_IN, /* [N_HIDDEN] */
  OFF_W2 = OFF_B1 + N_HIDDEN,        /* [N_HIDDEN] hidden -> output */
  OFF_B2 = OFF_W2 + N_HIDDEN,        /* [1] */
  N_PARAMS = OFF_B2 + 1,
  /* The gradient buffer has one more slot: the shard's summed loss rides
   * along in the same allreduce, so reporting the global loss costs no
   * extra collective. */
  SLOT_LOSS = N_PARAMS,
  N_GRAD = N_PARAMS + 1
};

static const uint64_t DATA_SEED = 0x5eed0fda7aULL;
static const uint64_t INIT_SEED = 0x1417a1b0c5ULL;

/* The equality check passes when max |distributed - single| is at most
 * EQ_TOLERANCE * max(1, max |parameter|). Summing in another order changes
 * each gradient by about 1e-7 relative; a thousand SGD steps leave the two
 * models a few 1e-7 apart, far below this. */
static const double EQ_TOLERANCE = 1e-4;
/* The loss must fall at least this many times from the first step. */
static const double LOSS_DROP = 4.0;

typedef struct config {
  int steps;     /* SGD steps */
  int batch;     /* global batch: samples per step over all ranks */
  float lr;      /* learning rate */
  int log_every; /* print the loss every this many steps (rank 0) */
} config_t;

/* ---- deterministic random numbers -------------------------------------- */

/* splitmix64: a tiny, good-enough generator whose output depends only on
 * its 64-bit state, so every rank draws the same numbers from the same
 * seed without talking to the others. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1), from the top 53 bits. */
static double uniform_pm1(uint64_t *state) {
  return (double)(splitmix64(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* ---- the dataset: a fixed "teacher" function ---------------------------- */

/* y = sum_j c_j * tanh(a_j . x + d_j): a small random tanh network the
 * student can learn, so the loss really falls. */
enum { N_TEACHER = 4 };
typedef struct teacher {
  double a[N_TEACHER][N_IN], d[N_TEACHER], c[N_TEACHER];
} teacher_t;

static void teacher_init(teacher_t *t) {
  uint64_t s = DATA_SEED ^ 0x7eac4e7ULL;
  for (int j = 0; j < N_TEACHER; j++) {
    for (int k = 0; k < N_IN; k++) t->a[j][k] = uniform_pm1(&s);
    t->d[j] = uniform_pm1(&s) * 0.5;
    t->c[j] = uniform_pm1(&s);
  }
}

/* Sample `index` of the whole (endless) stream. Random access by index is
 * what lets each rank generate only its shard of a global batch, while the
 * single-process reference generates all of it: the numbers are the same. */
static void make_sample(const teacher_t *t, uint64_t index, float x[N_IN], float *y) {
  uint64_t s = DATA_SEED + index * 0xd1b54a32d192ed03ULL;
  splitmix64(&s); /* decorrelate neighbouring indices */
  for (int k = 0; k < N_IN; k++) x[k] = (float)uniform_pm1(&s);
  double out = 0.0;
  for (int j = 0; j < N_TEACHER; j++) {
    double z = t->d[j];
    for (int k = 0; k < N_IN; k++) z += t->a[j][k] * x[k];
    out += t->c[j] * tanh(z);
  }
  *y = (float)out;
}

/* ---- the model ---------------------------------------------------------- */

static void init_params(float *p) {
  uint64_t s = INIT_SEED;
  memset(p, 0, N_PARAMS * sizeof *p); /* biases start at 0 */
  for (int i = 0; i < N_HIDDEN * N_IN; i++)
    p[OFF_W1 + i] = (float)(uniform_pm1(&s) / sqrt((double)N_IN));
  for (int j = 0; j < N_HIDDEN; j++)
    p[OFF_W2 + j] = (float)(uniform_pm1(&s) / sqrt((double)N_HIDDEN));
}

/* Forward and backward for one sample: adds d(err^2)/dp to grad and err^2
 * to grad[SLOT_LOSS]. Sums, not means: dividing by the GLOBAL batch size
 * happens once after the allreduce, which is what makes a shard's
 * contribution independent of how many ranks share the batch. */
static void accumulate_sample(const float *p, const float x[N_IN], float y, float *grad) {
  float h[N_HIDDEN];
  float out = p[OFF_B2];
  for (int j = 0; j < N_HIDDEN; j++) {
    const float *w = &p[OFF_W1 + j * N_IN];
    float z = p[OFF_B1 + j];
    for (int k = 0; k < N_IN; k++) z += w[k] * x[k];
    h[j] = tanhf(z);
    out += p[OFF_W2 + j] * h[j];
  }
  float err = out - y;
  float dout = 2.0f * err;
  grad[SLOT_LOSS] += err * err;
  grad[OFF_B2] += dout;
  for (int j = 0; j < N_HIDDEN; j++) {
    grad[OFF_W2 + j] += dout * h[j];
    float dz = dout * p[OFF_W2 + j] * (1.0f - h[j] * h[j]); /* tanh' */
    grad[OFF_B1 + j] += dz;
    float *gw = &grad[OFF_W1 + j * N_IN];
    for (int k = 0; k < N_IN; k++) gw[k] += dz * x[k];
  }
}

/* ---- error handling ----------------------------------------------------- */

/* smd never exits the process: every call returns a result code, and
 * smd_last_error() explains a failure (read it before the next smd call).
 * An example may simply stop; aborting the world first makes the other
 * ranks fail at once instead of waiting for their deadline. */
static smd_comm_t *g_world;

static void check(smd_result_t rc, const char *what) {
  if (rc == SMD_SUCCESS) return;
  fprintf(stderr, "train_dp: %s failed: %s: %s\n", what, smd_result_string(rc), smd_last_error());
  if (g_world != NULL) {
    smd_comm_abort(g_world);
    smd_comm_destroy(g_world);
  }
  exit(2);
}

/* ---- training ----------------------------------------------------------- */

/* Trains `params` in place for cfg->steps steps. With comm == NULL this is
 * the single-process run (rank 0 of 1, no communication); otherwise this
 * rank trains on its shard and the allreduce makes the step global. It is
 * the same code either way, which is the point of the comparison.
 * Returns the global loss of the first step and the mean of the last
 * log_every steps. */
static void train(const config_t *cfg, const teacher_t *t, float *params, smd_comm_t *comm,
                  int rank, int size, int verbose, double *first_loss, double *last_loss) {
  float grad[N_GRAD];
  float x[N_IN], y;
  int shard = cfg->batch / size;
  double window_sum = 0.0;
  int window_len = 0;

  for (int step = 0; step < cfg->steps; step++) {
    memset(grad, 0, sizeof grad);
    /* This rank's contiguous shard of global batch `step`. */
    uint64_t first = (uint64_t)step * (uint64_t)cfg->batch + (uint64_t)rank * (uint64_t)shard;
    for (int i = 0; i < shard; i++) {
      make_sample(t, first + (uint64_t)i, x, &y);
      accumulate_sample(params, x, y, grad);
    }

    /* Sum the shards' gradients (and losses) over all ranks, in place.
     * Afterwards every rank holds the gradient sum of the whole global
     * batch. SMD_AVG would divide by the number of ranks, giving the mean
     * of the shard sums; we want the mean over samples, so SUM then / B. */
    if (comm != NULL)
      check(smd_allreduce(grad, grad, N_GRAD, SMD_FLOAT32, SMD_SUM, comm, NULL),
            "smd_allreduce(gradients)");

    float scale = 1.0f / (float)cfg->batch;
    double loss = (double)grad[SLOT_LOSS] * scale;
    for (int i = 0; i < N_PARAMS; i++) params[i] -= cfg->lr * grad[i] * scale;

    /* One batch's loss is noisy: report the mean since the last line. */
    window_sum += loss;
    window_len++;
    if (step == 0 || (step + 1) % cfg->log_every == 0 || step == cfg->steps - 1) {
      double mean = window_sum / window_len;
      if (step == 0) *first_loss = mean;
      *last_loss = mean;
      if (verbose) printf("step %d loss %.4f\n", step + 1, mean);
      window_sum = 0.0;
      window_len = 0;
    }
  }
}

static double max_abs_diff(const float *a, const float *b, int n) {
  double m = 0.0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - (double)b[i]));
  return m;
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: train_dp [--steps N] [--batch B] [--lr LR] [--log-every K]\n"
          "  run under smdrun (smdrun -n 4 train_dp) or alone (1 rank)\n"
          "  --steps N      SGD steps (default 1000)\n"
          "  --batch B      global batch size, divisible by the number of\n"
          "                 ranks (default 64)\n"
          "  --lr LR        learning rate (default 0.1)\n"
          "  --log-every K  print the loss every K steps (default 100)\n");
}

static int parse_int(const char *s, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 1 || v > 100000000) return 0;
  *out = (int)v;
  return 1;
}

static int parse_args(int argc, char **argv, config_t *cfg) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "train_dp: unknown option or missing value: %s\n", a);
      return 0;
    }
    const char *v = argv[++i];
    int ok;
    if (strcmp(a, "--steps") == 0) ok = parse_int(v, &cfg->steps);
    else if (strcmp(a, "--batch") == 0) ok = parse_int(v, &cfg->batch);
    else if (strcmp(a, "--log-every") == 0) ok = parse_int(v, &cfg->log_every);
    else if (strcmp(a, "--lr") == 0) {
      char *end;
      cfg->lr = strtof(v, &end);
      ok = *v != '\0' && *end == '\0' && cfg->lr > 0.0f;
    } else {
      fprintf(stderr, "train_dp: unknown option: %s\n", a);
      return 0;
    }
    if (!ok) {
      fprintf(stderr, "train_dp: bad value for %s: %s\n", a, v);
      return 0;
    }
  }
  return 1;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv) {
  config_t cfg = {1000, 64, 0.1f, 100};
  if (!parse_args(argc, argv, &cfg)) {
    usage(stderr);
    return 2;
  }

  /* 1. Form the world. NULL options: rank, size and rendezvous come from
   *    the launcher's environment (smdrun sets SMD_RANK, SMD_WORLD_SIZE,
   *    SMD_MASTER_ADDR/PORT, ...); with no launcher, a 1-rank world. */
  smd_comm_t *world = NULL;
  check(smd_comm_init(NULL, &world), "smd_comm_init");
  g_world = world;

  int rank, size;
  check(smd_comm_rank(world, &rank), "smd_comm_rank");
  check(smd_comm_size(world, &size), "smd_comm_size");

  /* Every rank checks the same condition, so they all stop together. */
  if (cfg.batch % size != 0) {
    if (rank == 0)
      fprintf(stderr, "train_dp: --batch %d is not divisible by the %d ranks\n", cfg.batch, size);
    smd_comm_destroy(world);
    return 2;
  }
  if (rank == 0)
    printf(
        "train_dp: %d rank(s), MLP %d-%d-1 (%d parameters), %d steps, "
        "global batch %d (%d per rank), lr %g\n",
        size, N_IN, N_HIDDEN, N_PARAMS, cfg.steps, cfg.batch, cfg.batch / size, (double)cfg.lr);

  teacher_t teacher;
  teacher_init(&teacher);

  /* 2. Same starting point everywhere: rank 0 initialises the parameters
   *    and broadcasts them. (Here every rank could compute them from the
   *    seed; a real model's initialisation is not always reproducible, so
   *    DDP broadcasts, and so do we.) Other ranks start from zeros to show
   *    that the broadcast is what sets them. */
  float params[N_PARAMS], initial[N_PARAMS];
  if (rank == 0) init_params(params);
  else memset(params, 0, sizeof params);
  check(smd_broadcast(params, params, N_PARAMS, SMD_FLOAT32, 0, world, NULL),
        "smd_broadcast(initial parameters)");
  memcpy(initial, params, sizeof params); /* for the reference run */

  /* 3. Train: one allreduce per step (inside train()). */
  double first_loss, last_loss;
  train(&cfg, &teacher, params, world, rank, size, rank == 0, &first_loss, &last_loss);

  /* 4. Checks. The replicas must be identical: compare with rank 0's copy
   *    (a broadcast) and take the largest difference over ranks (an
   *    allreduce with MAX). */
  float root_params[N_PARAMS];
  memcpy(root_params, params, sizeof params);
  check(smd_broadcast(root_params, root_params, N_PARAMS, SMD_FLOAT32, 0, world, NULL),
        "smd_broadcast(final parameters)");
  float replica_diff = (float)max_abs_diff(params, root_params, N_PARAMS);
  check(smd_allreduce(&replica_diff, &replica_diff, 1, SMD_FLOAT32, SMD_MAX, world, NULL),
        "smd_allreduce(replica difference)");

  /* The reference: rank 0 trains alone from the same initial parameters on
   * the same global batches, as a 1-rank job would. The other ranks wait
   * for its verdict in the broadcast below, so every rank exits with the
   * same status. */
  int32_t failed = 0;
  if (rank == 0) {
    float single[N_PARAMS];
    double single_first, single_last, max_param = 1.0;
    memcpy(single, initial, sizeof single);
    train(&cfg, &teacher, single, NULL, 0, 1, 0, &single_first, &single_last);
    for (int i = 0; i < N_PARAMS; i++) max_param = fmax(max_param, fabs((double)single[i]));
    double diff = max_abs_diff(params, single, N_PARAMS);
    double tol = EQ_TOLERANCE * max_param;
    int eq_ok = diff <= tol; /* false for NaN too */
    int loss_ok = last_loss * LOSS_DROP < first_loss;
    int rep_ok = replica_diff == 0.0f;

    printf("replicas: max |difference| between ranks = %.1e: %s\n", (double)replica_diff,
           rep_ok ? "PASS" : "FAIL");
    printf("equality check: max |difference| = %.1e (tolerance %.1e): %s\n", diff, tol,
           eq_ok ? "PASS" : "FAIL");
    printf("loss: %.4f -> %.4f (must fall %gx): %s\n", first_loss, last_loss, LOSS_DROP,
           loss_ok ? "PASS" : "FAIL");
    failed = !(eq_ok && loss_ok && rep_ok);
  }
  check(smd_broadcast(&failed, &failed, 1, SMD_INT32, 0, world, NULL), "smd_broadcast(verdict)");

  /* 5. Release the world (local, not collective). */
  g_world = NULL;
  check(smd_comm_destroy(world), "smd_comm_destroy");
  return failed ? 1 : 0;
}
