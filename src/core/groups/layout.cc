#include "core/groups/layout.h"

#include <cstdint>
#include <cstring>

#include "core/util/error.h"

namespace smd {
namespace {

constexpr char kLetters[kAxisCount + 1] = "DPT";

constexpr unsigned bit(Axis a) { return 1u << static_cast<int>(a); }
constexpr unsigned kAllAxes = bit(Axis::kData) | bit(Axis::kPipeline) | bit(Axis::kTensor);

// The axes along which the members of one group of `kind` differ.
unsigned varying_axes(smd_group_kind_t kind) {
  switch (kind) {
    case SMD_GROUP_WORLD: return kAllAxes;
    case SMD_GROUP_TP: return bit(Axis::kTensor);
    case SMD_GROUP_PP: return bit(Axis::kPipeline);
    case SMD_GROUP_DP: return bit(Axis::kData) | bit(Axis::kTensor);
    case SMD_GROUP_RDP: return bit(Axis::kData);
    case SMD_GROUP_MP: return bit(Axis::kPipeline) | bit(Axis::kTensor);
    case SMD_GROUP_SDP: return bit(Axis::kData);  // then cut into chunks of sdp
    default: break;
  }
  fail(SMD_ERR_INVALID_ARGUMENT, "unknown group kind %d", static_cast<int>(kind));
}

[[noreturn]] void bad_placement(const char *placement, const char *why) {
  fail(SMD_ERR_INVALID_ARGUMENT,
       "placement \"%.40s\"%s is invalid: %s; expected \"cluster\", \"spread\" or a permutation of "
       "the upper-case letters D, P, T such as \"DPT\"",
       placement, strlen(placement) > 40 ? "..." : "", why);
}

}  // namespace

std::string canonical_placement(const char *placement) {
  if (!placement || !strcmp(placement, "cluster")) return "DPT";
  if (!strcmp(placement, "spread")) return "TPD";
  size_t n = strlen(placement);
  if (n == 0) bad_placement(placement, "it is empty");
  if (n != kAxisCount) bad_placement(placement, format("it has %zu characters, not 3", n).c_str());
  for (size_t i = 0; i < n; ++i) {
    char c = placement[i];
    if (c == 'd' || c == 'p' || c == 't')
      bad_placement(placement, format("'%c' is lower case", c).c_str());
    if (!strchr(kLetters, c))
      bad_placement(placement, format("'%c' is not one of D, P, T", c).c_str());
    if (memchr(placement, c, i))
      bad_placement(placement, format("the letter %c appears twice", c).c_str());
  }
  return placement;
}

GroupLayout::GroupLayout(int world_size, int tp, int pp, const char *placement, int sdp) {
  if (world_size < 1) fail(SMD_ERR_INVALID_ARGUMENT, "world size %d is not positive", world_size);
  if (tp < 1) fail(SMD_ERR_INVALID_ARGUMENT, "tensor-parallel degree tp=%d is not at least 1", tp);
  if (pp < 1)
    fail(SMD_ERR_INVALID_ARGUMENT, "pipeline-parallel degree pp=%d is not at least 1", pp);
  int64_t model = int64_t{tp} * pp;
  if (model > world_size || world_size % model != 0)
    fail(SMD_ERR_INVALID_ARGUMENT, "tp*pp = %lld (tp=%d, pp=%d) does not divide the world size %d",
         static_cast<long long>(model), tp, pp, world_size);
  int rdp = static_cast<int>(world_size / model);
  if (sdp < 1 || rdp % sdp != 0)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "sharded data-parallel degree sdp=%d does not divide rdp = world size / (tp*pp) = %d", sdp,
         rdp);
  sdp_ = sdp;
  letters_ = canonical_placement(placement);
  world_ = world_size;
  degree_[static_cast<int>(Axis::kData)] = static_cast<int>(world_size / model);
  degree_[static_cast<int>(Axis::kPipeline)] = pp;
  degree_[static_cast<int>(Axis::kTensor)] = tp;
  int stride = 1;
  for (int i = kAxisCount - 1; i >= 0; --i) {
    auto a = static_cast<Axis>(strchr(kLetters, letters_[i]) - kLetters);
    order_[i] = a;
    stride_[static_cast<int>(a)] = stride;
    stride *= degree(a);
  }
}

Coords GroupLayout::coords(int rank) const {
  Coords c{};
  for (int a = 0; a < kAxisCount; ++a) c[a] = rank / stride_[a] % degree_[a];
  return c;
}

int GroupLayout::rank_at(const Coords &c) const {
  int r = 0;
  for (int a = 0; a < kAxisCount; ++a) r += c[a] * stride_[a];
  return r;
}

int GroupLayout::mixed_radix(const Coords &c, unsigned axes) const {
  int v = 0;
  for (Axis a : order_)
    if (axes & bit(a)) v = v * degree(a) + c[static_cast<int>(a)];
  return v;
}

int GroupLayout::product(unsigned axes) const {
  int p = 1;
  for (Axis a : order_)
    if (axes & bit(a)) p *= degree(a);
  return p;
}

int GroupLayout::group_count(smd_group_kind_t kind) const {
  int chunks = kind == SMD_GROUP_SDP ? degree(Axis::kData) / sdp_ : 1;
  return product(kAllAxes & ~varying_axes(kind)) * chunks;
}

int GroupLayout::group_size(smd_group_kind_t kind) const {
  return kind == SMD_GROUP_SDP ? sdp_ : product(varying_axes(kind));
}

// Members of a group differ only in its varying coordinates, and ranks
// order like the coordinates read in placement order: the position among
// the members is the varying coordinates as a mixed-radix number, and the
// group's order among groups is that of the fixed ones.
int GroupLayout::group_index(int rank, smd_group_kind_t kind) const {
  if (kind == SMD_GROUP_SDP) {
    // A chunk's lowest member is the rank with the chunk's first rdp_rank
    // (rdp_rank % sdp == 0): count those below it.
    int d = static_cast<int>(Axis::kData);
    Coords first = coords(rank);
    first[d] -= first[d] % sdp_;
    int lowest = rank_at(first), index = 0;
    for (int r = 0; r < lowest; ++r)
      if (coords(r)[d] % sdp_ == 0) ++index;
    return index;
  }
  return mixed_radix(coords(rank), kAllAxes & ~varying_axes(kind));
}

int GroupLayout::group_rank(int rank, smd_group_kind_t kind) const {
  if (kind == SMD_GROUP_SDP) return coords(rank)[static_cast<int>(Axis::kData)] % sdp_;
  return mixed_radix(coords(rank), varying_axes(kind));
}

std::vector<int> GroupLayout::members(int rank, smd_group_kind_t kind) const {
  unsigned varying = varying_axes(kind);
  Coords c = coords(rank);
  if (kind == SMD_GROUP_SDP) {
    int d = static_cast<int>(Axis::kData);
    std::vector<int> out(static_cast<size_t>(sdp_));
    int first = c[d] - c[d] % sdp_;
    for (int i = 0; i < sdp_; ++i) {
      c[d] = first + i;
      out[static_cast<size_t>(i)] = rank_at(c);
    }
    return out;
  }
  std::vector<int> out(static_cast<size_t>(product(varying)));
  for (size_t i = 0; i < out.size(); ++i) {
    int rest = static_cast<int>(i);
    for (int k = kAxisCount - 1; k >= 0; --k) {
      int a = static_cast<int>(order_[k]);
      if (!(varying & (1u << a))) continue;
      c[a] = rest % degree_[a];
      rest /= degree_[a];
    }
    out[i] = rank_at(c);
  }
  return out;
}

void check_group_kind(smd_group_kind_t kind) { varying_axes(kind); }

const char *group_kind_name(smd_group_kind_t kind) {
  static const char *const names[SMD_GROUP_KIND_COUNT] = {"world", "tp", "pp", "dp",
                                                          "rdp",   "mp", "sdp"};
  check_group_kind(kind);
  return names[kind];
}

}  // namespace smd
