#!/bin/sh
# With SMD_TRANSPORT=auto, only shm and ucx built and ranks on two (fake)
# nodes, init must pick ucx between the nodes and say so at SMD_DEBUG=info.
# Usage: check_auto.sh SMDRUN PROGRAM [ARGS...]
set -u
smdrun=$1
shift
out=$(SMD_DEBUG=info SMD_TRANSPORT=auto "$smdrun" -n 2 --nodes 2 --timeout 120 "$@" 2>&1)
status=$?
if [ $status -ne 0 ]; then
  printf '%s\n' "$out"
  echo "check_auto: the run failed (status $status)"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q 'transport between nodes: ucx (auto'; then
  printf '%s\n' "$out"
  echo "check_auto: init did not report ucx as the transport between nodes"
  exit 1
fi
printf '%s\n' "$out" | grep 'transport between nodes'
exit 0
