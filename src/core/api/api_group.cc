// Group entry points: smd_group_start / smd_group_end (group_calls.h).
#include <smd.h>

#include "core/api/group_calls.h"
#include "core/api/guard.h"

using namespace smd;

extern "C" {

SMD_API smd_result_t smd_group_start(void) {
  return guarded("smd_group_start", [] { group_start(); });
}

SMD_API smd_result_t smd_group_end(void) {
  return guarded("smd_group_end", [] { group_end(); });
}

}  // extern "C"
