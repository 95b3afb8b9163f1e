// The channel through which rank 0 hands the other ranks a secret job
// token (and, when the launcher does not say where rank 0 runs, the
// store's address) when the launcher provides no secret: a file readable
// only by the job's user, in a directory only that user can enter. An
// outsider on the host (another user) can neither read the token nor
// replace the file. Ranks on other hosts find it when the directory is on
// a filesystem they share (a home directory on most clusters).
#pragma once

#include <optional>
#include <string>

#include "core/util/clock.h"

namespace smd {

struct RendezvousNote {
  std::string token;
  std::string host;  // where the store is served
  int port = 0;
};

// 128 bits from the kernel's random source as 32 hex digits. Throws
// smd::Error SMD_ERR_SYSTEM when none can be read.
std::string random_token();

// The directory for notes: SMD_RENDEZVOUS_DIR when set; else, for a job on
// one host, /tmp/smd-UID, and across hosts $HOME/.smd/rendezvous. Created
// mode 0700 when absent; throws smd::Error SMD_ERR_BOOTSTRAP when it
// exists but another user owns it or others may enter it (someone could
// read or plant notes), or cannot be created.
std::string rendezvous_dir(bool single_host);

// The note's path for one job: the same on every rank of it, different for
// other jobs and for each epoch (store_epoch.h) of one job.
std::string rendezvous_note_path(const std::string &dir, const std::string &job_key,
                                 uint32_t epoch);

// Writes the note with mode 0600 (to a temporary name, then renamed, so
// that readers never see half of it). Throws smd::Error SMD_ERR_BOOTSTRAP.
void write_rendezvous_note(const std::string &path, const RendezvousNote &note);

// Waits until the note exists and is whole, then returns it; throws
// smd::Error SMD_ERR_TIMEOUT at the deadline, naming the path and what to
// check (a shared directory, SMD_JOB_TOKEN), or SMD_ERR_BOOTSTRAP when the
// file is not private to this user.
RendezvousNote read_rendezvous_note(const std::string &path, Deadline deadline);

// Best effort: the note of a world that ended.
void remove_rendezvous_note(const std::string &path);

}  // namespace smd
