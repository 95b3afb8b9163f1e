// How a rank ended, in words and as smdrun's exit code.
#pragma once

#include <string>

namespace smdrun {

// "SIGKILL" for 9; "signal 64" for numbers without a name.
std::string signal_name(int sig);

// A waitpid() status as "exited with status 3" or
// "was killed by signal 9 (SIGKILL)", with " (core dumped)" when it did.
std::string describe_wait_status(int status);

// The shell's convention: the exit status, or 128 + the signal number.
int exit_code_of(int status);

}  // namespace smdrun
