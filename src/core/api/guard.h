// The C ABI boundary: every extern "C" function runs its body through
// guarded(), which catches everything, maps it to an smd_result_t and
// leaves the message (prefixed with the call's name, except for errors of
// a finished operation, which name the operation) as the thread's last
// error. Nothing thrown inside the core ever crosses into the caller.
#pragma once

#include <smd.h>

#include <new>
#include <string>

#include "core/api/group_calls.h"
#include "core/api/op_errors.h"
#include "core/exec/interrupt.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

template <class F>
smd_result_t guarded(const char *call, F &&body) noexcept {
  try {
    group_call_started(call);
    interrupt_call_started();
    body();
    clear_last_error();
    return SMD_SUCCESS;
  } catch (const Error &e) {
    if (e.code() == SMD_IN_PROGRESS) {
      set_last_error("");
      return SMD_IN_PROGRESS;
    }
    // A finished operation's error names the operation itself.
    bool named = dynamic_cast<const OperationError *>(&e) != nullptr;
    std::string msg = named ? e.message() : std::string(call) + ": " + e.message();
    group_call_failed(call, e.code(), e.message());
    set_last_error(msg);
    SMD_INFO("api", "%s -> %s", msg.c_str(), smd_result_string(e.code()));
    return e.code();
  } catch (const std::bad_alloc &) {
    set_last_error(std::string(call) + ": out of memory");
    return SMD_ERR_NO_MEMORY;
  } catch (const std::exception &e) {
    set_last_error(std::string(call) + ": internal error: " + e.what());
    return SMD_ERR_INTERNAL;
  } catch (...) {
    set_last_error(std::string(call) + ": internal error: unknown exception");
    return SMD_ERR_INTERNAL;
  }
}

}  // namespace smd
