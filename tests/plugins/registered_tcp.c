/* regtcp: a plugin that requires registered memory, for the tests of the
 * core's registration cache. It is the tcp plugin (the sources of
 * examples/plugin-template, compiled in with their entry function renamed
 * tcp_inner_plugin_v1) behind a table that declares
 * SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED and
 *   - hands out registrations of its own from mem_register;
 *   - refuses (ERR_INVALID, with a message) every isend or irecv of at
 *     least one byte whose buffer no live registration covers;
 *   - at finalize, ends the process with status 3 if a registration is
 *     still live: the core must deregister everything before finalize
 *     (an ordinary plugin would only report it; this one must fail the
 *     test that runs it).
 * The core serialises calls (no CAP_THREAD_SAFE), so plain counters do. */
#include <smd_transport.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* meson renames the template's entry for every source of this module,
 * this one included: here the name is the real entry again. */
#undef smd_transport_plugin_v1

const smd_transport_v1_t *tcp_inner_plugin_v1(void);

#define REG_MAGIC 0x52454754u /* "TGER" */

typedef struct {
  uint32_t magic;
  uintptr_t base;
  size_t size;
} registration;

static const smd_transport_v1_t *inner;
static smd_transport_v1_t table;
static const smd_transport_host_t *the_host;
static long live, made;

static smd_transport_status_t refuse(const char *what, const void *buf, size_t size) {
  char msg[160];
  snprintf(msg, sizeof msg, "regtcp: %s of %zu bytes at %p without a registration covering it",
           what, size, buf);
  if (the_host != NULL) the_host->set_error(the_host->host, msg);
  return SMD_TRANSPORT_ERR_INVALID;
}

static int covers(const void *mr, const void *buf, size_t size) {
  const registration *r = (const registration *)mr;
  uintptr_t lo = (uintptr_t)buf;
  return r != NULL && r->magic == REG_MAGIC && lo >= r->base && size <= r->size &&
         lo - r->base <= r->size - size;
}

static smd_transport_status_t reg_init(const smd_transport_host_t *host, void **ctx) {
  the_host = host;
  return inner->init(host, ctx);
}

static smd_transport_status_t reg_finalize(void *ctx) {
  smd_transport_status_t st = inner->finalize(ctx);
  if (live != 0) {
    char msg[120];
    snprintf(msg, sizeof msg, "regtcp: %ld of %ld registrations still live at finalize", live,
             made);
    the_host->log(the_host->host, SMD_TRANSPORT_LOG_WARN, msg);
    _exit(3);
  }
  return st;
}

static smd_transport_status_t reg_mem_register(void *ctx, void *ptr, size_t size, uint32_t flags,
                                               void **mr) {
  (void)ctx, (void)flags;
  registration *r = (registration *)malloc(sizeof *r);
  if (r == NULL || mr == NULL) {
    free(r);
    return SMD_TRANSPORT_ERR_NO_MEMORY;
  }
  r->magic = REG_MAGIC;
  r->base = (uintptr_t)ptr;
  r->size = size;
  *mr = r;
  ++live;
  ++made;
  return SMD_TRANSPORT_OK;
}

static smd_transport_status_t reg_mem_deregister(void *ctx, void *mr) {
  (void)ctx;
  registration *r = (registration *)mr;
  if (r == NULL || r->magic != REG_MAGIC) return SMD_TRANSPORT_ERR_INVALID;
  r->magic = 0;
  free(r);
  --live;
  return SMD_TRANSPORT_OK;
}

static smd_transport_status_t reg_isend(void *ctx, void *ep, const void *buf, size_t size, void *mr,
                                        uint64_t tag, void **request) {
  if (size > 0 && !covers(mr, buf, size)) return refuse("send", buf, size);
  return inner->isend(ctx, ep, buf, size, NULL, tag, request);
}

static smd_transport_status_t reg_irecv(void *ctx, void *ep, void *buf, size_t size, void *mr,
                                        uint64_t tag, void **request) {
  if (size > 0 && !covers(mr, buf, size)) return refuse("receive", buf, size);
  return inner->irecv(ctx, ep, buf, size, NULL, tag, request);
}

__attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(void) {
  if (inner == NULL) {
    inner = tcp_inner_plugin_v1();
    memcpy(&table, inner, sizeof table);
    table.struct_size = sizeof table;
    table.name = "regtcp";
    table.description = "tcp that requires registered memory (a test plugin)";
    table.caps = inner->caps | SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED;
    table.init = reg_init;
    table.finalize = reg_finalize;
    table.mem_register = reg_mem_register;
    table.mem_deregister = reg_mem_deregister;
    table.isend = reg_isend;
    table.irecv = reg_irecv;
    table.probe = NULL;  /* never chosen by auto */
    table.params = NULL; /* tcp's variables are tcp's */
  }
  return &table;
}
