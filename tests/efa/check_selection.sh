#!/bin/sh
# How the core picks the efa plugin between two fake nodes (smdrun
# --nodes 2), with only the shm, efa and tcp plugins on SMD_PLUGIN_PATH:
#  - auto: efa serves between the nodes (over the provider SMD_EFA_PROVIDER
#    picks; no EFA device here, so libfabric's first RDM provider);
#  - auto, SMD_EFA_PROVIDER naming no provider: efa fails init, the core
#    logs the fallback with efa's reason and the next plugin serves
#    (ucx where it is built, which the core finds beside libsmd, else tcp);
#  - SMD_TRANSPORT=efa with that provider: SMD_ERR_PLUGIN naming efa and
#    the reason, no fallback.
# Usage: check_selection.sh SMDRUN PROGRAM [ARGS...]
set -u
. "$(dirname "$0")/../selection_lib.sh"
smdrun=$1
shift
bogus=no_such_provider

# run TRANSPORT PROVIDER PROGRAM [ARGS...]: sets $out and $status.
run() {
  transport=$1
  provider=$2
  shift 2
  out=$(SMD_DEBUG=info SMD_TRANSPORT=$transport SMD_EFA_PROVIDER=$provider \
        "$smdrun" -n 2 --nodes 2 --timeout 120 "$@" 2>&1)
  status=$?
  what="SMD_TRANSPORT=$transport SMD_EFA_PROVIDER=$provider"
}

run auto auto "$@"
expect_status ok
expect 'transport between nodes: efa (auto'
expect 'efa: provider .*SMD_EFA_PROVIDER=auto'

run auto $bogus "$@"
expect_status ok
expect "auto transport: efa unusable, trying the next: .*failed to initialise: efa: SMD_EFA_PROVIDER=$bogus: no such provider"
expect 'transport between nodes: [a-z]* (auto'

run efa $bogus "$@"
expect_status fail
expect "SMD_ERR_PLUGIN.*transport efa (.*) failed to initialise: efa: SMD_EFA_PROVIDER=$bogus"

[ $failures -eq 0 ] || exit 1
echo "check_selection: auto picks efa between nodes, logs the fallback, and a failing efa is named"
