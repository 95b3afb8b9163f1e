#include "core/api/validate.h"

#include <strings.h>

#include <algorithm>
#include <vector>

#include "core/gpu/cuda_api.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

void require_out(const void *p, const char *name) {
  if (!p) fail(SMD_ERR_INVALID_ARGUMENT, "%s is NULL", name);
}

bool stream_ordered(smd_stream_t stream) {
  if (!stream) return false;
  if (!gpu::cuda_active()) {
    // With SMD_CUDA=off, CUDA is not opened even to explain.
    const std::string mode = param_string("SMD_CUDA");
    const bool off = !strcasecmp(mode.c_str(), "off") || mode == "0";
    fail(SMD_ERR_NOT_SUPPORTED,
         "a device stream was given, but this process does not use CUDA (%s; SMD_CUDA=%s): pass "
         "NULL with host memory",
         off                              ? "CUDA is off"
         : gpu::cuda_status().devices > 0 ? "the CUDA driver is not loaded"
                                          : gpu::cuda_status().reason.c_str(),
         mode.c_str());
  }
  return true;
}

void check_stream(smd_stream_t stream) {
  if (!stream_ordered(stream)) return;
  fail(SMD_ERR_NOT_SUPPORTED,
       "a device stream was given, but this call has no stream-ordered form yet (only the "
       "collectives and point-to-point calls do; see docs/GPU.md): pass NULL");
}

bool p2p_on_device(const void *buf, const char *name) {
  if (!buf || !gpu::cuda_active()) return false;
  const gpu::PointerInfo info = gpu::classify_pointer(buf);
  gpu::require_known(info, buf, name);
  return gpu::on_device(info.kind);
}

MemoryKind collective_memory(const CollArgs &a, int rank) {
  if (!a.sendbuf && !a.recvbuf) return MemoryKind::kHost;  // a barrier: no memory at all
  if (!gpu::cuda_active()) return MemoryKind::kHost;       // one cheap check per call
  const void *send = a.kind == CollKind::kBroadcast && rank != a.root ? nullptr : a.sendbuf;
  const gpu::PointerInfo s = gpu::classify_pointer(send);
  const gpu::PointerInfo r = gpu::classify_pointer(a.recvbuf);
  gpu::require_known(s, send, "sendbuf");
  gpu::require_known(r, a.recvbuf, "recvbuf");
  const bool send_dev = gpu::on_device(s.kind), recv_dev = gpu::on_device(r.kind);
  if (send && a.recvbuf && send_dev != recv_dev)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "sendbuf is %s memory and recvbuf %s memory: the buffers of one call must both be host "
         "(or pinned host) memory or both device (or managed) memory",
         gpu::pointer_kind_name(s.kind), gpu::pointer_kind_name(r.kind));
  return send_dev || recv_dev ? MemoryKind::kDevice : MemoryKind::kHost;
}

size_t check_datatype(smd_datatype_t datatype) {
  if (!valid_datatype(datatype))
    fail(SMD_ERR_INVALID_ARGUMENT, "unknown datatype %d (valid: 0..%d, see smd_datatype_t)",
         static_cast<int>(datatype), SMD_DATATYPE_COUNT - 1);
  return datatype_size(datatype);
}

void check_op(smd_op_t op) {
  if (!valid_op(op))
    fail(SMD_ERR_INVALID_ARGUMENT, "unknown reduction op %d (valid: 0..%d, see smd_op_t)",
         static_cast<int>(op), SMD_OP_COUNT - 1);
}

void check_root(int root, int size) {
  if (root < 0 || root >= size)
    fail(SMD_ERR_INVALID_ARGUMENT, "root %d is not a rank of the communicator (size %d)", root,
         size);
}

size_t checked_bytes(size_t count, size_t elem_size, size_t blocks, const char *what) {
  size_t limit = static_cast<size_t>(PTRDIFF_MAX);
  if (count && (elem_size > limit / count || blocks > limit / (count * elem_size)))
    fail(SMD_ERR_INVALID_ARGUMENT,
         "%s of %zu elements of %zu bytes (x%zu) overflows the address space", what, count,
         elem_size, blocks);
  return count * elem_size * blocks;
}

void check_buffer(const void *buf, size_t bytes, const char *name) {
  if (!buf && bytes)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s is NULL but %zu bytes were asked for", name, bytes);
}

void check_overlap(const void *send, size_t send_bytes, const void *recv, size_t recv_bytes,
                   size_t inplace_offset) {
  if (!send || !recv || !send_bytes || !recv_bytes) return;
  auto s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
  if (s == r || s == r + inplace_offset) return;
  if (s < r + recv_bytes && r < s + send_bytes)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "sendbuf and recvbuf overlap without being in place (see the in-place rules in smd.h)");
}

void check_versioned(const char *type, size_t struct_size, unsigned version, size_t size,
                     unsigned oldest, unsigned latest, const char *how) {
  if (struct_size < size)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s.struct_size is %zu, expected %zu: %s", type, struct_size,
         size, how);
  if (version < oldest || version > latest) {
    std::string known = oldest == latest ? format("%u", latest) : format("%u..%u", oldest, latest);
    fail(SMD_ERR_INVALID_ARGUMENT, "%s.version %u is not supported (this smd knows %s): %s", type,
         version, known.c_str(), how);
  }
}

void check_status(const smd_status_t *status) {
  require_out(status, "status");
  check_versioned("smd_status_t", status->struct_size, status->version, sizeof(smd_status_t),
                  SMD_STATUS_VERSION, SMD_STATUS_VERSION, "smd_status_init() fills it");
}

std::shared_ptr<const BlockLayout> check_blocks(const size_t *counts, const size_t *displs,
                                                int size, size_t elem_size, const char *buffer,
                                                const char *counts_name, bool may_overlap) {
  if (!counts)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s is NULL (one count per rank is needed)", counts_name);
  auto l = std::make_shared<BlockLayout>();
  l->counts.assign(counts, counts + size);
  l->displs.resize(size_t(size));
  size_t packed = 0;
  for (int r = 0; r < size; ++r) {
    size_t d = displs ? displs[r] : packed;
    // Every block must end inside the address space, in bytes.
    if (counts[r] > SIZE_MAX - d)
      fail(SMD_ERR_INVALID_ARGUMENT, "block %d of %s (%zu elements at %zu) overflows", r, buffer,
           counts[r], d);
    checked_bytes(d + counts[r], elem_size, 1, buffer);
    l->displs[size_t(r)] = d;
    packed = d + counts[r];
  }
  finish_layout(*l);
  checked_bytes(l->total, elem_size, 1, "the sum of counts");
  if (may_overlap) return l;
  // Blocks holding elements must not overlap: sort them by start.
  std::vector<int> order;
  for (int r = 0; r < size; ++r)
    if (counts[r]) order.push_back(r);
  std::sort(order.begin(), order.end(),
            [&](int x, int y) { return l->displs[size_t(x)] < l->displs[size_t(y)]; });
  for (size_t i = 1; i < order.size(); ++i) {
    int x = order[i - 1], y = order[i];
    if (l->displs[size_t(x)] + counts[x] > l->displs[size_t(y)])
      fail(SMD_ERR_INVALID_ARGUMENT,
           "blocks of ranks %d (%zu elements at %zu) and %d (%zu at %zu) overlap in %s", x,
           counts[x], l->displs[size_t(x)], y, counts[y], l->displs[size_t(y)], buffer);
  }
  return l;
}

}  // namespace smd
