// The node calibration's parts that need no peer: the leader's copy
// measurements (sane, not fast: no assertion depends on this machine's
// speed), the per-boot cache file, SMD_CALIBRATE, and how the values and
// SMD_TUNING_FILE make the cost model. The exchange between ranks is
// tested with real processes (tests/coll/calibration_check.sh).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/coll/calibration.h"
#include "core/coll/cost_model.h"
#include "core/util/error.h"

namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/smd-calib-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

void write_text(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

smd::Calibration sample() {
  smd::Calibration c;
  c.copy_cache_gbps = 20.5;
  c.copy_memory_gbps = 9.25;
  c.line_rtt_us = 0.125;
  c.cma_alpha_us = 1.5;
  c.cma_gbps = 6;
  c.stream_min_bytes = 8388608;
  c.stage_stream_min_bytes = 5793;
  c.stage_stream_max_bytes = -1;  // "no upper end": the one negative value read back
  c.origin = "measured now";
  return c;
}

TEST(Calibration, MeasuredCopiesAreSane) {
  smd::Calibration c;
  smd::measure_copies(c);
  EXPECT_TRUE(c.measured());
  // Broad limits: any CPU copies between 50 MB/s and 2 TB/s.
  EXPECT_GT(c.copy_cache_gbps, 0.05);
  EXPECT_LT(c.copy_cache_gbps, 2000);
  EXPECT_GT(c.copy_memory_gbps, 0.05);
  EXPECT_LT(c.copy_memory_gbps, 2000);
  // In cache is not slower than from memory (a best-of-several each; the
  // slack allows for a preempted measurement on a loaded machine).
  EXPECT_GE(c.copy_cache_gbps, 0.75 * c.copy_memory_gbps);
  // One of the measured sizes, or the "never" answer beyond them.
  EXPECT_GE(c.stream_min_bytes, 512 * 1024);
  EXPECT_LE(c.stream_min_bytes, 32 * 1024 * 1024);
}

TEST(Calibration, CacheFileIsWrittenPrivateAndReadBack) {
  TempDir dir;
  std::string path = dir.path() + "/cal.txt";
  smd::write_calibration(path, "boot=a cpu=b smd=0.1.0", sample());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto back = smd::read_calibration(path, "boot=a cpu=b smd=0.1.0");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->origin, "cached file");
  auto want = sample().entries(), got = back->entries();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(got[i].second, want[i].second) << want[i].first;
  // Rewritten in place (rename over the old file).
  smd::Calibration other = sample();
  other.copy_memory_gbps = 3;
  smd::write_calibration(path, "boot=a cpu=b smd=0.1.0", other);
  EXPECT_DOUBLE_EQ(smd::read_calibration(path, "boot=a cpu=b smd=0.1.0")->copy_memory_gbps, 3);
}

TEST(Calibration, AnotherBootOrCorruptFileIsIgnored) {
  TempDir dir;
  std::string path = dir.path() + "/cal.txt";
  EXPECT_FALSE(smd::read_calibration(path, "k"));  // absent
  smd::write_calibration(path, "boot=a cpu=b smd=0.1.0", sample());
  EXPECT_FALSE(smd::read_calibration(path, "boot=other cpu=b smd=0.1.0"));
  std::string good;
  {
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    good = ss.str();
  }
  const std::string bad[] = {
      "",                                                   // empty
      "garbage\n",                                          // no key line
      good.substr(0, good.size() / 2),                      // truncated
      good + "copy_cache_gbps = fast\n",                    // not a number
      good + "colour = 3\n",                                // unknown key
      good.substr(0, good.find("line_rtt_us")) + "line_rtt_us = -2\n",  // negative
  };
  for (const std::string &text : bad) {
    write_text(path, text);
    EXPECT_FALSE(smd::read_calibration(path, "boot=a cpu=b smd=0.1.0")) << text;
  }
}

TEST(Calibration, KeyNamesThisBootAndCpu) {
  std::string key = smd::calibration_key();
  EXPECT_NE(key.find("boot="), std::string::npos);
  EXPECT_NE(key.find("smd="), std::string::npos);
  EXPECT_EQ(key.find('\n'), std::string::npos);
  EXPECT_EQ(key, smd::calibration_key());
}

TEST(Calibration, CachePathFollowsTheRendezvousDir) {
  setenv("SMD_RENDEZVOUS_DIR", "/some/dir", 1);
  EXPECT_EQ(smd::calibration_cache_path().rfind("/some/dir/smd-calibration-", 0), 0u);
  unsetenv("SMD_RENDEZVOUS_DIR");
  EXPECT_EQ(smd::calibration_cache_path().find("/some/dir"), std::string::npos);
}

TEST(Calibration, ModeIsAutoOffOrForce) {
  unsetenv("SMD_CALIBRATE");
  EXPECT_EQ(smd::calibrate_mode(), smd::CalibrateMode::kAuto);
  setenv("SMD_CALIBRATE", "off", 1);
  EXPECT_EQ(smd::calibrate_mode(), smd::CalibrateMode::kOff);
  setenv("SMD_CALIBRATE", "force", 1);
  EXPECT_EQ(smd::calibrate_mode(), smd::CalibrateMode::kForce);
  setenv("SMD_CALIBRATE", "sometimes", 1);
  try {
    smd::calibrate_mode();
    ADD_FAILURE() << "SMD_CALIBRATE=sometimes accepted";
  } catch (const smd::Error &e) {
    EXPECT_EQ(e.code(), SMD_ERR_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("auto, off or force"), std::string::npos) << e.message();
  }
  unsetenv("SMD_CALIBRATE");
}

TEST(Calibration, ValuesFeedTheCostModelAndTheTuningFileWins) {
  smd::CostModel defaults;
  // No values (SMD_CALIBRATE=off, or a communicator without an arena):
  // the documented defaults.
  smd::Calibration none;
  auto d = smd::CostModel::load(&none).entries();
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i].second, defaults.entries()[i].second);

  smd::Calibration c = sample();
  smd::CostModel m = smd::CostModel::load(&c);
  EXPECT_DOUBLE_EQ(m.arena.gbps, c.copy_memory_gbps);
  EXPECT_GT(m.arena.alpha_us, 0);
  // The single-reader cma probe does not set the cma link (calibration.cc).
  EXPECT_DOUBLE_EQ(m.cma.gbps, defaults.cma.gbps);
  EXPECT_DOUBLE_EQ(m.net.gbps, defaults.net.gbps);  // not a node's business
  EXPECT_NE(std::find(m.keys_measured.begin(), m.keys_measured.end(), "arena_gbps"),
            m.keys_measured.end());

  TempDir dir;
  std::string file = dir.path() + "/tuning.txt";
  write_text(file, "arena_gbps = 123\n");
  setenv("SMD_TUNING_FILE", file.c_str(), 1);
  smd::CostModel t = smd::CostModel::load(&c);
  unsetenv("SMD_TUNING_FILE");
  EXPECT_DOUBLE_EQ(t.arena.gbps, 123);           // the file's key wins
  EXPECT_DOUBLE_EQ(t.arena.alpha_us, m.arena.alpha_us);  // the others stay measured
  EXPECT_EQ(t.keys_from_file, std::vector<std::string>{"arena_gbps"});

  // A tuning file's cma keys do set it.
  write_text(file, "cma_gbps = 40\n");
  setenv("SMD_TUNING_FILE", file.c_str(), 1);
  EXPECT_DOUBLE_EQ(smd::CostModel::load(&c).cma.gbps, 40);
  unsetenv("SMD_TUNING_FILE");
}

}  // namespace
