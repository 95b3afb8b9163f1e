// The private note through which rank 0 hands over the job token it drew:
// only this user may read it or the directory it is in, and a reader that
// finds none says where it looked and what to do.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/bootstrap/rendezvous_file.h"
#include "env_guard.h"
#include "expect_error.h"

namespace smd {
namespace {

using test::EnvGuard;

class RendezvousNotes : public ::testing::Test {
 protected:
  RendezvousNotes() {
    char tmpl[] = "/tmp/smd-notes-test-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~RendezvousNotes() override { std::filesystem::remove_all(root_); }
  unsigned mode(const std::string &path) {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  }
  std::string root_;
  EnvGuard env_;
};

TEST_F(RendezvousNotes, DirectoryIsCreatedPrivate) {
  env_.set("SMD_RENDEZVOUS_DIR", root_ + "/a/b");
  EXPECT_EQ(rendezvous_dir(true), root_ + "/a/b");
  EXPECT_EQ(mode(root_ + "/a/b"), 0700u);
}

TEST_F(RendezvousNotes, DirectoryOthersMayEnterIsRefused) {
  std::string open_dir = root_ + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0755), 0);
  env_.set("SMD_RENDEZVOUS_DIR", open_dir);
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "has mode 755", rendezvous_dir(true));
  env_.set("SMD_RENDEZVOUS_DIR", "relative/dir");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "not an absolute path", rendezvous_dir(true));
}

TEST_F(RendezvousNotes, NoteRoundTripsWithMode0600) {
  std::string path = rendezvous_note_path(root_, "127.0.0.1|29501|2|none", 3);
  EXPECT_NE(path, rendezvous_note_path(root_, "127.0.0.1|29501|2|none", 4)) << "per epoch";
  EXPECT_NE(path, rendezvous_note_path(root_, "127.0.0.1|29502|2|none", 3)) << "per job";
  std::string token = random_token();
  EXPECT_EQ(token.size(), 32u);
  EXPECT_NE(token, random_token());
  write_rendezvous_note(path, {token, "node7", 29501});
  EXPECT_EQ(mode(path), 0600u);
  RendezvousNote note = read_rendezvous_note(path, Deadline::after_ms(60000));
  EXPECT_EQ(note.token, token);
  EXPECT_EQ(note.host, "node7");
  EXPECT_EQ(note.port, 29501);
  remove_rendezvous_note(path);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(RendezvousNotes, NoteOthersCouldReadIsRefused) {
  std::string path = root_ + "/note";
  write_rendezvous_note(path, {"secret", "node7", 29501});
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "not private",
                   read_rendezvous_note(path, Deadline::after_ms(60000)));
}

TEST_F(RendezvousNotes, MissingNoteTimesOutNamingTheFixes) {
  EXPECT_SMD_ERROR(SMD_ERR_TIMEOUT, "SMD_JOB_TOKEN",
                   read_rendezvous_note(root_ + "/absent", Deadline::after_ms(100)));
}

}  // namespace
}  // namespace smd
