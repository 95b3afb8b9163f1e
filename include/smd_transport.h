/*
 * smd_transport.h - the transport plugin ABI of smd.
 *
 * This is the only header a transport plugin includes; it is self-contained
 * C99 and never refers to smd's core. A plugin is a shared object that
 * exports one entry function per ABI version it implements:
 *
 *     const smd_transport_v1_t *smd_transport_plugin_v1(void);
 *
 * returning a pointer to a constant table (static storage, valid until the
 * plugin is unloaded). The core loads plugins with dlopen(RTLD_NOW |
 * RTLD_LOCAL) from its plugin directory and SMD_PLUGIN_PATH, looks up the
 * newest entry symbol it knows, and checks the table's struct_size and
 * abi_version before using it. docs/PLUGINS.md is the guide.
 *
 * Versioning
 * ----------
 * Within one ABI version the table only grows at its end. The core reads an
 * entry only if struct_size covers it (see SMD_TRANSPORT_HAS), so a plugin
 * built against an older v1 header keeps loading. An incompatible change
 * adds a new entry symbol (smd_transport_plugin_v2) and table type; the core
 * keeps adapting older symbols it still supports.
 *
 * Rules every plugin follows
 * --------------------------
 * - Every function returns smd_transport_status_t. On failure the plugin
 *   explains it by calling host->set_error() before returning.
 * - The plugin never calls exit(), abort() or prints to stdout; it logs
 *   through host->log().
 * - Unless caps has SMD_TRANSPORT_CAP_THREAD_SAFE, the core never calls one
 *   context from two threads at once (it serialises the calls).
 * - Nothing blocks indefinitely: isend/irecv/iget start work and return;
 *   test/progress/wait return within their time bound.
 * - A request on an endpoint whose peer has died completes, on a later
 *   test(), with SMD_TRANSPORT_ERR_PEER within 10 s (smd-transport-check's
 *   peer_death test holds plugins to that); it never stays pending forever.
 * - Resources (sockets, shared memory, registrations) are released by
 *   finalize() and, where the OS allows, also when the process dies
 *   (shared memory that outlives a crash is a bug).
 */
#ifndef SMD_TRANSPORT_H
#define SMD_TRANSPORT_H

#ifndef SMD_NO_SYSTEM_INCLUDES
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SMD_TRANSPORT_ABI_VERSION 1

/* The name of the v1 entry symbol. */
#define SMD_TRANSPORT_ENTRY_V1 "smd_transport_plugin_v1"

/* The core uses only the low SMD_TRANSPORT_TAG_BITS bits of a tag; the
 * upper bits are zero and the plugin may use them (for instance to carry
 * the sender's rank on a network whose tags are not per endpoint). */
#define SMD_TRANSPORT_TAG_BITS 44

/* True if `table` (a pointer to a transport table) is large enough to hold
 * the entry `field`. */
#define SMD_TRANSPORT_HAS(table, type, field) \
  ((table)->struct_size >= offsetof(type, field) + sizeof((table)->field))

typedef enum smd_transport_status {
  SMD_TRANSPORT_OK = 0,
  /* Not an error: the operation has not finished yet. */
  SMD_TRANSPORT_IN_PROGRESS = 1,
  /* The caller passed something wrong (bad address blob, size, handle). */
  SMD_TRANSPORT_ERR_INVALID = 2,
  SMD_TRANSPORT_ERR_NO_MEMORY = 3,
  /* The peer of this endpoint died, disconnected or is unreachable. */
  SMD_TRANSPORT_ERR_PEER = 4,
  /* A message arrived that is larger than the posted receive buffer. The
   * receive completes with this status; the message is consumed. */
  SMD_TRANSPORT_ERR_TRUNCATED = 5,
  /* The plugin does not offer this (optional entry or capability). */
  SMD_TRANSPORT_ERR_UNSUPPORTED = 6,
  /* An operating-system or network-library call failed. */
  SMD_TRANSPORT_ERR_SYSTEM = 7,
  /* The request was cancelled. */
  SMD_TRANSPORT_ERR_CANCELED = 8,
  /* Anything else. */
  SMD_TRANSPORT_ERR_OTHER = 9,
  /* Not a value: these make every int a valid smd_transport_status_t value, so a bad value
   * from any language reaches smd's argument checks. */
  SMD_TRANSPORT_STATUS_RANGE_MIN_ = -2147483647 - 1,
  SMD_TRANSPORT_STATUS_RANGE_MAX_ = 2147483647
} smd_transport_status_t;

/* The name of a status ("ERR_PEER"), for logs and messages; never NULL. */
static inline const char *smd_transport_status_string(smd_transport_status_t status) {
  switch (status) {
    case SMD_TRANSPORT_OK: return "OK";
    case SMD_TRANSPORT_IN_PROGRESS: return "IN_PROGRESS";
    case SMD_TRANSPORT_ERR_INVALID: return "ERR_INVALID";
    case SMD_TRANSPORT_ERR_NO_MEMORY: return "ERR_NO_MEMORY";
    case SMD_TRANSPORT_ERR_PEER: return "ERR_PEER";
    case SMD_TRANSPORT_ERR_TRUNCATED: return "ERR_TRUNCATED";
    case SMD_TRANSPORT_ERR_UNSUPPORTED: return "ERR_UNSUPPORTED";
    case SMD_TRANSPORT_ERR_SYSTEM: return "ERR_SYSTEM";
    case SMD_TRANSPORT_ERR_CANCELED: return "ERR_CANCELED";
    case SMD_TRANSPORT_ERR_OTHER: return "ERR_OTHER";
    default: return "ERR_UNKNOWN";
  }
}

/* Capability flags (smd_transport_v1_t.caps). */
/* Reaches only processes on the same node (shared memory). */
#define SMD_TRANSPORT_CAP_INTRA_NODE_ONLY (1ull << 0)
/* Every entry may be called concurrently from several threads. */
#define SMD_TRANSPORT_CAP_THREAD_SAFE (1ull << 1)
/* Buffers passed to isend/irecv/iget must be registered (mr != NULL for
 * every buffer of at least one byte); without this flag mr may be NULL and
 * the plugin handles any memory. The core registers the buffers through
 * its registration cache (mem_register over whole pages, reused while the
 * memory stays mapped) and passes the registration. A plugin that needs
 * registration only in some contexts (a provider requiring local
 * descriptors) says so from context_caps() instead. */
#define SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED (1ull << 2)
/* One-sided reads: mem_pack and iget are implemented. */
#define SMD_TRANSPORT_CAP_RMA (1ull << 3)
/* iget may read any address of the peer's process: rkey may be NULL and
 * the remote buffer need not be registered (cross-memory attach). */
#define SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS (1ull << 4)
/* Shared segments that peers map for loads and stores:
 * segment_create / segment_attach / segment_release are implemented. */
#define SMD_TRANSPORT_CAP_SEGMENTS (1ull << 5)
/* Buffers of send, recv and isend/irecv may be CUDA device memory: the
 * plugin moves them itself (UCX built with CUDA, libfabric FI_HMEM). When
 * every transport of a communicator declares it (in caps or context_caps),
 * the engine runs device collectives on the device buffers instead of
 * staging them through host memory (SMD_GPU_DIRECT, docs/GPU.md). */
#define SMD_TRANSPORT_CAP_DEVICE_MEMORY (1ull << 6)
/* Only from context_caps(): while this context lives, every range of
 * memory the process unmaps is reported through host->mem_unmapped (the
 * plugin hooks the memory calls, e.g. with UCX's UCM). The core's
 * registration cache keeps released registrations only while some
 * context reports unmaps. */
#define SMD_TRANSPORT_CAP_REPORTS_UNMAPS (1ull << 7)

/* Reaches only ranks that are threads of the calling process (the inproc
 * plugin, for scale tests): never a network, never checked between
 * processes by `smd-info doctor`. */
#define SMD_TRANSPORT_CAP_SINGLE_PROCESS (1ull << 8)

/* The priority of a plugin without a probe entry (see probe): below a
 * native fabric library, above the portable fallback. */
#define SMD_TRANSPORT_DEFAULT_PRIORITY 20

/* Log levels for host->log. */
#define SMD_TRANSPORT_LOG_WARN 1
#define SMD_TRANSPORT_LOG_INFO 2
#define SMD_TRANSPORT_LOG_TRACE 3

/* What the core gives a plugin at init: where it stands in the job and the
 * services it may use. Valid until finalize() returns. */
typedef struct smd_transport_host {
  size_t struct_size;   /* sizeof(smd_transport_host_t) */
  uint32_t abi_version; /* SMD_TRANSPORT_ABI_VERSION */
  void *host;           /* pass back to the callbacks below */
  int32_t rank;         /* this process's rank in the world */
  int32_t world_size;
  int32_t local_rank; /* rank among the ranks of this node */
  int32_t local_size;
  int32_t node_index; /* this node's index, 0 .. node_count-1 */
  int32_t node_count;
  /* The job's deadline for blocking steps, in milliseconds (from the
   * option timeout_ms, or SMD_TIMEOUT, which is in seconds). */
  int64_t timeout_ms;
  /* A log line (no trailing newline needed); level is
   * SMD_TRANSPORT_LOG_*. The core adds rank and plugin name. */
  void (*log)(void *host, int level, const char *message);
  /* Explain the failure the calling thread is about to return. */
  void (*set_error)(void *host, const char *message);
  /* The value of a configuration variable (e.g. "SMD_EFA_PROVIDER"), or
   * NULL when unset. The pointer stays valid until finalize(). */
  const char *(*get_param)(void *host, const char *name);

  /* Appended entries: present when struct_size covers them (see
   * SMD_TRANSPORT_HAS); an older core passes a shorter host. */

  /* Report that the process unmapped [start, start+size) (munmap, brk
   * shrinking, madvise(DONTNEED)...), so that registrations of those pages
   * are never reused. Process-wide, not tied to a context: callable from
   * any thread, inside the memory call itself; it takes no lock, never
   * allocates and returns at once. Plugins that report every unmap say so
   * with SMD_TRANSPORT_CAP_REPORTS_UNMAPS from context_caps(). */
  void (*mem_unmapped)(const void *start, size_t size);
} smd_transport_host_t;

/* One configuration variable a plugin reads through host->get_param, for
 * `smd-info params` and the documentation. */
typedef struct smd_transport_param {
  const char *name;          /* "SMD_EFA_PROVIDER": SMD_<PLUGIN>_... */
  const char *type;          /* "string", "int", "bool", "list", "seconds" */
  const char *default_value; /* as text; "" = unset */
  const char *doc;           /* one sentence */
} smd_transport_param_t;

/* The v1 plugin table. Entries marked "optional" may be NULL; the others
 * must be set. `ctx` is what init() returned; `endpoint` what connect()
 * returned; `mr` what mem_register() returned or NULL; `request` what a
 * starting call returned. */
typedef struct smd_transport_v1 {
  size_t struct_size;      /* sizeof(smd_transport_v1_t) as built */
  uint32_t abi_version;    /* SMD_TRANSPORT_ABI_VERSION */
  const char *name;        /* short name: "shm", "ucx", "efa" */
  const char *description; /* one line for logs and smd-info */
  uint64_t caps;           /* SMD_TRANSPORT_CAP_* */

  /* Create a context for one world. May fail (no device, library missing)
   * with a message; the core then tries other plugins. */
  smd_transport_status_t (*init)(const smd_transport_host_t *host, void **ctx);
  /* Release everything of ctx. Pending requests are dropped. */
  smd_transport_status_t (*finalize)(void *ctx);

  /* This context's address blob, which the core sends to every peer. In:
   * *size = capacity of buf; out: bytes written. If buf is too small,
   * returns SMD_TRANSPORT_ERR_INVALID with *size = the size needed. */
  smd_transport_status_t (*get_address)(void *ctx, void *buf, size_t *size);
  /* An endpoint to world rank `peer` from its address blob. May return
   * before the connection is fully up; sends may be queued. */
  smd_transport_status_t (*connect)(void *ctx, int32_t peer, const void *address, size_t size,
                                    void **endpoint);
  smd_transport_status_t (*disconnect)(void *ctx, void *endpoint);

  /* Register [ptr, ptr+size) for transfers (flags reserved, pass 0). */
  smd_transport_status_t (*mem_register)(void *ctx, void *ptr, size_t size, uint32_t flags,
                                         void **mr);
  smd_transport_status_t (*mem_deregister)(void *ctx, void *mr);

  /* Tagged messages. Receives match by (endpoint, exact tag); messages
   * from one endpoint with the same tag match in the order sent; messages
   * with different tags may be received in any order. size may be 0. The
   * buffer belongs to the plugin until the request completes. */
  smd_transport_status_t (*isend)(void *ctx, void *endpoint, const void *buf, size_t size, void *mr,
                                  uint64_t tag, void **request);
  smd_transport_status_t (*irecv)(void *ctx, void *endpoint, void *buf, size_t size, void *mr,
                                  uint64_t tag, void **request);
  /* Drive progress and report whether `request` finished. When *done is
   * set, the return value is the operation's status, *size (if not NULL)
   * the bytes transferred, and the request is released. */
  smd_transport_status_t (*test)(void *ctx, void *request, int *done, size_t *size);
  /* Release an unfinished request; its buffer is not touched after this
   * returns. Used after errors and aborts. */
  smd_transport_status_t (*cancel)(void *ctx, void *request);
  /* Drive progress of everything pending. */
  smd_transport_status_t (*progress)(void *ctx);

  /* Optional: block up to timeout_us microseconds until something may have
   * progressed (used instead of spinning when ranks outnumber cores). */
  smd_transport_status_t (*wait)(void *ctx, int64_t timeout_us);
  /* Optional: SMD_TRANSPORT_ERR_PEER if the endpoint's peer is known to
   * have died, else OK. Cheap; called while the core waits long. */
  smd_transport_status_t (*check_peer)(void *ctx, void *endpoint);

  /* Optional, with SMD_TRANSPORT_CAP_RMA: the remote key of a
   * registration, for a peer's iget (same size rules as get_address). */
  smd_transport_status_t (*mem_pack)(void *ctx, void *mr, void *buf, size_t *size);
  /* Optional, with SMD_TRANSPORT_CAP_RMA: read `size` bytes at the peer's
   * address `remote` (covered by the registration `rkey` packs, or any
   * address with SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS and rkey NULL) into
   * `local`. Completes through test(); may complete inside this call, in
   * which case *request is set to NULL. */
  smd_transport_status_t (*iget)(void *ctx, void *endpoint, void *local, void *local_mr,
                                 uint64_t remote, const void *rkey, size_t rkey_size, size_t size,
                                 void **request);

  /* Optional, with SMD_TRANSPORT_CAP_SEGMENTS: a zero-filled shared memory
   * segment of `size` bytes mapped at *ptr, and a handle blob (same size
   * rules as get_address) that lets peers map it. */
  smd_transport_status_t (*segment_create)(void *ctx, size_t size, void **ptr, void **segment,
                                           void *handle, size_t *handle_size);
  /* Map a segment created by the peer of `endpoint`. */
  smd_transport_status_t (*segment_attach)(void *ctx, void *endpoint, const void *handle,
                                           size_t handle_size, void **ptr, size_t *size,
                                           void **segment);
  /* Unmap a created or attached segment. */
  smd_transport_status_t (*segment_release)(void *ctx, void *segment);

  /* Appended entries (read only when struct_size covers them). */

  /* Optional: the caps of this context after init, where they depend on
   * what init found. The core reads SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED,
   * SMD_TRANSPORT_CAP_REPORTS_UNMAPS and SMD_TRANSPORT_CAP_DEVICE_MEMORY
   * from it (added to caps); other bits are reserved. Called once, right
   * after init. */
  uint64_t (*context_caps)(void *ctx);

  /* Optional: how suitable this plugin is on this machine, for
   * SMD_TRANSPORT=auto, which tries network plugins from the highest
   * priority down (ties keep the search order). Negative: not usable
   * here, auto skips it. Cheap and without side effects: called before
   * init, with a host whose placement is the world's (log, set_error,
   * get_param work; no context exists). Writes one phrase saying why into
   * why[why_size] (NUL-terminated). Guide: 100 the machine's own fabric
   * (an EFA device for efa), 50 a native fabric library, 10 a portable
   * fallback (plain TCP); a plugin without probe counts
   * SMD_TRANSPORT_DEFAULT_PRIORITY. */
  int32_t (*probe)(const smd_transport_host_t *host, char *why, size_t why_size);

  /* Optional: the configuration variables this plugin reads, ended by an
   * entry whose name is NULL. Static storage. Listed by `smd-info params`
   * with the plugin's name; the core's own variables are not repeated. */
  const smd_transport_param_t *params;
} smd_transport_v1_t;

/* The type of the v1 entry function. */
typedef const smd_transport_v1_t *(*smd_transport_entry_v1_t)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SMD_TRANSPORT_H */
