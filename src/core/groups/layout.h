// The placement math of model-parallel rank groups (SageMaker model
// parallel's rules): each rank's coordinates (rdp, pp, tp) under a
// placement, and the members of each of its groups. Pure: no communication.
#pragma once

#include <smd.h>

#include <array>
#include <string>
#include <vector>

namespace smd {

// The three axes, numbered as their placement letters D, P, T.
enum class Axis { kData = 0, kPipeline = 1, kTensor = 2 };
constexpr int kAxisCount = 3;
using Coords = std::array<int, kAxisCount>;  // indexed by Axis

// "cluster" -> "DPT", "spread" -> "TPD", a permutation of the upper-case
// letters D, P, T as it is (NULL = "cluster"). Anything else throws
// SMD_ERR_INVALID_ARGUMENT saying what is wrong with it.
std::string canonical_placement(const char *placement);

class GroupLayout {
 public:
  // Throws SMD_ERR_INVALID_ARGUMENT naming the problem: a degree below 1,
  // tp * pp not dividing the world size, sdp not dividing rdp, or a bad
  // placement.
  GroupLayout(int world_size, int tp, int pp, const char *placement, int sdp = 1);

  int world_size() const { return world_; }
  int degree(Axis a) const { return degree_[static_cast<int>(a)]; }
  // Sharded data-parallel degree: SDP groups are chunks of sdp consecutive
  // members of an RDP group (not an axis of its own).
  int sdp() const { return sdp_; }
  // The canonical letters, slowest-varying first ("DPT").
  const std::string &placement() const { return letters_; }

  Coords coords(int rank) const;
  int rank_at(const Coords &c) const;

  // Groups of a kind: how many there are, how many ranks each has.
  int group_count(smd_group_kind_t kind) const;
  int group_size(smd_group_kind_t kind) const;
  // Which group of `kind` holds `rank` (0 .. group_count - 1, in the order
  // of the groups' lowest ranks), and the rank's position in it.
  int group_index(int rank, smd_group_kind_t kind) const;
  int group_rank(int rank, smd_group_kind_t kind) const;
  // The members of the group of `kind` holding `rank`, ascending.
  std::vector<int> members(int rank, smd_group_kind_t kind) const;

 private:
  // `axes` is a bit set of Axis values. mixed_radix: the coordinates on
  // those axes read as one mixed-radix number, the slowest-varying letter
  // most significant; product: the product of their degrees.
  int mixed_radix(const Coords &c, unsigned axes) const;
  int product(unsigned axes) const;

  int world_;
  Coords degree_{};
  Coords stride_{};                       // rank = sum of coords * stride
  std::array<Axis, kAxisCount> order_{};  // slowest to fastest
  std::string letters_;
  int sdp_ = 1;
};

// Throws SMD_ERR_INVALID_ARGUMENT for a value that is not a group kind.
void check_group_kind(smd_group_kind_t kind);
// "tp", "pp", "dp", "rdp", "mp", "sdp", "world".
const char *group_kind_name(smd_group_kind_t kind);

}  // namespace smd
