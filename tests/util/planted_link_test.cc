// The files smd writes at names others can predict (flight recorder dumps,
// SMD_TRACE files, SMD_DEBUG_FILE) in a world-writable sticky directory
// where a link to a victim file was planted first: the victim is left as
// it was, and what cannot be written is said.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/observe/flight_recorder.h"
#include "core/observe/tracer.h"
#include "core/util/log.h"
#include "shared_dir.h"

namespace {

using testfiles::is_plain_file;
using testfiles::read_text;
using testfiles::SharedDir;
using testfiles::write_text;

smd::FlightIdentity rank3() {
  smd::FlightIdentity who;
  who.world_rank = 3;
  who.world_size = 4;
  who.comm_id = 7;
  return who;
}

TEST(PlantedLink, FlightDumpReplacesTheLinkNotItsTarget) {
  SharedDir dir;
  std::string victim = dir / "victim", path = dir / "smd-flight.rank3.comm7-0.json";
  write_text(victim, "precious");
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  smd::FlightRecorder rec(16, dir.path(), rank3());
  ASSERT_EQ(std::string(rec.dump_path()), path);
  rec.end(rec.begin(smd::FlightCall{"allreduce", 0, 0, 8, 0}, "ring"), 0);
  EXPECT_EQ(rec.dump("test"), 0);
  EXPECT_EQ(read_text(victim), "precious");
  ASSERT_TRUE(is_plain_file(path));
  EXPECT_NE(read_text(path).find("\"allreduce\""), std::string::npos);
  // Dumped again: replaced again, no temporary file left behind.
  EXPECT_EQ(rec.dump("again"), 0);
  EXPECT_NE(read_text(path).find("again"), std::string::npos);
  EXPECT_EQ(system(("test $(ls '" + dir.path() + "' | wc -l) = 2").c_str()), 0);
}

TEST(PlantedLink, AFlightDumpThatCannotBeWrittenIsWarnedAbout) {
  SharedDir dir;
  std::string path = dir / "smd-flight.rank3.comm7-0.json";
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);  // in the way of the rename
  smd::FlightRecorder rec(16, dir.path(), rank3());
  testing::internal::CaptureStderr();
  rec.dump_or_warn("test");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot write the flight recorder dump " + path), std::string::npos) << err;
  EXPECT_EQ(system(("test $(ls '" + dir.path() + "' | wc -l) = 1").c_str()), 0);
}

TEST(PlantedLink, TraceFileReplacesTheLinkNotItsTarget) {
  SharedDir dir;
  std::string victim = dir / "victim", path = dir / "trace.rank0.json";
  write_text(victim, "precious");
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  setenv("SMD_TRACE", (dir / "trace.json").c_str(), 1);
  uint32_t world = 0;
  auto tracer = smd::Tracer::for_world(0, &world);
  unsetenv("SMD_TRACE");
  ASSERT_TRUE(tracer);
  tracer->close();
  tracer.reset();
  EXPECT_EQ(read_text(victim), "precious");
  ASSERT_TRUE(is_plain_file(path));
  EXPECT_EQ(read_text(path).rfind("{\"displayTimeUnit\"", 0), 0u);
}

TEST(PlantedLink, DebugFileRefusesTheLinkAndLogsToStderr) {
  SharedDir dir;
  std::string victim = dir / "victim", path = dir / "smd.log";
  write_text(victim, "precious");
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  setenv("SMD_DEBUG_FILE", path.c_str(), 1);
  testing::internal::CaptureStderr();
  smd::log_reload();
  SMD_WARN("test", "a warning for the log");
  std::string err = testing::internal::GetCapturedStderr();
  unsetenv("SMD_DEBUG_FILE");
  smd::log_reload();
  EXPECT_EQ(read_text(victim), "precious");
  EXPECT_NE(err.find("SMD_DEBUG_FILE: " + path + " is a symbolic link"), std::string::npos) << err;
  EXPECT_NE(err.find("a warning for the log"), std::string::npos) << err;
}

TEST(PlantedLink, DebugFileOfThisUserIsAppendedTo) {
  SharedDir dir;
  std::string path = dir / "smd.log";
  write_text(path, "before\n");
  ASSERT_EQ(chmod(path.c_str(), 0664), 0);  // made under umask 002: still this user's
  setenv("SMD_DEBUG_FILE", path.c_str(), 1);
  smd::log_reload();
  SMD_WARN("test", "appended");
  unsetenv("SMD_DEBUG_FILE");
  smd::log_reload();
  std::string text = read_text(path);
  EXPECT_EQ(text.rfind("before\n", 0), 0u) << text;
  EXPECT_NE(text.find("appended"), std::string::npos) << text;
}

// SMD_DUMP_DIR is read once per process: each case runs in a child.
TEST(DumpDir, AMissingDumpDirIsCreatedPrivate) {
  SharedDir dir;
  std::string wanted = dir / "dumps/job1";
  EXPECT_EXIT(
      {
        setenv("SMD_DUMP_DIR", wanted.c_str(), 1);
        struct stat st {};
        bool ok = smd::flight_dump_dir() == wanted && stat(wanted.c_str(), &st) == 0 &&
                  S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700;
        _exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(DumpDir, ADumpDirThatIsAFileIsWarnedAboutOnce) {
  SharedDir dir;
  std::string file = dir / "file";
  write_text(file, "");
  EXPECT_EXIT(
      {
        setenv("SMD_DUMP_DIR", file.c_str(), 1);
        bool off = smd::flight_dump_dir().empty() && smd::flight_dump_dir().empty();
        _exit(off ? 0 : 1);
      },
      testing::ExitedWithCode(0),
      "SMD_DUMP_DIR: .*/file is not a directory; no flight recorder dumps");
}

}  // namespace
