// The intra-node facts the cost model and the copy heuristics depend on,
// measured on the machine at hand instead of fitted once: copy bandwidth
// in and out of cache, the round trip of a cache line between two ranks,
// cross-memory-attach reads (process_vm_readv) from a peer, and the size
// from which copies with streaming stores beat ordinary ones.
//
// A node measures once: at the creation of a communicator with an arena,
// its rank 0 (the leader) uses what its process already knows, else the
// per-boot cache file, else measures (rank 1 answering the ping-pong; its
// cost: docs/PERFORMANCE.md, "the node calibration"), and hands the values to every member through
// the arena, so all members of a communicator hold identical values (SMD_CALIBRATE).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace smd {

class Comm;
struct CostModel;

struct Calibration {
  double copy_cache_gbps = 0;   // memcpy, source and destination in cache
  double copy_memory_gbps = 0;  // memcpy, both out of cache
  double line_rtt_us = 0;       // a cache line's round trip between two ranks; 0:
                                // not measured (the two never ran at once)
  double cma_alpha_us = 0;      // one small process_vm_readv
  double cma_gbps = 0;          // large process_vm_readv; 0: refused here
  double stream_min_bytes = 0;  // smallest copy that streaming stores win (one
                                // copy alone; see node_calibration.cc)
  // The round sizes whose staging streaming stores win (a rank stages, its
  // peer reads: stage_probe.cc). min 0: not measured (the documented
  // defaults stay); min -1: never; max -1: no upper end.
  double stage_stream_min_bytes = 0;
  double stage_stream_max_bytes = 0;
  // Where the values came from: "measured now", "cached file", "default".
  std::string origin = "default";

  bool measured() const { return copy_memory_gbps > 0; }
  // Name and value of each field, in file order.
  std::vector<std::pair<std::string, double>> entries() const;
  // Sets the field `key`; false for an unknown key.
  bool set(const std::string &key, double value);
  // "" when `value` is plausible for the field `key` on any machine; else
  // why not, naming the key, the value and the range.
  static std::string range_problem(const std::string &key, double value);
};

// SMD_CALIBRATE: kOff leaves the documented defaults, kForce measures even
// when the cache file has values.
enum class CalibrateMode { kAuto, kOff, kForce };
CalibrateMode calibrate_mode();  // throws SMD_ERR_INVALID_ARGUMENT

// This process's own measurements (the leader's part): copies and the
// streaming crossover. Takes tens of milliseconds.
void measure_copies(Calibration &c);

// What identifies a machine's state: values cached under another key
// (another boot, CPU or library version) are not used.
std::string calibration_key();
// The per-boot cache file: SMD_RENDEZVOUS_DIR, else $XDG_RUNTIME_DIR,
// else /tmp; one per user.
std::string calibration_cache_path();
// The values in `path` if it holds a complete set under `key`; nullopt
// (with an info message saying why) otherwise.
std::optional<Calibration> read_calibration(const std::string &path, const std::string &key);
// Written to a private temporary file and renamed over `path` (mode 0600),
// so readers see the old file or the new one. Failures are logged only.
void write_calibration(const std::string &path, const std::string &key, const Calibration &c);

// Collective over comm's members (a communicator with an arena, at its
// creation): the leader's values, the same on every member.
Calibration calibrate_node(Comm &comm);
// After probe_staging (staging_probe.h) completed c on every member: c
// becomes what this process knows and uses, and the leader's cache file.
void remember_calibration(Comm &comm, const Calibration &c);
// The values this process last received (nullopt before any).
std::optional<Calibration> process_calibration();

// The cost model's intra-node link costs from measured values (arena and
// local point-to-point links; the cma link keeps its default, see
// calibration.cc). Unmeasured values leave defaults.
void apply_calibration(const Calibration &c, CostModel &m);

}  // namespace smd
