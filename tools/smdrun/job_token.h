// The secret that lets a job's ranks recognise each other at rendezvous.
#pragma once

#include <string>

namespace smdrun {

// SMD_JOB_TOKEN from smdrun's environment when set (an outer launcher
// chose it), else 128 bits from /dev/urandom as 32 hex digits.
// Throws std::runtime_error when /dev/urandom cannot be read.
std::string job_token();

}  // namespace smdrun
