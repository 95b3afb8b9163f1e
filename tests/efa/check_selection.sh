#!/bin/sh
# How the core picks the efa plugin between two fake nodes (smdrun
# --nodes 2), with only the shm, efa and tcp plugins on SMD_PLUGIN_PATH:
#  - auto with SMD_EFA_PROVIDER naming a provider: efa's probe puts it
#    first (90) and it serves between the nodes;
#  - auto with SMD_EFA_PROVIDER=auto and no EFA device: efa's probe says
#    30, behind ucx (50) where ucx is built, and the log says why;
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

run auto 'tcp;ofi_rxm' "$@"
expect_status ok
expect 'transport between nodes: efa (auto.*SMD_EFA_PROVIDER=tcp;ofi_rxm asks for libfabric'

run auto auto "$@"
expect_status ok
expect 'transport between nodes: [a-z]* (auto: first usable by priority of .*efa 30 (no EFA device)'

run auto $bogus "$@"
expect_status ok
expect "auto transport: efa unusable, trying the next: .*failed to initialise: efa: SMD_EFA_PROVIDER=$bogus: no such provider"
expect 'transport between nodes: [a-z]* (auto'

run efa $bogus "$@"
expect_status fail
expect "SMD_ERR_PLUGIN.*transport efa (.*) failed to initialise: efa: SMD_EFA_PROVIDER=$bogus"

[ $failures -eq 0 ] || exit 1
echo "check_selection: auto orders efa and ucx as documented, logs the fallback, and a failing efa is named"
