// Device memory point to point on the NULL stream: host-synchronous, as a
// collective's on the NULL stream, and matched by the host rules (an
// isend and a recv of one thread do not wait for each other). The payload
// goes through a host copy the request owns; a receive lands in device
// memory once it has finished. Stream-ordered calls go through the stream
// proxy instead (core/coll/stream_p2p.h).
#pragma once

#include <cstddef>

struct smd_request;

namespace smd {

// The host copy of a send's device payload, taken now (after the legacy
// default stream's earlier work), owned by `r`.
void *stage_p2p_send(smd_request &r, const void *device_buf, size_t bytes);
// The host buffer a receive into `device_buf` lands in first, owned by `r`.
void *stage_p2p_recv(smd_request &r, void *device_buf, size_t bytes);
// Once a staged receive has finished: its bytes copied to the device.
void land_p2p_recv(smd_request &r, size_t bytes);

}  // namespace smd
