/*
 * smd.h - the public C ABI of smd, an embeddable collective-communication
 * runtime for distributed training.
 *
 * This is the only header an application includes. It is C99, usable from
 * C++, and parses as-is with cffi (after the C preprocessor) and bindgen.
 *
 * Conventions that hold for every function below
 * ------------------------------------------------
 * - Every function returns smd_result_t (except smd_result_string() and
 *   smd_last_error(), which return text). SMD_SUCCESS is 0.
 * - When a call fails, a thread-local message says what went wrong, with
 *   context (which call, which rank, which peer); read it with
 *   smd_last_error() on the same thread before the next smd call. A failed
 *   operation reported through a request (smd_request_wait and the like)
 *   is named by what it did ("receive from rank 1 (tag 9): ..."), not by
 *   the request call.
 * - Handles (smd_comm_t *, smd_request_t *) are opaque. Passing a destroyed
 *   or never-created handle is detected and answered with
 *   SMD_ERR_INVALID_USAGE, never a crash.
 * - No call ever terminates the process: bad input, dead peers and timeouts
 *   all come back as result codes.
 * - Option structs start with their size and version; fill them with the
 *   *_INIT macro or the *_init() function, then set the fields you need.
 *   Fields are only ever appended, so code built against an older header
 *   keeps working with a newer library.
 *
 * Thread safety
 * -------------
 * All functions may be called from any thread. Collectives on one
 * communicator must be issued in the same order on every member rank; when
 * several threads issue collectives on the same communicator, ordering them
 * is the caller's job. Different communicators are independent.
 *
 * Streams and device memory (docs/GPU.md)
 * ----------------------------------------
 * Every collective and point-to-point call takes an smd_stream_t, a
 * cudaStream_t cast to smd_stream_t, so GPU support adds no new signatures.
 * NOT YET WORKING: the device path has never run on a GPU (the build
 * machines have none; its tests skip there), and most of what follows is
 * the contract the calls will keep, not what they do now; the paragraph
 * "In this release" below says what is built. The contract, as NCCL's:
 * - Buffers may be host, pinned host, managed or device memory; smd tells
 *   which with cudaPointerGetAttributes (cached per allocation). All buffers
 *   of a call are of one kind, and every rank passes the same kind.
 * - With device memory the call is stream-ordered: it enqueues the work on
 *   `stream` and returns; the result is valid for work queued later on that
 *   stream (or after an event recorded on it); buffers stay allocated and
 *   unchanged until then. NULL with device memory means the legacy default
 *   stream. NULL with host memory means host-synchronous: the call returns
 *   when the data is in place.
 * - Nonblocking forms return a request that completes when the stream work
 *   is done; smd_request_wait waits for it on the host.
 * - libsmd does not link CUDA: it opens the CUDA runtime at run time, and
 *   only in processes that use CUDA (SMD_CUDA), so host-only callers pay
 *   nothing.
 * In this release (written, checked over a host stand-in for CUDA only)
 * collectives and point-to-point calls on device (or managed) memory run
 * host synchronous with a NULL stream (a nonblocking form: its request
 * completes when the data is in place), staged through pinned host memory
 * or, where every transport moves device memory, on the device buffers
 * (SMD_GPU_DIRECT), or, on one node with SMD_GPU_IPC=1, read from the
 * peers' buffers in place through CUDA IPC; with a non-NULL stream, the collectives, the
 * point-to-point calls and groups of them on one communicator are
 * stream-ordered; a failure of such a call is reported by its request and
 * by the communicator's next call. The sharded calls with a stream are
 * answered with SMD_ERR_NOT_SUPPORTED and a message naming what is
 * missing. Not linking CUDA is tested on every
 * build (test libsmd-no-cuda). Pinned
 * host memory is host memory. Buffers of one call of different kinds:
 * SMD_ERR_INVALID_ARGUMENT.
 */
#ifndef SMD_H
#define SMD_H

#ifndef SMD_NO_SYSTEM_INCLUDES
#include <stddef.h>
#include <stdint.h>
#endif

#ifndef SMD_API
#if defined(__GNUC__) && !defined(SMD_CDEF)
#define SMD_API __attribute__((visibility("default")))
#else
#define SMD_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Versions
 * --------------------------------------------------------------------- */

/* The version of this header. smd_get_version() returns the library's. */
#define SMD_VERSION_MAJOR 0
#define SMD_VERSION_MINOR 1
#define SMD_VERSION_PATCH 0
#define SMD_VERSION_CODE(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define SMD_VERSION SMD_VERSION_CODE(SMD_VERSION_MAJOR, SMD_VERSION_MINOR, SMD_VERSION_PATCH)

/* ------------------------------------------------------------------------
 * Result codes
 * --------------------------------------------------------------------- */

typedef enum smd_result {
  SMD_SUCCESS = 0,
  /* Not an error: a nonblocking operation has not finished yet. */
  SMD_IN_PROGRESS = 1,
  /* An argument is wrong: NULL pointer, count overflow, unknown datatype or
   * operation, rank out of range, bad option struct. */
  SMD_ERR_INVALID_ARGUMENT = 2,
  /* A call that is not allowed now: destroyed handle, communicator in an
   * error state, request freed twice. */
  SMD_ERR_INVALID_USAGE = 3,
  SMD_ERR_NO_MEMORY = 4,
  /* The deadline (SMD_TIMEOUT or the option) passed before the operation
   * could finish; the message names the ranks that were waited for. */
  SMD_ERR_TIMEOUT = 5,
  /* A peer process died, disconnected or failed; the message names it. */
  SMD_ERR_PEER_FAILURE = 6,
  /* smd_comm_abort() was called on the communicator. */
  SMD_ERR_ABORTED = 7,
  /* Ranks disagree on the arguments of a collective (count, datatype,
   * operation, root, collective kind). */
  SMD_ERR_MISMATCH = 8,
  /* The transport reported an error that is not a peer failure. */
  SMD_ERR_TRANSPORT = 9,
  /* A transport plugin could not be found, loaded or initialised. */
  SMD_ERR_PLUGIN = 10,
  /* The request is valid but this build or configuration cannot do it. */
  SMD_ERR_NOT_SUPPORTED = 11,
  /* An operating-system call failed; the message carries errno's text. */
  SMD_ERR_SYSTEM = 12,
  /* Forming the world failed: store unreachable, job token rejected,
   * a rank never joined. */
  SMD_ERR_BOOTSTRAP = 13,
  /* A received message was larger than the receive buffer. */
  SMD_ERR_TRUNCATED = 14,
  /* A bug in smd: please report it with the message. */
  SMD_ERR_INTERNAL = 15,
  /* smd_comm_revoke() was called on the communicator, here or on a peer:
   * it can only be agreed on, shrunk and destroyed now. */
  SMD_ERR_REVOKED = 16,
  /* Not a value: these make every int a valid smd_result_t value, so a bad value
   * from any language reaches smd's argument checks. */
  SMD_RESULT_RANGE_MIN_ = -2147483647 - 1,
  SMD_RESULT_RANGE_MAX_ = 2147483647
} smd_result_t;

/* The name of a result code ("SMD_ERR_TIMEOUT"); never NULL. */
SMD_API const char *smd_result_string(smd_result_t result);

/* The message of the last failed smd call on this thread, or "" if the last
 * call succeeded. Valid until the next smd call on this thread. */
SMD_API const char *smd_last_error(void);

/* The library's version (may be newer than this header's). Any pointer may
 * be NULL. */
SMD_API smd_result_t smd_get_version(int *major, int *minor, int *patch);

/* ------------------------------------------------------------------------
 * Datatypes and reduction operations
 * --------------------------------------------------------------------- */

typedef enum smd_datatype {
  SMD_INT8 = 0,
  SMD_UINT8 = 1,
  SMD_INT32 = 2,
  SMD_UINT32 = 3,
  SMD_INT64 = 4,
  SMD_UINT64 = 5,
  SMD_FLOAT16 = 6,  /* IEEE 754 binary16 */
  SMD_BFLOAT16 = 7, /* bfloat16: the upper 16 bits of a float32 */
  SMD_FLOAT32 = 8,
  SMD_FLOAT64 = 9,
  SMD_DATATYPE_COUNT = 10,
  /* Not a value: these make every int a valid smd_datatype_t value, so a bad value
   * from any language reaches smd's argument checks. */
  SMD_DATATYPE_RANGE_MIN_ = -2147483647 - 1,
  SMD_DATATYPE_RANGE_MAX_ = 2147483647
} smd_datatype_t;

/* Reductions. float16 and bfloat16 are reduced in float32 and rounded to
 * nearest-even once per output element. SMD_AVG is the sum divided by the
 * number of ranks; for integer types the division truncates toward zero.
 * Integer SUM and PROD wrap around (two's complement). MIN and MAX with a
 * NaN among the inputs give an unspecified one of the inputs. */
typedef enum smd_op {
  SMD_SUM = 0,
  SMD_PROD = 1,
  SMD_MIN = 2,
  SMD_MAX = 3,
  SMD_AVG = 4,
  SMD_OP_COUNT = 5,
  /* Not a value: these make every int a valid smd_op_t value, so a bad value
   * from any language reaches smd's argument checks. */
  SMD_OP_RANGE_MIN_ = -2147483647 - 1,
  SMD_OP_RANGE_MAX_ = 2147483647
} smd_op_t;

/* Size in bytes of one element of `datatype`. */
SMD_API smd_result_t smd_datatype_size(smd_datatype_t datatype, size_t *size);

/* ------------------------------------------------------------------------
 * Handles
 * --------------------------------------------------------------------- */

/* A group of ranks that run collectives together. */
typedef struct smd_comm smd_comm_t;
/* A nonblocking operation in flight. */
typedef struct smd_request smd_request_t;
/* A cudaStream_t, or NULL; see "Streams and device memory" above. */
typedef void *smd_stream_t;

/* ------------------------------------------------------------------------
 * Injected key-value store
 *
 * By default the world is formed through smd's own TCP key-value store,
 * served by rank 0. A framework that already has a store (a c10d Store, a
 * Ray actor, an etcd client) can hand it in instead through this table of
 * callbacks. smd calls them from the thread that calls smd_comm_init(), and
 * later only from threads that create communicators; they need not be
 * thread-safe beyond that.
 *
 * Every callback returns SMD_SUCCESS or an error code (SMD_ERR_TIMEOUT when
 * the wait ran out); the message of a failure may be passed back through
 * `error`/`error_size` (a NUL-terminated text written into the buffer).
 * --------------------------------------------------------------------- */

typedef struct smd_store_ops {
  size_t struct_size; /* sizeof(smd_store_ops_t) */
  uint32_t version;   /* SMD_STORE_OPS_VERSION */
  void *user;         /* passed back to every callback */
  /* Store `value` (size bytes, may contain NUL) under `key`, replacing any
   * earlier value. */
  smd_result_t (*set)(void *user, const char *key, const void *value, size_t size, char *error,
                      size_t error_size);
  /* Wait until `key` exists (up to timeout_ms; < 0 = the store's own
   * default), then return its value in a buffer allocated with malloc()
   * that smd frees with free(). */
  smd_result_t (*get)(void *user, const char *key, int64_t timeout_ms, void **value, size_t *size,
                      char *error, size_t error_size);
  /* Atomically add `delta` to the integer stored under `key` (absent = 0)
   * and return the new value. */
  smd_result_t (*add)(void *user, const char *key, int64_t delta, int64_t *new_value, char *error,
                      size_t error_size);
} smd_store_ops_t;

#define SMD_STORE_OPS_VERSION 1

/* ------------------------------------------------------------------------
 * Forming the world
 * --------------------------------------------------------------------- */

typedef struct smd_init_options {
  size_t struct_size; /* sizeof(smd_init_options_t) */
  uint32_t version;   /* SMD_INIT_OPTIONS_VERSION */
  /* This process's rank and the number of ranks; -1 = from the launcher's
   * environment (smdrun, torchrun, Open MPI, Slurm, SMD_*). With no
   * launcher environment at all, a single-rank world is formed. */
  int32_t rank;
  int32_t world_size;
  /* Where the TCP store lives (rank 0 serves it); NULL / -1 = from the
   * environment: SMD_MASTER_ADDR/PORT, else MASTER_ADDR and MASTER_PORT + 1
   * (torch serves its own store on MASTER_PORT), else what the launcher
   * implies, else the address rank 0 leaves in its rendezvous note. */
  const char *store_addr;
  int32_t store_port;
  /* Secret every rank presents to the store; anyone without it is
   * refused. NULL = SMD_JOB_TOKEN, else rank 0 draws a random one and hands
   * it to the other ranks in a file only this user can read
   * (SMD_RENDEZVOUS_DIR; docs/SECURITY.md). */
  const char *job_token;
  /* Deadline of every blocking step, in milliseconds; <= 0 = the
   * environment's SMD_TIMEOUT, which is in seconds (default 300 seconds =
   * 300000 milliseconds). */
  int64_t timeout_ms;
  /* Transport: "shm", "auto", or a plugin name; NULL = SMD_TRANSPORT
   * (default "auto"). */
  const char *transport;
  /* An injected store (see above) used instead of the TCP store; NULL =
   * the TCP store. The ops table is copied; `user` must outlive every
   * communicator created from this world. */
  const smd_store_ops_t *store;
  /* A prefix for every key smd writes to the store. Worlds that share a
   * store have keys of their own without it; NULL = none. */
  const char *store_prefix;
} smd_init_options_t;

#define SMD_INIT_OPTIONS_VERSION 1
#define SMD_INIT_OPTIONS_INIT                                                                    \
  {                                                                                              \
    sizeof(smd_init_options_t), SMD_INIT_OPTIONS_VERSION, -1, -1, NULL, -1, NULL, 0, NULL, NULL, \
        NULL                                                                                     \
  }

/* Fill `options` with the defaults of SMD_INIT_OPTIONS_INIT. */
SMD_API smd_result_t smd_init_options_init(smd_init_options_t *options);

/* Form the world: every rank of the job calls this (collective over the
 * world). `options` may be NULL for "everything from the environment".
 * On success *world is a communicator over all ranks; destroy it with
 * smd_comm_destroy(). Several worlds may exist in one process (those that
 * name the same TCP store share rank 0's server and one connection), and
 * a world may be formed again with the same environment right after it is
 * destroyed, any number of times.
 * Errors: SMD_ERR_INVALID_ARGUMENT (bad options or environment),
 * SMD_ERR_BOOTSTRAP (store unreachable, token refused, ranks missing at the
 * deadline: the message lists them), SMD_ERR_PLUGIN, SMD_ERR_TIMEOUT. */
SMD_API smd_result_t smd_comm_init(const smd_init_options_t *options, smd_comm_t **world);

/* ------------------------------------------------------------------------
 * Communicators
 * --------------------------------------------------------------------- */

/* Pass as `color` to smd_comm_split() to be in no new communicator. */
#define SMD_UNDEFINED (-1)

/* Collective over `comm`: ranks passing the same color form a new
 * communicator, ranked by (key, rank in comm). Ranks passing SMD_UNDEFINED
 * get *newcomm = NULL. */
SMD_API smd_result_t smd_comm_split(smd_comm_t *comm, int color, int key, smd_comm_t **newcomm);

/* Collective over `comm`: a new communicator with the same ranks. */
SMD_API smd_result_t smd_comm_dup(smd_comm_t *comm, smd_comm_t **newcomm);

/* Collective over the listed ranks only (ranks of `comm`, in the order that
 * gives their new ranks, no repeats): every listed rank calls it with the
 * same list; other ranks do not call it. Overlapping groups may be created
 * one after the other. */
SMD_API smd_result_t smd_comm_create_group(smd_comm_t *comm, const int *ranks, int nranks,
                                           smd_comm_t **newcomm);

/* Release the communicator. Local (not collective). Pending nonblocking
 * operations on it are finished first (up to the deadline); requests of it
 * stay valid until freed. The handle is invalid afterwards. Destroying the
 * last communicator of a world releases the world. */
SMD_API smd_result_t smd_comm_destroy(smd_comm_t *comm);

/* Make every pending and future operation on `comm` fail with
 * SMD_ERR_ABORTED, from any thread; blocked calls return promptly. Peers
 * are told, so their operations on this communicator fail too. The handle
 * must still be destroyed. */
SMD_API smd_result_t smd_comm_abort(smd_comm_t *comm);

/* Background failure of the communicator (SMD_SUCCESS if none). */
SMD_API smd_result_t smd_comm_get_async_error(smd_comm_t *comm, smd_result_t *error);

/* Traffic and algorithm statistics of a communicator on this rank, for
 * benchmarks, tests and tuning. Counts are cumulative since the
 * communicator was created and include the sub-communicators its
 * hierarchical collectives run on. Bytes are point-to-point payload handed
 * to transports; a node's shared-memory arena moves data without
 * messages and is not counted. The caller sets struct_size to
 * sizeof(smd_comm_stats_t); fields past it (from a newer library) are not
 * written, so older callers keep working. */
#define SMD_STATS_MAX_TRANSPORTS 4
typedef struct smd_transport_stats {
  char name[16]; /* "shm", "tcp", "ucx", "efa" */
  uint64_t bytes_sent;
  uint64_t bytes_received;
} smd_transport_stats_t;

typedef struct smd_comm_stats {
  size_t struct_size;             /* sizeof(smd_comm_stats_t) */
  uint64_t collectives;           /* collective calls run on this rank */
  uint64_t inter_node_bytes_sent; /* to members on other nodes */
  uint64_t inter_node_bytes_received;
  uint64_t intra_node_bytes_sent; /* to members on this node */
  uint64_t intra_node_bytes_received;
  char last_algorithm[32];  /* of the last collective: "direct", "ring",
                               "rd", "tree", "pairwise", "hierarchical",
                               "cma", "herring", "single"; "" before the
                               first */
  double last_predicted_us; /* the cost model's prediction for it (time of one
                               call), 0 for "single" and before the first */
  int transport_count;      /* entries of transports[] in use */
  smd_transport_stats_t transports[SMD_STATS_MAX_TRANSPORTS];
} smd_comm_stats_t;

SMD_API smd_result_t smd_comm_get_stats(const smd_comm_t *comm, smd_comm_stats_t *stats);

SMD_API smd_result_t smd_comm_rank(const smd_comm_t *comm, int *rank);
SMD_API smd_result_t smd_comm_size(const smd_comm_t *comm, int *size);
/* Rank among the members of `comm` on this node, and how many there are. */
SMD_API smd_result_t smd_comm_local_rank(const smd_comm_t *comm, int *rank);
SMD_API smd_result_t smd_comm_local_size(const smd_comm_t *comm, int *size);
/* Index of this rank's node among the nodes of `comm` (0-based, nodes
 * ordered by their lowest rank), and the number of nodes. */
SMD_API smd_result_t smd_comm_node_index(const smd_comm_t *comm, int *node);
SMD_API smd_result_t smd_comm_node_count(const smd_comm_t *comm, int *count);
/* The world rank of rank `rank` of `comm`. */
SMD_API smd_result_t smd_comm_world_rank(const smd_comm_t *comm, int rank, int *world_rank);

/* ------------------------------------------------------------------------
 * Collectives
 *
 * Counts are in elements of `datatype`. Buffers are host memory; device
 * memory is not yet verified (see "Streams and device memory"). In-place: pass the same pointer as
 * sendbuf and recvbuf (for allgather: sendbuf == recvbuf + rank * sendcount elements; for
 * reduce_scatter: recvbuf == sendbuf + rank * recvcount elements).
 * Every rank must pass the same count, datatype, op and root; disagreement
 * (or a different collective) ends with SMD_ERR_MISMATCH on every rank, on
 * every algorithm and transport (SMD_CHECK=fast, the default; with
 * SMD_CHECK=off it may end in SMD_ERR_TRUNCATED, SMD_ERR_TIMEOUT or
 * different data), never in corruption beyond the buffers given. On one
 * node a broadcast root returns before its receivers and may learn of a
 * disagreement at its next call on the communicator. A collective that
 * fails on one rank (abort, mismatch, timeout, dead peer) makes the
 * communicator's other ranks fail with the same class of error.
 *
 * The i-forms start the operation and return a request at once; the
 * buffers must not be touched until the request completes. Operations on
 * one communicator complete in the order they were issued.
 * --------------------------------------------------------------------- */

/* recvbuf[i] = op over ranks of sendbuf[i], on every rank. */
SMD_API smd_result_t smd_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                   smd_datatype_t datatype, smd_op_t op, smd_comm_t *comm,
                                   smd_stream_t stream);
SMD_API smd_result_t smd_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                    smd_datatype_t datatype, smd_op_t op, smd_comm_t *comm,
                                    smd_stream_t stream, smd_request_t **request);

/* recvbuf (size * sendcount elements) = every rank's sendbuf, in rank
 * order. */
SMD_API smd_result_t smd_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                   smd_datatype_t datatype, smd_comm_t *comm, smd_stream_t stream);
SMD_API smd_result_t smd_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                    smd_datatype_t datatype, smd_comm_t *comm, smd_stream_t stream,
                                    smd_request_t **request);

/* Reduce sendbuf (size * recvcount elements) over ranks; rank r receives
 * block r of the result in recvbuf (recvcount elements). */
SMD_API smd_result_t smd_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                        smd_datatype_t datatype, smd_op_t op, smd_comm_t *comm,
                                        smd_stream_t stream);
SMD_API smd_result_t smd_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                         smd_datatype_t datatype, smd_op_t op, smd_comm_t *comm,
                                         smd_stream_t stream, smd_request_t **request);

/* recvbuf = root's sendbuf on every rank. sendbuf is read on the root only
 * (may be NULL elsewhere). */
SMD_API smd_result_t smd_broadcast(const void *sendbuf, void *recvbuf, size_t count,
                                   smd_datatype_t datatype, int root, smd_comm_t *comm,
                                   smd_stream_t stream);
SMD_API smd_result_t smd_ibroadcast(const void *sendbuf, void *recvbuf, size_t count,
                                    smd_datatype_t datatype, int root, smd_comm_t *comm,
                                    smd_stream_t stream, smd_request_t **request);

/* recvbuf on root = op over ranks of sendbuf. recvbuf is written on the
 * root only (may be NULL elsewhere). */
SMD_API smd_result_t smd_reduce(const void *sendbuf, void *recvbuf, size_t count,
                                smd_datatype_t datatype, smd_op_t op, int root, smd_comm_t *comm,
                                smd_stream_t stream);
SMD_API smd_result_t smd_ireduce(const void *sendbuf, void *recvbuf, size_t count,
                                 smd_datatype_t datatype, smd_op_t op, int root, smd_comm_t *comm,
                                 smd_stream_t stream, smd_request_t **request);

/* Block j of sendbuf (count elements each, size blocks) goes to rank j,
 * which stores it as block r of its recvbuf, r being the sender's rank. */
SMD_API smd_result_t smd_alltoall(const void *sendbuf, void *recvbuf, size_t count,
                                  smd_datatype_t datatype, smd_comm_t *comm, smd_stream_t stream);
SMD_API smd_result_t smd_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                                   smd_datatype_t datatype, smd_comm_t *comm, smd_stream_t stream,
                                   smd_request_t **request);

/* Returns once every rank of comm has entered the barrier. */
SMD_API smd_result_t smd_barrier(smd_comm_t *comm, smd_stream_t stream);
SMD_API smd_result_t smd_ibarrier(smd_comm_t *comm, smd_stream_t stream, smd_request_t **request);

/* ------------------------------------------------------------------------
 * Point-to-point
 *
 * Messages between two ranks with the same tag arrive in the order sent.
 * Tags range from 0 to SMD_TAG_MAX. A receive accepts a message of at most
 * `count` elements (fewer is fine: see smd_request_get_count()); a larger
 * one fails with SMD_ERR_TRUNCATED. Point-to-point operations are not
 * ordered with collectives and may be in flight while collectives run.
 * --------------------------------------------------------------------- */

#define SMD_TAG_MAX 4194303

SMD_API smd_result_t smd_send(const void *buf, size_t count, smd_datatype_t datatype, int peer,
                              int tag, smd_comm_t *comm, smd_stream_t stream);
SMD_API smd_result_t smd_isend(const void *buf, size_t count, smd_datatype_t datatype, int peer,
                               int tag, smd_comm_t *comm, smd_stream_t stream,
                               smd_request_t **request);
SMD_API smd_result_t smd_recv(void *buf, size_t count, smd_datatype_t datatype, int peer, int tag,
                              smd_comm_t *comm, smd_stream_t stream);
SMD_API smd_result_t smd_irecv(void *buf, size_t count, smd_datatype_t datatype, int peer, int tag,
                               smd_comm_t *comm, smd_stream_t stream, smd_request_t **request);

/* ------------------------------------------------------------------------
 * Requests
 * --------------------------------------------------------------------- */

/* *done = 1 if the operation finished (then the return value is its
 * result), else 0 and SMD_SUCCESS. Drives progress. */
SMD_API smd_result_t smd_request_test(smd_request_t *request, int *done);

/* Wait for the operation and return its result. */
SMD_API smd_result_t smd_request_wait(smd_request_t *request);

/* Wait at most timeout_ms milliseconds (0 = just test). Returns the
 * operation's result if it finished, or SMD_IN_PROGRESS if it has not (it
 * keeps running; wait again or free). */
SMD_API smd_result_t smd_request_wait_timeout(smd_request_t *request, int64_t timeout_ms);

/* Elements received by a finished receive (or sent, for other kinds). */
SMD_API smd_result_t smd_request_get_count(smd_request_t *request, size_t *count);

/* Release the request. An unfinished operation is waited for first (its
 * buffers are in use until then), and its result is returned. */
SMD_API smd_result_t smd_request_free(smd_request_t *request);

/* ------------------------------------------------------------------------
 * Rank groups for model parallelism (SageMaker model parallel's rules)
 *
 * A world of W ranks with tensor-parallel degree tp and pipeline-parallel
 * degree pp (tp * pp must divide W) has reduced-data-parallel degree
 * rdp = W / (tp * pp). Every rank has coordinates (rdp_rank, pp_rank,
 * tp_rank); the placement says how they map to ranks: "cluster" (= "DPT"),
 * "spread" (= "TPD"), or any permutation of the letters D, P, T, where the
 * right-most letter varies fastest over consecutive ranks. With W = 8 and
 * tp = pp = rdp = 2, "DPT" gives rank = 4*rdp_rank + 2*pp_rank + tp_rank.
 *
 * Groups (members in ascending rank order): TP = same rdp_rank and pp_rank;
 * PP = same rdp_rank and tp_rank; RDP = same pp_rank and tp_rank; DP = same
 * pp_rank (size tp * rdp); MP = same rdp_rank (size tp * pp: one whole model
 * replica); WORLD = every rank of the communicator the groups came from.
 *
 * Sharded data parallelism (SMP's sharded_data_parallel_degree, sdp; since
 * SMD_GROUPS_CONFIG_VERSION 2): sdp must divide rdp, since only ranks with
 * the same pp_rank and tp_rank hold the same parameters. SDP = the rank's
 * RDP group cut into rdp / sdp consecutive chunks of sdp members (in
 * ascending rank order): the shard group of a sharded parameter set
 * (smd_sharded_create); the chunks of one RDP group are the replicas of
 * the shards (dp = sdp x replicas; the ranks at the same position of each
 * chunk, smd_comm_split(rdp_comm, rdp_rank % sdp, rdp_rank), are a set's
 * replica_comm). With sdp = 1 (the default) each SDP group is its rank
 * alone; with sdp = rdp it is the RDP group.
 * --------------------------------------------------------------------- */

typedef enum smd_group_kind {
  SMD_GROUP_WORLD = 0,
  SMD_GROUP_TP = 1,
  SMD_GROUP_PP = 2,
  SMD_GROUP_DP = 3,
  SMD_GROUP_RDP = 4,
  SMD_GROUP_MP = 5,
  SMD_GROUP_SDP = 6, /* since SMD_GROUPS_CONFIG_VERSION 2 */
  SMD_GROUP_KIND_COUNT = 7,
  /* Not a value: these make every int a valid smd_group_kind_t value, so a bad value
   * from any language reaches smd's argument checks. */
  SMD_GROUP_KIND_RANGE_MIN_ = -2147483647 - 1,
  SMD_GROUP_KIND_RANGE_MAX_ = 2147483647
} smd_group_kind_t;

typedef struct smd_groups smd_groups_t;

typedef struct smd_groups_config {
  size_t struct_size; /* sizeof(smd_groups_config_t) */
  uint32_t version;   /* SMD_GROUPS_CONFIG_VERSION */
  int32_t tp;         /* tensor-parallel degree, >= 1 */
  int32_t pp;         /* pipeline-parallel degree, >= 1 */
  /* "cluster", "spread", or a permutation of "DPT" (upper case, each
   * letter once); NULL = "cluster". */
  const char *placement;
  /* Version 2: sharded data-parallel degree (SMP's
   * sharded_data_parallel_degree), >= 1 and dividing rdp; version-1
   * structs (without it) mean 1. */
  int32_t sdp;
} smd_groups_config_t;

#define SMD_GROUPS_CONFIG_VERSION 2
#define SMD_GROUPS_CONFIG_INIT \
  { sizeof(smd_groups_config_t), SMD_GROUPS_CONFIG_VERSION, 1, 1, NULL, 1 }

/* Fill `config` with the defaults of SMD_GROUPS_CONFIG_INIT. */
SMD_API smd_result_t smd_groups_config_init(smd_groups_config_t *config);

/* Collective over `comm`: build every group and a communicator for each of
 * this rank's groups. All ranks must pass the same configuration; that is
 * checked, and disagreement fails on every rank with SMD_ERR_MISMATCH. A
 * configuration that does not fit the communicator's size fails with
 * SMD_ERR_INVALID_ARGUMENT naming the problem. "cluster", "DPT" and NULL
 * agree. A rank whose config cannot be read (NULL, struct_size or version
 * not set) fails with SMD_ERR_INVALID_ARGUMENT and the others with
 * SMD_ERR_MISMATCH naming it. Runs after the operations already queued on
 * `comm`. */
SMD_API smd_result_t smd_groups_create(smd_comm_t *comm, const smd_groups_config_t *config,
                                       smd_groups_t **groups);

/* Release the groups and their communicators (local, not collective). */
SMD_API smd_result_t smd_groups_destroy(smd_groups_t *groups);

/* This rank's rank in its group of `kind` (tp_rank, pp_rank, dp_rank,
 * rdp_rank, mp_rank, sdp_rank = rdp_rank % sdp; the communicator rank for
 * SMD_GROUP_WORLD), and the group's size (tp, pp, tp*rdp, rdp, tp*pp, sdp,
 * W). */
SMD_API smd_result_t smd_groups_rank(const smd_groups_t *groups, smd_group_kind_t kind, int *rank);
SMD_API smd_result_t smd_groups_size(const smd_groups_t *groups, smd_group_kind_t kind, int *size);

/* The communicator of this rank's group of `kind`, ready for every
 * collective. Owned by `groups`: valid until smd_groups_destroy(), and not
 * to be destroyed by the caller (smd_comm_destroy() on it fails with
 * SMD_ERR_INVALID_USAGE). */
SMD_API smd_result_t smd_groups_comm(const smd_groups_t *groups, smd_group_kind_t kind,
                                     smd_comm_t **comm);

/* The ranks (of the communicator the groups came from) of this rank's
 * group of `kind`, ascending. *count is set to the group's size; at most
 * `capacity` ranks are written (`ranks` may be NULL when capacity is 0). */
SMD_API smd_result_t smd_groups_members(const smd_groups_t *groups, smd_group_kind_t kind,
                                        int *ranks, int capacity, int *count);

/* The same layout computed without communicating, for any rank of a world
 * of `world_size` (tools, planners, tests): the rank's rank within its
 * group of `kind` and the group's members. Validates like
 * smd_groups_create(). */
SMD_API smd_result_t smd_groups_layout(const smd_groups_config_t *config, int world_size, int rank,
                                       smd_group_kind_t kind, int *group_rank, int *ranks,
                                       int capacity, int *count);

/* ------------------------------------------------------------------------
 * Topology
 * --------------------------------------------------------------------- */

typedef struct smd_rank_info {
  size_t struct_size; /* sizeof(smd_rank_info_t), set by the caller */
  uint32_t version;   /* SMD_RANK_INFO_VERSION, set by the caller */
  int32_t rank;       /* rank in the communicator */
  int32_t world_rank;
  int32_t node_index; /* among the communicator's nodes */
  int32_t local_rank; /* among the communicator's ranks on that node */
  int32_t local_size;
  int32_t pid;
  int32_t numa_node; /* NUMA node the rank's CPUs belong to; -1 unknown
                      * (no hwloc) or spread over several */
  int32_t cpus;      /* number of CPUs the rank may run on */
  char host[64];     /* host name, NUL-terminated (truncated) */
  char cpuset[128];  /* CPUs it may run on, e.g. "0-3,8", or "" unknown */
} smd_rank_info_t;

#define SMD_RANK_INFO_VERSION 1

/* Where rank `rank` of `comm` runs (as it reported when the world formed;
 * the NUMA node needs the hwloc build option). Local: no communication.
 * The caller sets struct_size and version. Errors: SMD_ERR_INVALID_ARGUMENT
 * (NULL info, struct_size or version not set, rank out of range). */
SMD_API smd_result_t smd_comm_rank_info(const smd_comm_t *comm, int rank, smd_rank_info_t *info);

/* ---- Shared memory for collective buffers --------------------------------
 *
 * `bytes` of zero-filled memory that the ranks on this node can map: a
 * collective's send buffer that lies in it is read by peers where it lies
 * (allgather, a broadcast root's: one copy instead of two through staging
 * buffers; allreduce, reduce, reduce_scatter: each member reduces its part
 * straight from every member's input, nothing staged; measured in
 * docs/PERFORMANCE.md). Usable with every communicator of comm's
 * world, as ordinary memory too; without a node-local transport that shares
 * memory it is ordinary memory and collectives stage it as usual. The block
 * keeps its world alive until freed. Local: no communication. Errors:
 * SMD_ERR_INVALID_ARGUMENT (NULL comm or ptr, 0 bytes), SMD_ERR_NO_MEMORY. */
SMD_API smd_result_t smd_mem_alloc(smd_comm_t *comm, size_t bytes, void **ptr);

/* Frees memory from smd_mem_alloc; NULL is ignored. Peers may keep a
 * mapping of it (released as they map others, or with their communicator).
 * Errors: SMD_ERR_INVALID_ARGUMENT (a pointer smd_mem_alloc did not return,
 * or freed already). */
SMD_API smd_result_t smd_mem_free(void *ptr);

/* ------------------------------------------------------------------------
 * Group calls (since 0.1: smd_group_start, smd_group_end)
 *
 * Many small operations as one, like NCCL's ncclGroupStart/End. Between
 * smd_group_start() and the matching smd_group_end() on the same thread,
 * every collective (smd_allreduce ... smd_ibarrier) and point-to-point call
 * (smd_send ... smd_irecv) is checked and queued instead of run; the
 * outermost smd_group_end() runs them all as one operation and returns
 * when they are done:
 * - point-to-point transfers are all posted first, so sends and receives
 *   that pair up inside one group (a ring exchange) cannot block each other;
 * - each communicator's collectives then run back to back, without
 *   returning to the caller: allreduces of one communicator with the same
 *   datatype and op are packed into buffers of up to SMD_FUSION_BYTES
 *   (default 1 MiB, see docs/PERFORMANCE.md) and each buffer is reduced as
 *   one allreduce, split so that every rank (and across nodes every local
 *   rank's network link) reduces an equal share whatever the tensors'
 *   sizes; the other collectives and larger allreduces run one by one in
 *   the order issued.
 *
 * Every rank of a communicator must issue the same calls on it in a group,
 * in the same order, as outside groups: ranks whose groups differ on a
 * communicator (another call, order or number of calls, even where fused
 * allreduces would add up to the same total) all get SMD_ERR_MISMATCH from
 * smd_group_end(), naming the first differing call. Calls of one group must not depend
 * on each other's results (a broadcast of an allreduce's output belongs in
 * the next group). Communicator creation and smd_groups_create are never
 * queued.
 *
 * Buffers: a call inside a group only records its buffer pointers. The
 * buffers of every call, blocking forms included, must stay valid and
 * unmodified (receive buffers untouched) until smd_group_end() returns,
 * exactly as for a nonblocking call. Blocking forms return SMD_SUCCESS once
 * queued; the i-forms return a request at once that completes at
 * smd_group_end() (waiting on it or freeing it before then, on the thread
 * of the group, fails with SMD_ERR_INVALID_USAGE; from another thread, a
 * wait or free that the group's end does not release within SMD_TIMEOUT
 * fails with SMD_ERR_TIMEOUT and leaves the request live;
 * smd_request_test() answers "not done").
 *
 * Errors: a call refused inside the group (a bad argument, a destroyed
 * handle) returns its error at once as usual and also fails the whole
 * group: smd_group_end() then runs nothing, returns that error with a
 * message naming the call ("call 3 (smd_allreduce) of the group failed:
 * ..."), every request of the group completes with it, and the
 * communicators stay usable. A failure while the group runs (a dead
 * peer, a timeout, a mismatch) fails the calls it touches and poisons
 * their communicator as outside groups; smd_group_end() returns the error
 * of the lowest-numbered failed call, named the same way.
 *
 * Groups nest: only the outermost smd_group_end() runs the calls. An empty
 * group succeeds. Groups are per thread: another thread's calls are not
 * queued in this thread's group.
 * --------------------------------------------------------------------- */

/* Opens a group on this thread (or nests one more level). Never fails. */
SMD_API smd_result_t smd_group_start(void);

/* Closes the innermost group; the outermost runs every queued call and
 * returns their outcome (see above). Errors: SMD_ERR_INVALID_USAGE when no
 * group is open on this thread; any error of a queued call. */
SMD_API smd_result_t smd_group_end(void);

/* ------------------------------------------------------------------------
 * Collectives with per-rank counts (v-collectives), since 0.1
 *
 * counts[r] (size entries) is rank r's block, in elements; displs[r] is
 * where that block starts, in elements, in the buffer that holds every
 * block (recvbuf of allgatherv, sendbuf of reduce_scatterv). displs may be
 * NULL: the blocks are then packed in rank order (displs[r] = sum of
 * counts before r). Blocks must not overlap one another; gaps between
 * them are allowed and never touched. Zero counts are allowed for any
 * rank, all-zero too (the call still synchronises like the others).
 *
 * allgatherv and reduce_scatterv: every rank must pass the same counts
 * (smd_alltoallv below has its own rule; displs are each rank's own
 * layout and may differ between ranks). Ranks whose counts differ all
 * fail with SMD_ERR_MISMATCH, on every algorithm and transport: the arena
 * compares a digest of the counts in its descriptors and the
 * point-to-point and hierarchical paths always run the agreement check
 * (SMD_CHECK) for these calls, whatever SMD_CHECK says. Datatype, op and
 * stream rules, errors, ordering and the i-forms' requests are those of
 * the collectives above.
 * --------------------------------------------------------------------- */

/* recvbuf block r (counts[r] elements at displs[r]) = rank r's sendbuf
 * (counts[rank] elements). In place: sendbuf == recvbuf + displs[rank]
 * elements (the rank's own block is then left as it is).
 * Errors: SMD_ERR_INVALID_ARGUMENT (NULL counts, NULL buffers holding
 * elements, overlapping blocks, sizes that overflow, other overlaps of
 * sendbuf and recvbuf), SMD_ERR_MISMATCH, and those of smd_allgather. */
SMD_API smd_result_t smd_allgatherv(const void *sendbuf, void *recvbuf, const size_t *counts,
                                    const size_t *displs, smd_datatype_t datatype, smd_comm_t *comm,
                                    smd_stream_t stream);
SMD_API smd_result_t smd_iallgatherv(const void *sendbuf, void *recvbuf, const size_t *counts,
                                     const size_t *displs, smd_datatype_t datatype,
                                     smd_comm_t *comm, smd_stream_t stream,
                                     smd_request_t **request);

/* Reduce sendbuf's blocks over ranks; rank r receives block r of the
 * result (counts[r] elements, from displs[r] of sendbuf) in recvbuf.
 * In place: recvbuf == sendbuf + displs[rank] elements. Errors: as
 * smd_allgatherv, plus an unknown op. */
SMD_API smd_result_t smd_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *counts,
                                         const size_t *displs, smd_datatype_t datatype, smd_op_t op,
                                         smd_comm_t *comm, smd_stream_t stream);
SMD_API smd_result_t smd_ireduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *counts,
                                          const size_t *displs, smd_datatype_t datatype,
                                          smd_op_t op, smd_comm_t *comm, smd_stream_t stream,
                                          smd_request_t **request);

/* Every rank sends a block to every rank (MPI_Alltoallv): sendcounts[j]
 * elements at sdispls[j] of sendbuf go to rank j, which receives them into
 * recvcounts[i] elements at rdispls[i] of its recvbuf (i: the sender).
 * Counts and displacements are in elements; NULL displs: packed in rank
 * order. Unlike the other v-collectives the counts differ between ranks
 * by design; what must agree is each pair: sendcounts[j] on rank i ==
 * recvcounts[i] on rank j. A pair that disagrees fails with
 * SMD_ERR_TRUNCATED on the receiving rank (whether the message was longer
 * or shorter than its receive; its message names both ranks). The
 * other ranks return success if their own exchanges were complete, or an
 * error (never wrong data, never a hang); as after any failed collective,
 * the communicator is failed: later calls on it fail. Send blocks may overlap (they
 * are only read); receive blocks may not. Not supported in place:
 * sendbuf == recvbuf, or any overlap of the two, is SMD_ERR_INVALID_ARGUMENT.
 * Device buffers as the other collectives' (docs/GPU.md): both whole
 * extents staged through pinned host memory, stream-ordered with a stream.
 * Errors: SMD_ERR_INVALID_ARGUMENT (NULL counts, NULL buffers holding
 * elements, overlapping receive blocks, sizes that overflow, sendbuf and
 * recvbuf overlapping), SMD_ERR_TRUNCATED, and those of smd_alltoall. */
SMD_API smd_result_t smd_alltoallv(const void *sendbuf, const size_t *sendcounts,
                                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                   const size_t *rdispls, smd_datatype_t datatype, smd_comm_t *comm,
                                   smd_stream_t stream);
SMD_API smd_result_t smd_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                    const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                    const size_t *rdispls, smd_datatype_t datatype,
                                    smd_comm_t *comm, smd_stream_t stream, smd_request_t **request);

/* ------------------------------------------------------------------------
 * Receiving from any source, and the status of a receive, since 0.1
 *
 * smd_recv / smd_irecv / smd_recv_status accept SMD_ANY_SOURCE as the
 * peer and SMD_ANY_TAG as the tag: the receive then takes the first
 * message (in the order messages arrive) from any rank of the
 * communicator, or with any tag, that no receive posted earlier took.
 * Each message is received exactly once, whatever transports serve the
 * ranks (shared memory inside a node, a network plugin between nodes),
 * with any number of senders racing; messages from one sender with one
 * tag still arrive in the order sent. Receives are matched in the order
 * they were posted, as in MPI. Matching happens in smd's core, not in the
 * transports: every message travels as a small envelope (its size and
 * tag) followed by its payload (see docs/ARCHITECTURE.md).
 *
 * A posted receive progresses while this rank waits in any call on the
 * same communicator; otherwise test or wait its request. A receive from
 * SMD_ANY_SOURCE that has not been matched yet fails (SMD_ERR_PEER_FAILURE,
 * naming the rank) as soon as any member of the communicator is known to
 * have exited or died, since that member might have been its sender: keep
 * ranks alive (a barrier before leaving) while others receive from any
 * source.
 * --------------------------------------------------------------------- */

#define SMD_ANY_SOURCE (-2)
#define SMD_ANY_TAG (-1)

/* What a finished receive got. */
typedef struct smd_status {
  size_t struct_size; /* sizeof(smd_status_t), set by the caller */
  uint32_t version;   /* SMD_STATUS_VERSION, set by the caller */
  int32_t source;     /* the sender's rank in the communicator (-1: not a receive) */
  int32_t tag;        /* the message's tag (-1: not a receive) */
  size_t count;       /* elements received (for other operations: moved) */
  size_t bytes;       /* bytes received (for other operations: moved) */
} smd_status_t;

#define SMD_STATUS_VERSION 1
#define SMD_STATUS_INIT \
  { sizeof(smd_status_t), SMD_STATUS_VERSION, -1, -1, 0, 0 }

/* Fills *status with SMD_STATUS_INIT. Errors: SMD_ERR_INVALID_ARGUMENT
 * (NULL). */
SMD_API smd_result_t smd_status_init(smd_status_t *status);

/* The status of a finished operation: for a receive, the sender, tag and
 * size of the message it took (what SMD_ANY_SOURCE / SMD_ANY_TAG left
 * open); for other operations source and tag are -1. Local; does not
 * free the request. Errors: SMD_ERR_INVALID_ARGUMENT (NULL status,
 * struct_size or version not set), SMD_ERR_INVALID_USAGE (not finished
 * yet, or not a live request). A failed operation's status is that of the
 * message as far as it was matched. */
SMD_API smd_result_t smd_request_get_status(smd_request_t *request, smd_status_t *status);

/* smd_recv that also fills *status (NULL allowed: then it is smd_recv).
 * On SMD_ERR_TRUNCATED the status still names the message's sender, tag
 * and full size (the message is dropped). */
SMD_API smd_result_t smd_recv_status(void *buf, size_t count, smd_datatype_t datatype, int peer,
                                     int tag, smd_comm_t *comm, smd_stream_t stream,
                                     smd_status_t *status);

/* ------------------------------------------------------------------------
 * Sharded parameters (SageMaker model parallelism's sharded data
 * parallelism, ZeRO stage 3), since 0.1
 *
 * A sharded set holds a model's parameters over the ranks of one
 * communicator, the shard group (SMD_GROUP_SDP of smd_groups_create, or
 * any communicator). Each parameter is registered once (element count,
 * datatype, initial values that every rank passes alike) and split into
 * `size` equal pieces, the last ones padded with zeros: rank r owns piece r
 * (its "shard": what an optimizer updates) and keeps only that. A
 * parameter with fewer elements than param_persistence_threshold stays
 * whole on every rank ("persistent": never fetched nor sharded; its
 * gradient is allreduced).
 *
 * smd_sharded_fetch() gathers the shards of the given parameters into full
 * buffers owned by the set (smd_sharded_full() gives their address); the
 * caller uses them (a layer's forward or backward) and hands them back with
 * smd_sharded_release() (a parameter fetched twice needs two releases). At
 * most max_live_parameters elements (the parameters' counts, padding not
 * counted; persistent parameters never count) are gathered at once:
 * released buffers stay gathered (a later fetch of them costs nothing)
 * until room is needed, then the least recently released go first; a
 * fetch that would pass the bound with only held (unreleased) buffers
 * fails with SMD_ERR_NO_MEMORY, nothing changed. The fetch calls of the
 * first round (up to the first smd_sharded_reduce_grads) are recorded as
 * the order of use; afterwards every fetch found in that record also
 * starts gathering the next prefetch_depth parameters of the calls that
 * follow it in the background (never past the round's end), room
 * permitting, so the fetch that asks for them finds them ready. Every
 * such decision follows from the calls alone, so all ranks agree.
 *
 * smd_sharded_reduce_grads() ends a round: the optimizer step expected
 * next changes the shards, so every gathered buffer is dropped (a held one
 * at its release; fetching a parameter still held from before the
 * reduction is SMD_ERR_INVALID_USAGE). Call it once per step, after the
 * backward pass.
 *
 * smd_sharded_reduce_grads() takes full gradients (one buffer per
 * parameter, as a backward pass produces them) and reduce-scatters them,
 * in buckets of up to reduce_bucket_size elements, into each owner's
 * gradient shard (smd_sharded_grad()), averaged over the group when
 * average_gradients is set; persistent parameters' gradients are
 * allreduced whole. smd_sharded_clip_grads() computes the global L2 norm of
 * all gradients (one allreduce of partial sums of squares over the shards)
 * and scales them down to max_norm when larger.
 *
 * Fetch, release order, reduce_grads and clip_grads are collective over the
 * shard group: every rank makes the same calls with the same ids in the
 * same order (checked like every collective: SMD_ERR_MISMATCH). Errors:
 * SMD_ERR_INVALID_ARGUMENT (an unknown id, NULL buffers, a bad datatype,
 * an id twice in one call, a config field out of range),
 * SMD_ERR_INVALID_USAGE (registering after the first fetch or
 * reduce_grads, releasing what is not held, asking for the full buffer of
 * a parameter not fetched; a full buffer's address must not be used after
 * its release, which cannot be detected), SMD_ERR_NO_MEMORY (above), and
 * those of the collectives. Host memory for now; calls on one set come
 * from one thread at a time. See docs/SHARDING.md.
 * --------------------------------------------------------------------- */

typedef struct smd_sharded smd_sharded_t;

typedef struct smd_sharded_config {
  size_t struct_size; /* sizeof(smd_sharded_config_t) */
  uint32_t version;   /* SMD_SHARDED_CONFIG_VERSION */
  /* SMP's sdp_max_live_parameters: elements gathered at once, at most
   * (default 1e9). */
  uint64_t max_live_parameters;
  /* sdp_param_persistence_threshold: parameters with fewer elements stay
   * whole on every rank (default 1e6; 0: shard everything). */
  uint64_t param_persistence_threshold;
  /* sdp_reduce_bucket_size: elements per gradient reduce-scatter bucket
   * (default 5e8). */
  uint64_t reduce_bucket_size;
  /* sdp_hierarchical_allgather: 1 = the engine's choice, which gathers
   * inside each node first, then across nodes, when the group spans nodes
   * (default 1); 0 = the flat ring when the group spans nodes (inside one
   * node both are the same). */
  int32_t hierarchical_allgather;
  /* Parameters gathered ahead along the recorded order (default 2; 0 =
   * no prefetch). */
  int32_t prefetch_depth;
  /* 1 = gradients are averaged over the group (and the replicas), 0 =
   * summed (default 1). */
  int32_t average_gradients;
  /* Gradients of float32 parameters travel as this type: SMD_FLOAT16 or
   * SMD_BFLOAT16 halve the bytes, -1 (default) = the parameter's type. */
  int32_t gradient_wire_dtype;
  /* Data-parallel replicas of the shard group (dp = sdp x replicas):
   * gradient shards are also allreduced over this communicator, whose
   * ranks hold the same shard; NULL (default) = no replicas. */
  smd_comm_t *replica_comm;
} smd_sharded_config_t;

#define SMD_SHARDED_CONFIG_VERSION 1
#define SMD_SHARDED_CONFIG_INIT                                                                  \
  {                                                                                              \
    sizeof(smd_sharded_config_t), SMD_SHARDED_CONFIG_VERSION, 1000000000u, 1000000u, 500000000u, \
        1, 2, 1, -1, NULL                                                                        \
  }

/* Fill `config` with the defaults of SMD_SHARDED_CONFIG_INIT. */
SMD_API smd_result_t smd_sharded_config_init(smd_sharded_config_t *config);

/* Collective over `comm` (the shard group): every rank passes the same
 * configuration (checked: SMD_ERR_MISMATCH). NULL config = the defaults. */
SMD_API smd_result_t smd_sharded_create(smd_comm_t *comm, const smd_sharded_config_t *config,
                                        smd_sharded_t **set);

/* Frees the set and every buffer it holds (local), after the gathers and
 * reductions it queued. Pointers from smd_sharded_shard/full/grad become
 * invalid. */
SMD_API smd_result_t smd_sharded_destroy(smd_sharded_t *set);

/* Registers a parameter of `count` elements of `datatype` (a floating
 * type) with initial values `init` (count elements, the same on every
 * rank; NULL = zeros); *id receives its id (0, 1, 2, ... in registration
 * order). Local: ranks must register the same parameters in the same order
 * (checked at the first fetch). Only before the first fetch. */
SMD_API smd_result_t smd_sharded_register(smd_sharded_t *set, size_t count, smd_datatype_t datatype,
                                          const void *init, int32_t *id);

/* This rank's shard of parameter `id`: its address in the set's memory
 * (for an optimizer to update in place), its element count and the offset
 * of its first element in the full parameter (the whole parameter, offset
 * 0, for a persistent one). *persistent (may be NULL) is set to 1 for a
 * persistent parameter. The address stays valid until destroy. */
SMD_API smd_result_t smd_sharded_shard(smd_sharded_t *set, int32_t id, void **data, size_t *count,
                                       size_t *offset, int *persistent);

/* The gradient shard of parameter `id` (same layout as its shard),
 * written by smd_sharded_reduce_grads. */
SMD_API smd_result_t smd_sharded_grad(smd_sharded_t *set, int32_t id, void **data, size_t *count);

/* Gathers parameters `ids[0..n)` into full buffers (collective). Blocking
 * when `request` is NULL; otherwise returns at once with a request that
 * completes when all are gathered. */
SMD_API smd_result_t smd_sharded_fetch(smd_sharded_t *set, const int32_t *ids, size_t n,
                                       smd_stream_t stream, smd_request_t **request);

/* The full buffer of fetched parameter `id` (count elements), valid until
 * its release; the caller may read it (and write it: writes are lost at
 * release). SMD_ERR_INVALID_USAGE when not fetched. */
SMD_API smd_result_t smd_sharded_full(smd_sharded_t *set, int32_t id, void **data);

/* Hands the full buffers of `ids` back (local). */
SMD_API smd_result_t smd_sharded_release(smd_sharded_t *set, const int32_t *ids, size_t n);

/* Reduce-scatters the full gradients grads[i] of parameters ids[i] into
 * the gradient shards (collective; see above). Blocking when `request` is
 * NULL. The gradient buffers must stay untouched until it completes. */
SMD_API smd_result_t smd_sharded_reduce_grads(smd_sharded_t *set, const int32_t *ids, size_t n,
                                              const void *const *grads, smd_stream_t stream,
                                              smd_request_t **request);

/* Global L2 norm of every gradient shard (padding excluded, persistent
 * gradients counted once), into *total_norm (may be NULL); when max_norm >
 * 0 and the norm exceeds it, every gradient shard is scaled by max_norm /
 * (norm + 1e-6), torch's clip_grad_norm_ rule; max_norm = 0 only measures
 * (collective; runs after the reductions still queued). Errors:
 * SMD_ERR_INVALID_ARGUMENT for a negative or non-finite max_norm. */
SMD_API smd_result_t smd_sharded_clip_grads(smd_sharded_t *set, double max_norm,
                                            double *total_norm);

typedef struct smd_sharded_stats {
  size_t struct_size;           /* sizeof(smd_sharded_stats_t), set by the caller */
  uint32_t version;             /* SMD_SHARDED_STATS_VERSION, set by the caller */
  uint64_t parameters;          /* registered */
  uint64_t persistent_elements; /* kept whole on every rank */
  uint64_t owned_elements;      /* this rank's shards (padding included) */
  uint64_t live_elements;       /* gathered now (held and cached; counts, not padding) */
  uint64_t peak_live_elements;
  uint64_t live_bytes; /* their buffers' bytes (padding included) */
  uint64_t peak_live_bytes;
  uint64_t bytes_fetched; /* received by gathers */
  uint64_t fetches;       /* parameters fetched on request */
  uint64_t prefetches;    /* parameters gathered ahead */
  uint64_t fetch_stalls;  /* fetch calls that waited for a gather (not started,
                           * or a prefetch unfinished at the call) */
  uint64_t cache_hits;    /* fetches of a still-gathered buffer */
  uint64_t evictions;
  double last_grad_norm; /* from smd_sharded_clip_grads, -1 before */
} smd_sharded_stats_t;

#define SMD_SHARDED_STATS_VERSION 1

/* Local. Errors: SMD_ERR_INVALID_ARGUMENT (NULL, struct_size or version
 * not set). */
SMD_API smd_result_t smd_sharded_get_stats(const smd_sharded_t *set, smd_sharded_stats_t *stats);

/* smd_sharded_reduce_grads for a part of the parameters, without ending
 * the round: a unit's gradients reduced as soon as its backward is done,
 * while the backward of the units before it (and the fetches it needs)
 * goes on, so each full gradient can be freed early instead of all being
 * held until the backward ends. The same arguments, reduction, request
 * and buffer rule as smd_sharded_reduce_grads; the round goes on (fetches
 * keep their buffers and the prefetch order) until smd_sharded_reduce_grads
 * ends it, with n = 0 when every gradient went through this call. A
 * gradient is reduced at most once per round, by either call (a second
 * reduction would overwrite the first: SMD_ERR_INVALID_USAGE). Collective,
 * checked like smd_sharded_reduce_grads (each bucket carries its
 * parameters' ids and slices): ranks that reduce other parameters, or the
 * same ones in another order or other parts, get SMD_ERR_MISMATCH. */
SMD_API smd_result_t smd_sharded_reduce_grads_part(smd_sharded_t *set, const int32_t *ids, size_t n,
                                                   const void *const *grads, smd_stream_t stream,
                                                   smd_request_t **request);

/* ---- Gathering into the caller's buffers (sharded sets) -----------------
 *
 * smd_sharded_fetch_into() gathers parameters ids[0..n) straight into
 * buffers the caller owns, dsts[i] of capacities[i] elements of
 * datatypes[i] (as FSDP gathers into the storage a layer computes with, so
 * the gathered values are not held twice). No buffer of the set is used:
 * nothing counts against max_live_parameters, nothing is cached, recorded
 * for prefetch, or to be released. A buffer holds at least the
 * parameter's gathered count (smd_sharded_gathered_count: its shard's
 * count times the group size; a persistent parameter's count): its first
 * `count` elements receive the parameter, the rest the padding's zeros. A
 * persistent parameter is copied from this rank's whole copy.
 *
 * Collective over the shard group like smd_sharded_fetch, and checked the
 * same way (ranks gathering other parameters, or in another order, get
 * SMD_ERR_MISMATCH). Errors: SMD_ERR_INVALID_ARGUMENT for an unknown id,
 * an id twice, a NULL buffer, a datatype other than the parameter's, or a
 * capacity below its gathered count; the rank that finds one still takes
 * part in the call with a gather of its own subject, so when the call
 * gathers anything the other ranks get SMD_ERR_MISMATCH instead of waiting
 * (and, as after every mismatch, the communicator is unusable). Blocking
 * when `request` is NULL; otherwise the buffers must stay untouched until
 * the request completes. Since 0.1. */
SMD_API smd_result_t smd_sharded_fetch_into(smd_sharded_t *set, const int32_t *ids, size_t n,
                                            const smd_datatype_t *datatypes, void *const *dsts,
                                            const size_t *capacities, smd_stream_t stream,
                                            smd_request_t **request);

/* Elements a buffer of smd_sharded_fetch_into needs for parameter `id`
 * (local). */
SMD_API smd_result_t smd_sharded_gathered_count(smd_sharded_t *set, int32_t id, size_t *count);

/* ---- Interrupting blocked calls (Ctrl-C) --------------------------------
 *
 * A call that blocks (a collective, smd_recv, smd_request_wait, ...) does
 * not return when the process gets SIGINT: a signal handler only sets a
 * flag. smd_set_interrupt_fd(fd) names, for the calling thread, the read
 * end of a nonblocking pipe to which a signal handler writes the number of
 * each signal it gets as one byte (Python's signal.set_wakeup_fd does; so
 * can a C handler with write()). A wait of this thread that has lasted
 * past its spinning phase reads the fd about once a millisecond, consuming
 * what is there; a byte equal to SIGINT ends the call: its communicator is
 * aborted, here and on its peers, exactly as by smd_comm_abort (a call
 * cannot stop half-way alone), and the call returns SMD_ERR_ABORTED with a
 * message saying it was interrupted. Other bytes are ignored, and so is
 * what a call finds at its first read: signals from before the call (that
 * read comes when its first wait has spun, microseconds in, so a SIGINT
 * within those microseconds does not end the call). Waits of other threads
 * (the communicators' workers included) never read the fd.
 *
 * A blocking call that runs on the calling thread is interrupted; one
 * queued behind nonblocking calls of its communicator waits for the
 * communicator's worker and is not (smd_request_wait_timeout in a loop is
 * the way to wait interruptibly there). A wait that returns within its
 * spinning phase (microseconds) never reads the fd, so the fd costs
 * nothing to calls that do not wait.
 *
 * fd -1 turns it off for the thread. Returns SMD_SUCCESS, or
 * SMD_ERR_INVALID_ARGUMENT for fd < -1. Local; the caller keeps the fd
 * open while it is set. */
SMD_API smd_result_t smd_set_interrupt_fd(int fd);

/* ---- Surviving a lost rank (docs/ELASTIC.md) ------------------------------
 *
 * After SMD_ERR_PEER_FAILURE the survivors can go on without restarting
 * the job: one of them revokes the communicator (so that every survivor
 * leaves whatever call it is in), they all shrink it, and the new
 * communicator has the survivors only, ranked densely in their old order.
 * All three work through the world's key-value store, never through the
 * communicator's own traffic, so they work on a communicator that has
 * failed, been revoked or been aborted. The store must outlive the job: the
 * TCP store is served by world rank 0's process, so a lost rank 0 is not
 * survivable (the survivors get SMD_ERR_PEER_FAILURE naming the store). */

/* Make every pending and future call on `comm` end with SMD_ERR_REVOKED,
 * here and on every member that can be reached (through the store), from
 * any thread. Local and nonblocking: peers blocked in a call on `comm` leave
 * it within about a second; a peer that has not noticed yet learns it at
 * its next wait on `comm`. smd_comm_agree, smd_comm_shrink and
 * smd_comm_destroy still work on a revoked communicator. Revoking twice is
 * fine. Sub-communicators made from `comm` are not revoked. */
SMD_API smd_result_t smd_comm_revoke(smd_comm_t *comm);

/* Collective over the survivors of `comm` (every member that has not
 * failed calls it, the same number of times): they agree on the bitwise
 * AND of their *flag values and on the set of members that failed, even
 * when members fail during the agreement. On return *flag is the AND and
 * failed[0..min(*nfailed, failed_capacity)) the failed members' ranks in
 * `comm`, ascending; *nfailed is their count (pass failed_capacity =
 * the communicator's size to get them all; failed may be NULL when
 * failed_capacity is 0). A member is failed when the store saw its
 * process die, a transport lost it, an earlier agreement on `comm` found
 * it failed, or it did not arrive within SMD_TIMEOUT; a member that
 * arrives after the others declared it failed gets
 * SMD_ERR_PEER_FAILURE instead of a result. Every survivor gets the same
 * result. Errors: SMD_ERR_PEER_FAILURE (the store is gone, or this rank
 * was declared failed), SMD_ERR_TIMEOUT (a member died between the two
 * store operations of its vote: call it again). */
SMD_API smd_result_t smd_comm_agree(smd_comm_t *comm, uint32_t *flag, int *failed,
                                    int failed_capacity, int *nfailed);

/* Collective over the survivors of `comm`: agree on the failed members
 * (as smd_comm_agree) and form *newcomm from the others, ranked in their
 * order in `comm`, with its node and rail structure computed afresh.
 * old_to_new (may be NULL) gets comm's size entries: the new rank of each
 * old rank, -1 for a failed one. `comm` is left as it was (revoke and
 * destroy it). A member that fails while the new communicator forms makes
 * the survivors' shrink fail with SMD_ERR_PEER_FAILURE; shrink `comm`
 * again. */
SMD_API smd_result_t smd_comm_shrink(smd_comm_t *comm, smd_comm_t **newcomm, int *old_to_new);

/* Collective over every member of `comm` (a healthy one: shrink first):
 * admit n_new new processes, which call smd_comm_join, and form *newcomm
 * of comm's size + n_new ranks: the members keep their order (rank r of
 * comm is rank r of *newcomm), the joiners follow in the order they came.
 * It is a world of its own (its nodes, rails, transports and shared
 * memory formed afresh from all its processes); `comm` is left as it was.
 * Waits up to wait_ms milliseconds for the joiners (<= 0: SMD_TIMEOUT,
 * in seconds). Every member
 * gets the same error when one comes: SMD_ERR_TIMEOUT (fewer than n_new
 * joined in time; a joiner that comes later waits for the next grow),
 * SMD_ERR_MISMATCH (members passed different n_new),
 * SMD_ERR_INVALID_ARGUMENT (n_new negative or the size too large). Needs
 * the world's store: SMD_ERR_INVALID_USAGE for a world of one formed
 * without one. The grown world's transport is SMD_TRANSPORT's choice. */
SMD_API smd_result_t smd_comm_grow(smd_comm_t *comm, int n_new, int64_t wait_ms,
                                   smd_comm_t **newcomm);

/* A new process joins the job: waits (up to options' timeout_ms
 * milliseconds, or SMD_TIMEOUT seconds) for a grow that admits it and returns the grown
 * communicator in *newcomm (its rank: smd_comm_rank). `options` (may be
 * NULL: the environment) name the job's store as for smd_comm_init: its
 * address and port (SMD_MASTER_ADDR / SMD_MASTER_PORT) and the job's
 * token (SMD_JOB_TOKEN or job_token; required), or an injected store and
 * its store_prefix; rank and world_size are ignored. A wrong token is
 * refused by the store (SMD_ERR_BOOTSTRAP "... job token mismatch") and
 * disturbs nobody. SMD_ERR_TIMEOUT when no grow admits it in time or the
 * grow that admitted it timed out. */
SMD_API smd_result_t smd_comm_join(const smd_init_options_t *options, smd_comm_t **newcomm);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SMD_H */
