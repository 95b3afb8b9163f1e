// Directories only this user may enter: where smd leaves files others must
// neither read nor replace (the rendezvous note, the calibration cache) and
// where it creates the folders a user names for its dumps.
#pragma once

#include <string>

namespace smd {

// Creates `dir` and any missing parents with mode 0700 (existing ones are
// left as they are). Returns "" on success, else why not ("cannot create
// /a/b: Permission denied").
std::string make_private_dirs(const std::string &dir);

// "" when `dir` is a directory (not a link to one) owned by this user that
// no one else may enter; else what is wrong with it, as a phrase
// ("/tmp/x belongs to uid 1001, not this user (1000)").
std::string private_dir_problem(const std::string &dir);

}  // namespace smd
