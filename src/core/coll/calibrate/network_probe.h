// The link between nodes, measured when a world that spans nodes forms, so
// that every choice across nodes (flat or hierarchical, ring or recursive
// doubling on the rails) prices the network at hand instead of built-in
// constants. One leader per node (its first member) exchanges with the
// next node's leader around a ring, all at once: small messages for the
// latency, larger ones for the bandwidth. The leaders' results are
// averaged at the first leader and handed to every member, so all ranks of
// the world hold the same values (Context::network_link), which every
// communicator's cost model then uses (SMD_CALIBRATE=off: the defaults;
// SMD_TUNING_FILE's net_ keys win over them).
#pragma once

namespace smd {

class Comm;

// Collective over `world`'s members, point-to-point only (it runs before
// the world's first collective); nothing on a world on one node.
void measure_network(Comm &world);

}  // namespace smd
