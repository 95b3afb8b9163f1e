// Every algorithm of every collective (one file per collective holds its
// algorithms). All run on the calling thread, on a communicator of more
// than one rank, with arguments already validated.
#pragma once

#include <string>
#include <vector>

#include "core/coll/coll_util.h"
#include "core/coll/collective.h"
#include "core/coll/select/cost_model.h"

namespace smd {

class Comm;

void allreduce_direct(Comm &c, const CollArgs &a);
void allreduce_ring(Comm &c, const CollArgs &a);
void allreduce_rd(Comm &c, const CollArgs &a);
// herring.cc: the push/pull server schedule between nodes, its row's terms.
void allreduce_herring(Comm &c, const CollArgs &a);
bool herring_applies(const CollArgs &a, const CommShape &s, std::string *why);
double allreduce_herring_cost(int p, double bytes, const LinkCost &l, double reduce_gbps);

void allgather_direct(Comm &c, const CollArgs &a);
void allgather_ring(Comm &c, const CollArgs &a);
void allgather_rd(Comm &c, const CollArgs &a);
void allgather_cma(Comm &c, const CollArgs &a);

void reduce_scatter_direct(Comm &c, const CollArgs &a);
void reduce_scatter_ring(Comm &c, const CollArgs &a);
void reduce_scatter_rd(Comm &c, const CollArgs &a);
void reduce_scatter_cma(Comm &c, const CollArgs &a);

void broadcast_direct(Comm &c, const CollArgs &a);
void broadcast_ring(Comm &c, const CollArgs &a);
void broadcast_tree(Comm &c, const CollArgs &a);
void broadcast_cma(Comm &c, const CollArgs &a);

void reduce_direct(Comm &c, const CollArgs &a);
void reduce_ring(Comm &c, const CollArgs &a);
void reduce_tree(Comm &c, const CollArgs &a);

void alltoall_direct(Comm &c, const CollArgs &a);
void alltoall_pairwise(Comm &c, const CollArgs &a);

void allgatherv_direct(Comm &c, const CollArgs &a);
void allgatherv_ring(Comm &c, const CollArgs &a);
void allgatherv_hierarchical(Comm &c, const CollArgs &a);

void reduce_scatterv_direct(Comm &c, const CollArgs &a);
void reduce_scatterv_ring(Comm &c, const CollArgs &a);
void reduce_scatterv_hierarchical(Comm &c, const CollArgs &a);

void alltoallv_pairwise(Comm &c, const CollArgs &a);

// For the v-collectives' algorithms: the arguments of a phase on a
// sub-communicator (agreed already).
CollArgs blocks_args(const CollArgs &like, CollKind kind, const void *send, void *recv,
                     std::vector<size_t> counts, std::vector<size_t> displs, smd_op_t op);

void barrier_direct(Comm &c, const CollArgs &a);
void barrier_rd(Comm &c, const CollArgs &a);

// Node phases and rail phases (hierarchical.cc), for communicators that
// span nodes.
void allreduce_hierarchical(Comm &c, const CollArgs &a);
void allgather_hierarchical(Comm &c, const CollArgs &a);
void reduce_scatter_hierarchical(Comm &c, const CollArgs &a);
void broadcast_hierarchical(Comm &c, const CollArgs &a);
void reduce_hierarchical(Comm &c, const CollArgs &a);
void barrier_hierarchical(Comm &c, const CollArgs &a);

}  // namespace smd
