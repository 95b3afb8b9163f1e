// Files smd writes or reads in directories other users may write (a
// shared /tmp, SMD_DUMP_DIR, SMD_TRACE's folder): never through a link
// planted there, never truncating or appending to a file that is not this
// user's, and never reading without bound (a FIFO, /dev/zero).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

namespace smd {

// "" when `st` (what stat says of `path`) is this user's and its mode has
// none of the `forbidden` bits; else the problem, as a phrase ("/x belongs
// to uid 1001, not this user (1000)", "/x has mode 775: other users may
// write it").
std::string ownership_problem(const std::string &path, const struct stat &st, mode_t forbidden);

// A name beside `path` that no other process can guess in advance
// (path + ".tmp-" + 16 random hex digits), for create_new_file.
std::string unguessable_temp_name(const std::string &path);

// Creates the file `path`, which must not exist yet (O_CREAT | O_EXCL |
// O_NOFOLLOW, so a link there is refused rather than followed), with
// `mode`, open for writing. Returns the descriptor, or -1 with errno set.
// Async-signal-safe.
int create_new_file(const char *path, mode_t mode);

// Renames `tmp` over `path`: a link or a file of this user at `path` is
// replaced, never written through (in a sticky directory another user's
// file stays, and the rename fails with EPERM). Returns 0, or -1 with
// errno set after removing `tmp`. Async-signal-safe.
int move_into_place(const char *tmp, const char *path);

// create_new_file at an unguessable name beside `path`, then
// move_into_place: a fresh file of this user at `path`, open for writing
// (what was there is replaced, never written through). -1 with *why set on
// failure.
int replace_with_new_file(const std::string &path, mode_t mode, std::string *why);

// Opens `path` to append (created with mode 0600 when absent), only if it
// is a regular file of this user with no other names (hard links) and not
// a link itself. -1 with *why set otherwise.
int open_own_file_to_append(const std::string &path, std::string *why);

// What read_bounded_file accepts.
struct FileRules {
  size_t max_bytes = 1 << 20;  // a larger file is refused, not read in part
  bool follow_links = true;    // false: a link at the path is refused
  bool own_only = false;       // true: only a file of this user that
                               // others cannot write
};

// The contents of `path` when it is a regular file within `rules` (checked
// on the open file, so the answer cannot change between check and read);
// nullopt with *why set otherwise (and errno that of open(2) when the file
// could not be opened: ENOENT when it does not exist). Never blocks on a
// FIFO or device.
std::optional<std::string> read_bounded_file(const std::string &path, const FileRules &rules,
                                             std::string *why);

}  // namespace smd
