// The file primitives (util/safe_file.h, util/private_dir.h) in a
// world-writable sticky directory where a link was planted first: the
// link's target is never written, and what is refused says why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "core/util/private_dir.h"
#include "core/util/safe_file.h"
#include "shared_dir.h"

namespace {

using testfiles::is_plain_file;
using testfiles::read_text;
using testfiles::SharedDir;
using testfiles::write_text;

TEST(SafeFile, ANewFileReplacesAPlantedLinkAndLeavesItsTargetAlone) {
  SharedDir dir;
  std::string victim = dir / "victim", path = dir / "out.json";
  write_text(victim, "precious");
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  std::string why;
  int fd = smd::replace_with_new_file(path, 0644, &why);
  ASSERT_GE(fd, 0) << why;
  ASSERT_EQ(write(fd, "new", 3), 3);
  close(fd);
  EXPECT_EQ(read_text(victim), "precious");
  EXPECT_TRUE(is_plain_file(path));
  EXPECT_EQ(read_text(path), "new");
}

TEST(SafeFile, CreateNewFileRefusesALinkOrAnExistingFile) {
  SharedDir dir;
  std::string victim = dir / "victim", link = dir / "link";
  write_text(victim, "precious");
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  EXPECT_EQ(smd::create_new_file(link.c_str(), 0600), -1);
  EXPECT_EQ(smd::create_new_file(victim.c_str(), 0600), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(read_text(victim), "precious");
}

TEST(SafeFile, TemporaryNamesAreNotTheSameTwice) {
  std::string a = smd::unguessable_temp_name("/x/f"), b = smd::unguessable_temp_name("/x/f");
  EXPECT_EQ(a.rfind("/x/f.tmp-", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("/x/f.tmp-").size() + 16);
  EXPECT_NE(a, b);
}

TEST(SafeFile, AppendRefusesLinksHardLinksAndOtherFiles) {
  SharedDir dir;
  std::string victim = dir / "victim", link = dir / "log", hard = dir / "hard", fifo = dir / "fifo";
  write_text(victim, "precious");
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_EQ(::link(victim.c_str(), hard.c_str()), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string why;
  EXPECT_EQ(smd::open_own_file_to_append(link, &why), -1);
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_EQ(smd::open_own_file_to_append(hard, &why), -1);
  EXPECT_NE(why.find("hard links"), std::string::npos) << why;
  EXPECT_EQ(smd::open_own_file_to_append(fifo, &why), -1);  // at once, not waiting for a reader
  EXPECT_EQ(read_text(victim), "precious");
  // A file of another user (root can make one to test with).
  if (geteuid() == 0) {
    std::string theirs = dir / "theirs";
    write_text(theirs, "theirs");
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_EQ(smd::open_own_file_to_append(theirs, &why), -1);
    EXPECT_NE(why.find("belongs to uid 65534"), std::string::npos) << why;
  }
  std::string mine = dir / "mine";
  int fd = smd::open_own_file_to_append(mine, &why);
  ASSERT_GE(fd, 0) << why;
  ASSERT_EQ(write(fd, "a", 1), 1);
  close(fd);
  fd = smd::open_own_file_to_append(mine, &why);
  ASSERT_GE(fd, 0) << why;
  ASSERT_EQ(write(fd, "b", 1), 1);
  close(fd);
  EXPECT_EQ(read_text(mine), "ab");
}

TEST(SafeFile, BoundedReadRefusesFifosDevicesAndLargeFilesAtOnce) {
  SharedDir dir;
  std::string fifo = dir / "fifo", big = dir / "big", small = dir / "small";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  write_text(big, std::string(2000, 'x'));
  write_text(small, "k = 1\n");
  smd::FileRules rules;
  rules.max_bytes = 1000;
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(smd::read_bounded_file(fifo, rules, &why));  // no writer: would block forever
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
  EXPECT_FALSE(smd::read_bounded_file("/dev/zero", rules, &why));  // endless
  EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(smd::read_bounded_file(big, rules, &why));
  EXPECT_NE(why.find("more than the 1000 allowed"), std::string::npos) << why;
  EXPECT_FALSE(smd::read_bounded_file(dir / "absent", rules, &why));
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
  auto text = smd::read_bounded_file(small, rules, &why);
  ASSERT_TRUE(text) << why;
  EXPECT_EQ(*text, "k = 1\n");
}

TEST(SafeFile, BoundedReadOfOwnFilesRefusesLinksAndWritableFiles) {
  SharedDir dir;
  std::string mine = dir / "mine", link = dir / "link", open_to_all = dir / "open";
  write_text(mine, "v");
  ASSERT_EQ(chmod(mine.c_str(), 0600), 0);
  ASSERT_EQ(symlink(mine.c_str(), link.c_str()), 0);
  write_text(open_to_all, "v");
  ASSERT_EQ(chmod(open_to_all.c_str(), 0666), 0);
  smd::FileRules own;
  own.follow_links = false;
  own.own_only = true;
  std::string why;
  EXPECT_FALSE(smd::read_bounded_file(link, own, &why));
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_FALSE(smd::read_bounded_file(open_to_all, own, &why));
  EXPECT_NE(why.find("other users may write"), std::string::npos) << why;
  EXPECT_TRUE(smd::read_bounded_file(mine, own, &why)) << why;
  EXPECT_TRUE(smd::read_bounded_file(link, smd::FileRules{}, &why))
      << why;  // links followed by default
}

TEST(PrivateDir, MadeWithParentsMode0700AndCheckedForOwnerAndMode) {
  SharedDir dir;
  std::string nested = dir / "a/b/c";
  EXPECT_EQ(smd::make_private_dirs(nested), "");
  struct stat st {};
  ASSERT_EQ(stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(smd::private_dir_problem(nested), "");
  EXPECT_EQ(smd::make_private_dirs(nested), "");  // already there
  std::string problem = smd::private_dir_problem(dir.path());
  EXPECT_NE(problem.find("has mode 777: other users may enter it"), std::string::npos) << problem;
  std::string link = dir / "link";
  ASSERT_EQ(symlink(nested.c_str(), link.c_str()), 0);
  problem = smd::private_dir_problem(link);
  EXPECT_NE(problem.find("not a directory"), std::string::npos) << problem;
  std::string file = dir / "file";
  write_text(file, "");
  problem = smd::make_private_dirs(file + "/below");
  EXPECT_NE(problem.find("cannot create"), std::string::npos) << problem;
}

}  // namespace
