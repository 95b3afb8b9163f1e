// smdrun: launches N local ranks of a program, like torchrun --standalone.
#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/build_text.h"
#include "fd_io.h"
#include "free_port.h"
#include "job.h"
#include "job_token.h"
#include "options.h"
#include "signal_watch.h"
#include "spawn.h"

using namespace smdrun;

int main(int argc, char **argv) {
  ensure_standard_fds();
  ParseResult parsed = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.status == ParseStatus::kHelp) {
    std::fputs(help_text(), stdout);
    return 0;
  }
  if (parsed.status == ParseStatus::kVersion) {
    std::fputs(("smdrun (smd)\n" + smdtools::build_text()).c_str(), stdout);
    return 0;
  }
  if (parsed.status == ParseStatus::kUsageError) {
    std::fprintf(stderr, "smdrun: %s\n%sRun 'smdrun --help' for all options.\n",
                 parsed.error.c_str(), usage_synopsis());
    return 2;
  }
  const Options &options = parsed.options;
  try {
    JobSpec spec;
    spec.world_size = options.nranks;
    spec.nodes = options.nodes;
    spec.master_addr = options.master_addr;
    spec.master_port =
        options.master_port ? *options.master_port : pick_free_port(options.master_addr);
    for (int tries = 0; tries < 100 && (!spec.torch_port || spec.torch_port == spec.master_port);
         ++tries)
      spec.torch_port = pick_free_port(options.master_addr);
    spec.token = job_token();

    SignalWatch signals;
    Job job(options, std::move(spec), signals);
    job.launch();
    return job.supervise();
  } catch (const SpawnError &e) {
    std::fprintf(stderr, "smdrun: %s\n", e.what());
    if (!e.exec_failed) return 1;
    return e.err == ENOENT ? 127 : 126;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "smdrun: %s\n", e.what());
    return 1;
  }
}
