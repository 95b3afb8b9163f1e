#include "unmap_hook.h"

#include <ucm/api/ucm.h>

#include <atomic>
#include <mutex>

namespace smd_ucx {

namespace {

std::mutex g_install_mu;
int g_users = 0;
// Every core in the process reports to its one process-wide log, so the
// first report function serves every context.
std::atomic<UnmapReport> g_report{nullptr};

// UCX's registration cache uses 1000 too; the order among handlers of a
// "pre" event does not matter to us.
constexpr int kHandlerPriority = 1000;

void on_unmapped(ucm_event_type_t type, ucm_event_t *event, void *) {
  if (type != UCM_EVENT_VM_UNMAPPED) return;
  if (UnmapReport report = g_report.load(std::memory_order_acquire))
    report(event->vm_unmapped.address, event->vm_unmapped.size);
}

}  // namespace

bool unmap_hook_attach(UnmapReport report) {
  if (report == nullptr) return false;
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_users == 0) {
    g_report.store(report, std::memory_order_release);
    ucs_status_t s =
        ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, kHandlerPriority, on_unmapped, nullptr);
    if (s == UCS_OK && ucm_test_events(UCM_EVENT_VM_UNMAPPED) != UCS_OK) {
      ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmapped, nullptr);
      s = UCS_ERR_UNSUPPORTED;
    }
    if (s != UCS_OK) return false;
  }
  ++g_users;
  return true;
}

void unmap_hook_detach() {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_users == 0 || --g_users > 0) return;
  ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmapped, nullptr);
}

}  // namespace smd_ucx
