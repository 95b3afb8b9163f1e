// Argument checks shared by the entry points: each failure names the
// argument and its value.
#pragma once

#include <smd.h>

#include "core/coll/collective.h"

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/coll/block_layout.h"

namespace smd {

// An output pointer the caller must pass.
void require_out(const void *p, const char *name);
// A non-NULL stream where the call has no stream-ordered form yet
// (the sharded collectives): SMD_ERR_NOT_SUPPORTED saying what
// is missing (no CUDA in this process, or the device data path of
// docs/GPU.md).
void check_stream(smd_stream_t stream);
// A collective's stream: whether the call is stream-ordered (non-NULL);
// SMD_ERR_NOT_SUPPORTED when a stream is given in a process that does not
// use CUDA.
bool stream_ordered(smd_stream_t stream);
// Whether a point-to-point buffer is device or managed memory (then the
// stream proxy runs the call, on the caller's stream or for NULL on the
// legacy default one); freed or foreign memory is
// SMD_ERR_INVALID_ARGUMENT naming `name`.
bool p2p_on_device(const void *buf, const char *name);
// The memory kind of a collective's buffers on this rank (those it uses:
// not a non-root broadcast's sendbuf), SMD_ERR_INVALID_ARGUMENT when they
// differ. kHost without a question to CUDA in a process that does not use it.
MemoryKind collective_memory(const CollArgs &a, int rank);
size_t check_datatype(smd_datatype_t datatype);  // returns its size
void check_op(smd_op_t op);
void check_root(int root, int size);
// count * elem_size * blocks, failing if it overflows.
size_t checked_bytes(size_t count, size_t elem_size, size_t blocks, const char *what);
void check_buffer(const void *buf, size_t bytes, const char *name);
// sendbuf/recvbuf may be equal (in place) or sendbuf may sit at
// recvbuf + inplace_offset; any other overlap is an error.
void check_overlap(const void *send, size_t send_bytes, const void *recv, size_t recv_bytes,
                   size_t inplace_offset);

// struct_size and version of a caller's smd_status_t.
void check_status(const smd_status_t *status);
// The header of a versioned struct the caller filled for smd to write:
// struct_size at least `size`, version in [oldest, latest]; `how` says how
// to fill it (SMD_ERR_INVALID_ARGUMENT otherwise).
void check_versioned(const char *type, size_t struct_size, unsigned version, size_t size,
                     unsigned oldest, unsigned latest, const char *how);

// A v-collective's blocks: `size` counts (required) and displacements
// (NULL: packed in rank order), in elements of elem_size bytes. Fails on
// overflow and on blocks that overlap one another; `buffer` names the
// buffer that holds them in messages; `counts_name` the counts array.
// With `may_overlap` (blocks that are only read) overlaps are allowed.
std::shared_ptr<const BlockLayout> check_blocks(const size_t *counts, const size_t *displs,
                                                int size, size_t elem_size, const char *buffer,
                                                const char *counts_name = "counts",
                                                bool may_overlap = false);

}  // namespace smd
