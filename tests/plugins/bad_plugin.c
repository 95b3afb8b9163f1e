/* A transport plugin that looks complete but is broken in one way, chosen
 * at compile time (tests/plugins/meson.build builds one module per way):
 *   BAD_ABI            the table claims ABI version 7
 *   BAD_MISSING_ENTRY  the required entry irecv is NULL
 *   BAD_NULL_TABLE     the entry function returns NULL
 *   BAD_INIT_FAILS     init explains "no device here" and fails
 *   BAD_UNDEFINED      needs a symbol nothing defines, so dlopen fails
 *   BAD_SMALL_TABLE    struct_size does not even cover the required entries
 *   BAD_CAPS           declares CAP_SEGMENTS, but struct_size ends before
 *                      the segment entries (set in memory all the same)
 *   LEAKY_EXPORT       a valid table, but a helper function is exported
 *                      beside the entry symbol (default visibility)
 * or, as the one good variant, OLD_V1: a plugin built against the first v1
 * header, whose struct_size ends at `progress`; its optional entries are
 * set in memory, but past struct_size, so the core must not see them.
 * BAD_NAME is the table's name. Only init and finalize are ever called
 * (BAD_INIT_FAILS, OLD_V1); the other entries are stubs. */
#include <smd_transport.h>

#if defined(BAD_SMALL_TABLE)
#define TABLE_SIZE offsetof(smd_transport_v1_t, progress)
#elif defined(BAD_CAPS) || defined(OLD_V1)
#define TABLE_SIZE offsetof(smd_transport_v1_t, wait)
#else
#define TABLE_SIZE sizeof(smd_transport_v1_t)
#endif

#ifdef BAD_CAPS
#define TABLE_CAPS SMD_TRANSPORT_CAP_SEGMENTS
#else
#define TABLE_CAPS 0
#endif

#ifdef BAD_UNDEFINED
int smd_test_symbol_nobody_defines(void);
#endif

#ifdef LEAKY_EXPORT
/* Neither static nor hidden: smd-transport-check must warn about it. */
__attribute__((visibility("default"))) int smd_test_leaked_helper(void);
int smd_test_leaked_helper(void) { return 42; }
#endif

#ifdef GRABS_SIGNALS
#include <signal.h>
#include <stdlib.h>
/* As libinfinipath's: Ctrl-C would end the process with no word. */
static void grabber_exit(int signo) { exit(signo); }
__attribute__((constructor)) static void grab_at_load(void) { signal(SIGUSR1, grabber_exit); }
#endif

static smd_transport_status_t bad_init(const smd_transport_host_t *host, void **ctx) {
  *ctx = NULL;
#ifdef GRABS_SIGNALS
  signal(SIGINT, grabber_exit);
  signal(SIGSEGV, SIG_DFL);
#endif
#ifdef BAD_UNDEFINED
  if (smd_test_symbol_nobody_defines()) return SMD_TRANSPORT_ERR_OTHER;
#endif
#if defined(BAD_INIT_FAILS)
  host->set_error(host->host, "no device here");
  return SMD_TRANSPORT_ERR_SYSTEM;
#elif defined(OLD_V1) || defined(GRABS_SIGNALS)
  static int context;
  (void)host;
  *ctx = &context;
  return SMD_TRANSPORT_OK;
#else
  (void)host;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
#endif
}

static smd_transport_status_t bad_finalize(void *ctx) {
  (void)ctx;
  return SMD_TRANSPORT_OK;
}

/* Stubs: nothing calls them. */
static smd_transport_status_t bad_get_address(void *ctx, void *buf, size_t *size) {
  (void)ctx, (void)buf, (void)size;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_connect(void *ctx, int32_t peer, const void *address, size_t size,
                                          void **endpoint) {
  (void)ctx, (void)peer, (void)address, (void)size, (void)endpoint;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_disconnect(void *ctx, void *endpoint) {
  (void)ctx, (void)endpoint;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_mem_register(void *ctx, void *ptr, size_t size, uint32_t flags,
                                               void **mr) {
  (void)ctx, (void)ptr, (void)size, (void)flags, (void)mr;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_mem_deregister(void *ctx, void *mr) {
  (void)ctx, (void)mr;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_isend(void *ctx, void *endpoint, const void *buf, size_t size,
                                        void *mr, uint64_t tag, void **request) {
  (void)ctx, (void)endpoint, (void)buf, (void)size, (void)mr, (void)tag, (void)request;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
#ifndef BAD_MISSING_ENTRY
static smd_transport_status_t bad_irecv(void *ctx, void *endpoint, void *buf, size_t size, void *mr,
                                        uint64_t tag, void **request) {
  (void)ctx, (void)endpoint, (void)buf, (void)size, (void)mr, (void)tag, (void)request;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
#endif
static smd_transport_status_t bad_test(void *ctx, void *request, int *done, size_t *size) {
  (void)ctx, (void)request, (void)done, (void)size;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_cancel(void *ctx, void *request) {
  (void)ctx, (void)request;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_progress(void *ctx) {
  (void)ctx;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_wait(void *ctx, int64_t timeout_us) {
  (void)ctx, (void)timeout_us;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_check_peer(void *ctx, void *endpoint) {
  (void)ctx, (void)endpoint;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_segment_create(void *ctx, size_t size, void **ptr, void **segment,
                                                 void *handle, size_t *handle_size) {
  (void)ctx, (void)size, (void)ptr, (void)segment, (void)handle, (void)handle_size;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_segment_attach(void *ctx, void *endpoint, const void *handle,
                                                 size_t handle_size, void **ptr, size_t *size,
                                                 void **segment) {
  (void)ctx, (void)endpoint, (void)handle, (void)handle_size, (void)ptr, (void)size, (void)segment;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}
static smd_transport_status_t bad_segment_release(void *ctx, void *segment) {
  (void)ctx, (void)segment;
  return SMD_TRANSPORT_ERR_UNSUPPORTED;
}

static const smd_transport_v1_t bad_table = {
    TABLE_SIZE,
#ifdef BAD_ABI
    7,
#else
    SMD_TRANSPORT_ABI_VERSION,
#endif
    BAD_NAME,
    "a deliberately broken plugin for the loader tests",
    TABLE_CAPS,
    bad_init,
    bad_finalize,
    bad_get_address,
    bad_connect,
    bad_disconnect,
    bad_mem_register,
    bad_mem_deregister,
    bad_isend,
#ifdef BAD_MISSING_ENTRY
    NULL,
#else
    bad_irecv,
#endif
    bad_test,
    bad_cancel,
    bad_progress,
    bad_wait,
    bad_check_peer,
    NULL, /* mem_pack */
    NULL, /* iget */
    bad_segment_create,
    bad_segment_attach,
    bad_segment_release,
    NULL, /* context_caps */
    NULL, /* probe */
    NULL, /* params */
};

__attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(void) {
#ifdef BAD_NULL_TABLE
  (void)bad_table; /* complete, but never handed out */
  return NULL;
#else
  return &bad_table;
#endif
}
