// Shared-memory allocation entry points (see core/comm/shared_memory.h).
#include <smd.h>

#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/validate.h"
#include "core/comm/communicator.h"
#include "core/comm/shared_memory.h"

using namespace smd;

extern "C" {

SMD_API smd_result_t smd_mem_alloc(smd_comm_t *comm, size_t bytes, void **ptr) {
  return guarded("smd_mem_alloc", [&] {
    require_out(ptr, "ptr");
    *ptr = nullptr;
    auto c = comm_of(comm);
    *ptr = shared_alloc(c->ctx_ptr(), bytes);
  });
}

SMD_API smd_result_t smd_mem_free(void *ptr) {
  return guarded("smd_mem_free", [&] {
    if (ptr) shared_free(ptr);
  });
}

}  // extern "C"
