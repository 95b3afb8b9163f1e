// The alpha-beta model that auto-selection compares algorithms with: a
// message of b bytes over a link costs alpha + b * beta. Link classes:
// the node's shared-memory arena, point-to-point between ranks of one
// node, reads of a peer's memory by cross-memory attach, and the network
// between nodes. The parameters are not fitted constants: on a node, the
// calibration at communicator creation (calibration.h) measures the
// intra-node ones, and SMD_TUNING_FILE (written by `smd-bench --tune`)
// overrides any key it names. The defaults are deliberately round numbers
// that only need to rank algorithms sensibly.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/coll/collective.h"

namespace smd {

class Comm;
struct Calibration;

struct LinkCost {
  double alpha_us = 0;  // per message
  double gbps = 1;      // payload bandwidth, GB/s (1e9 bytes per second)
  double time_us(double bytes) const { return alpha_us + bytes / (gbps * 1e3); }
};

struct CostModel {
  LinkCost arena{0.5, 10.0};  // one arena step (every member reads its peers)
  LinkCost local{5.0, 2.0};   // point-to-point inside a node (two copies)
  LinkCost net{20.0, 1.25};   // point-to-point between nodes
  // One cross-memory read of a peer's buffer (the cma algorithms): a
  // system call that pins the peer's pages, then one copy, while the peer
  // waits for its readers. Whether that beats staging through the arena
  // depends on the machine (docs/PERFORMANCE.md): the default ties with
  // the arena's per-byte cost at two ranks and loses at more, so only
  // measured parameters (cma_alpha_us, cma_gbps) make auto pick cma.
  LinkCost cma{5.0, 2.5};
  // Output of a two-input reduction of point-to-point algorithms, GB/s
  // (arena algorithms count their reductions in the bytes they touch).
  double reduce_gbps = 3.0;
  std::string source = "defaults";
  std::vector<std::string> keys_from_file;  // set by SMD_TUNING_FILE
  std::vector<std::string> keys_measured;   // set from a calibration

  // Defaults, then the measured values of `calibration` (when given), then
  // SMD_TUNING_FILE if set. Throws SMD_ERR_INVALID_ARGUMENT on a file that
  // cannot be read or parsed (naming the line).
  // `network`, when given, replaces `net` the same way (measured between
  // nodes at the world's formation).
  static CostModel load(const Calibration *calibration = nullptr,
                        const LinkCost *network = nullptr);
  // The text of the tuning file at `path` when it is a regular file of at
  // most 64 KiB (a FIFO or /dev/zero is refused at once); nullopt with
  // *why set otherwise.
  static std::optional<std::string> read_tuning_file(const std::string &path, std::string *why);
  // "arena_alpha_us = 0.5" lines, '#' comments; unknown keys are errors.
  // Keys not in the text keep their value in `base`.
  static CostModel parse(const std::string &text, const std::string &source);
  static CostModel parse(const std::string &text, const std::string &source, const CostModel &base);
  std::string to_text() const;
  // Every parameter as the tuning file names it, with its value.
  std::vector<std::pair<std::string, double>> entries() const;
};

// Facts about a communicator that costs depend on.
struct CommShape {
  int size = 1;
  int nodes = 1;
  int max_local = 1;       // most members on one node
  int min_local = 1;       // fewest members on one node
  bool node_major = true;  // each node's members are consecutive ranks
  bool arena = false;      // all members on one node with a shared-memory arena
  bool cma = false;        // and every member can read every other's memory (cross_memory.h)
};
CommShape shape_of(Comm &c);

}  // namespace smd
