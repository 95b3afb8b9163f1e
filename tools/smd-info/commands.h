// smd-info's commands; each returns the process exit status.
#pragma once

#include "options.h"

namespace smdinfo {

int run_groups_table(const Options &o);  // groups without --nodes
int run_advisor(const Options &o);       // groups with --nodes
int run_topology(const Options &o);
int run_params(const Options &o);
int run_version(const Options &o);
int run_plugins(const Options &o);
int run_doctor(const Options &o);
int run_flight(const Options &o);
int run_trace(const Options &o);

}  // namespace smdinfo
