// The node calibration's parts that need no peer: the leader's copy
// measurements (sane, not fast: no assertion depends on this machine's
// speed), the per-boot cache file, SMD_CALIBRATE, and how the values and
// SMD_TUNING_FILE make the cost model. The exchange between ranks is
// tested with real processes (tests/coll/calibration_check.sh).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/coll/calibrate/calibration.h"
#include "core/coll/select/cost_model.h"
#include "core/coll/agree/settings_agreement.h"
#include "core/util/error.h"
#include "shared_dir.h"

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

void write_text(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

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
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_DOUBLE_EQ(got[i].second, want[i].second) << want[i].first;
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
      "",                                                               // empty
      "garbage\n",                                                      // no key line
      good.substr(0, good.size() / 2),                                  // truncated
      good + "copy_cache_gbps = fast\n",                                // not a number
      good + "colour = 3\n",                                            // unknown key
      good.substr(0, good.find("line_rtt_us")) + "line_rtt_us = -2\n",  // negative
  };
  for (const std::string &text : bad) {
    write_text(path, text);
    EXPECT_FALSE(smd::read_calibration(path, "boot=a cpu=b smd=0.1.0")) << text;
  }
}

// A cache file someone edited (values no measurement gives) or planted
// (a link, another user's file) is ignored with a warning, so the node
// measures again.
TEST(Calibration, CraftedCacheValuesAreIgnoredWithAWarning) {
  TempDir dir;
  std::string path = dir.path() + "/cal.txt";
  const std::string key = "boot=a cpu=b smd=0.1.0";
  smd::write_calibration(path, key, sample());
  std::string good = testfiles::read_text(path);
  auto with = [&](const std::string &name, const std::string &value) {
    size_t at = good.find(name + " = ");
    size_t eol = good.find('\n', at);
    return good.substr(0, at) + name + " = " + value + good.substr(eol);
  };
  const std::pair<std::string, std::string> crafted[] = {
      {"line_rtt_us", "1e308"},        // flips the choice of algorithm
      {"copy_memory_gbps", "1e-310"},  // denormal: infinite predictions
      {"copy_cache_gbps", "nan"},
      {"cma_gbps", "inf"},
      {"stream_min_bytes", "1e30"},          // past any integer it is cast to
      {"stage_stream_min_bytes", "4096.5"},  // not a whole number of bytes
      {"stage_stream_max_bytes", "-7"},
  };
  for (const auto &[name, value] : crafted) {
    testfiles::write_text(path, with(name, value));
    ASSERT_EQ(chmod(path.c_str(), 0600), 0);
    testing::internal::CaptureStderr();
    EXPECT_FALSE(smd::read_calibration(path, key)) << name << " = " << value;
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("ignoring the calibration cache"), std::string::npos) << err;
    EXPECT_NE(err.find(name), std::string::npos) << err;
  }
  testfiles::write_text(path, good);
  EXPECT_TRUE(smd::read_calibration(path, key));  // the untouched file is still read
}

TEST(Calibration, CacheThroughALinkOrOfAnotherUserIsRefused) {
  testfiles::SharedDir dir;
  const std::string key = "boot=a cpu=b smd=0.1.0";
  std::string real = dir / "real.txt", link = dir / "smd-calibration.txt";
  smd::write_calibration(real, key, sample());
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(smd::read_calibration(link, key));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("is a symbolic link"), std::string::npos) << err;
  if (geteuid() == 0) {
    ASSERT_EQ(chown(real.c_str(), 65534, 65534), 0);
    testing::internal::CaptureStderr();
    EXPECT_FALSE(smd::read_calibration(real, key));
    err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("belongs to uid 65534"), std::string::npos) << err;
  }
  // Written again over the link: the link goes, its target stays.
  std::string before = testfiles::read_text(real);
  smd::write_calibration(link, key, sample());
  EXPECT_TRUE(testfiles::is_plain_file(link));
  EXPECT_EQ(testfiles::read_text(real), before);
}

// SMD_TUNING_FILE: a regular file of bounded size with values in range,
// else a clear error at once (a FIFO hung init, /dev/zero read until
// memory ran out).
TEST(Calibration, TuningFileMustBeASmallRegularFileOfPlausibleValues) {
  testfiles::SharedDir dir;
  std::string fifo = dir / "fifo", file = dir / "tuning.txt";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto error_of = [](const std::string &path) -> std::string {
    setenv("SMD_TUNING_FILE", path.c_str(), 1);
    std::string message = "(accepted)";
    try {
      smd::CostModel::load(nullptr);
    } catch (const smd::Error &e) {
      message = e.code() == SMD_ERR_INVALID_ARGUMENT ? e.message() : "wrong code: " + e.message();
    }
    unsetenv("SMD_TUNING_FILE");
    return message;
  };
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(error_of(fifo).find("not a regular file"), std::string::npos) << error_of(fifo);
  EXPECT_NE(error_of("/dev/zero").find("not a regular file"), std::string::npos);
  // The settings every rank compares at init read the file too.
  setenv("SMD_TUNING_FILE", fifo.c_str(), 1);
  for (const auto &setting : smd::shared_settings())
    if (std::string(setting.name) == "SMD_TUNING_FILE")
      EXPECT_EQ(setting.value, "unreadable " + fifo);
  unsetenv("SMD_TUNING_FILE");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  testfiles::write_text(file, std::string(100000, '#'));
  EXPECT_NE(error_of(file).find("more than the 65536 allowed"), std::string::npos)
      << error_of(file);
  for (const char *line : {"arena_alpha_us = 1e300", "arena_gbps = 1e-310", "net_gbps = nan",
                           "local_gbps = 0", "cma_alpha_us = -1"}) {
    testfiles::write_text(file, std::string(line) + "\n");
    EXPECT_NE(error_of(file).find("is not a valid value for"), std::string::npos)
        << line << ": " << error_of(file);
  }
  testfiles::write_text(file, "arena_alpha_us = 0.5\nnet_gbps = 12.5\n");
  EXPECT_EQ(error_of(file), "(accepted)");
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
  EXPECT_DOUBLE_EQ(t.arena.gbps, 123);                   // the file's key wins
  EXPECT_DOUBLE_EQ(t.arena.alpha_us, m.arena.alpha_us);  // the others stay measured
  EXPECT_EQ(t.keys_from_file, std::vector<std::string>{"arena_gbps"});

  // A tuning file's cma keys do set it.
  write_text(file, "cma_gbps = 40\n");
  setenv("SMD_TUNING_FILE", file.c_str(), 1);
  EXPECT_DOUBLE_EQ(smd::CostModel::load(&c).cma.gbps, 40);
  unsetenv("SMD_TUNING_FILE");
}

}  // namespace
