#!/bin/sh
# How the core picks the ucx plugin between two fake nodes (smdrun
# --nodes 2), with only the shm and ucx plugins on SMD_PLUGIN_PATH:
#  - auto: efa (absent, or without an EFA device) is passed over with a
#    logged reason, and ucx serves between the nodes, as init says at
#    SMD_DEBUG=info;
#  - SMD_TRANSPORT=ucx: ucx, as init says;
#  - auto, UCX_TLS naming nothing UCX has: the fallback past ucx is logged
#    with UCX's reason and the tcp plugin serves;
#  - SMD_TRANSPORT=ucx with that UCX_TLS: the same error, no fallback.
# Usage: check_selection.sh SMDRUN PROGRAM [ARGS...]
set -u
. "$(dirname "$0")/../selection_lib.sh"
smdrun=$1
shift
bogus=no_such_transport

# run TRANSPORT UCX_TLS PROGRAM [ARGS...]: sets $out and $status.
run() {
  transport=$1
  tls=$2
  shift 2
  out=$(SMD_DEBUG=info SMD_TRANSPORT=$transport UCX_TLS=$tls \
        "$smdrun" -n 2 --nodes 2 --timeout 120 "$@" 2>&1)
  status=$?
  what="SMD_TRANSPORT=$transport UCX_TLS=$tls"
}

run auto tcp "$@"
expect_status ok
# efa: not built, or no EFA device (SMD_EFA_PROVIDER=efa)
expect "auto transport: efa unusable, trying the next: "
expect 'transport between nodes: ucx (auto'

run ucx tcp "$@"
expect_status ok
expect 'transport: ucx (SMD_TRANSPORT)'

# A ucx that fails init: auto logs it and falls back to the tcp plugin
# (always built), which carries the run.
run auto $bogus "$@"
expect_status ok
expect "auto transport: ucx unusable, trying the next: .*failed to initialise: ucx: .*UCX_TLS=$bogus"
expect 'transport between nodes: tcp (auto'

run ucx $bogus "$@"
expect_status fail
expect "SMD_ERR_PLUGIN.*transport ucx (.*) failed to initialise: ucx: .*UCX_TLS=$bogus"

[ $failures -eq 0 ] || exit 1
echo "check_selection: auto picks ucx between nodes, logs the fallback, and a failing ucx is named (and skipped under auto)"
