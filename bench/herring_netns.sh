#!/usr/bin/env bash
# bench/herring_netns.sh: the hierarchical allreduce with herring between
# nodes (SMD_ALGO=allreduce=herring: its row applies only to the rails)
# against the same with the automatic rail choice, the ring at these sizes
# (SMD_ALGO=allreduce=hierarchical), on two netns nodes of two ranks over a
# tbf-shaped veth (tests/netns/netns_test.sh bench). On two nodes herring's
# push and pull are the ring's two steps: the table shows the two
# implementations of one message pattern; where herring saves steps (more
# nodes) only smd-sim tells (docs/SCALE.md).
#
# usage: sudo bench/herring_netns.sh [--rates "2gbit 500mbit"] [--sizes "1M 4M 16M 64M"]
#                                    [--build DIR]
# Prints one row per rate and size: the median microseconds of each.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build"
RATES="2gbit 500mbit"
SIZES="1M 4M 16M 64M"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rates) RATES=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --build) BUILD=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "herring_netns.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
printf '%-8s %-8s %14s %14s %7s\n' rate bytes herring_us hier_ring_us ratio
for rate in $RATES; do
  for size in $SIZES; do
    declare -A us=()
    for algo in herring hierarchical; do
      out=$(SMD_ALGO="allreduce=$algo" NETNS_BENCH="$BUILD/tools/smd-bench" NETNS_RATE="$rate" \
        NETNS_TBF_BURST=1mb NETNS_BENCH_ARGS="allreduce -b $size -e $size -n 5 -w 1" \
        SMD_PLUGIN_PATH="$BUILD/src/plugins/shm:$BUILD/src/plugins/tcp" \
        LD_LIBRARY_PATH="$BUILD/src" "$ROOT/tests/netns/netns_test.sh" bench) ||
        { echo "$out"; echo "herring_netns.sh: $algo at $size, $rate failed" >&2; exit 1; }
      us[$algo]=$(grep -o '"time_us": [0-9.]*' <<<"$out" | head -1 | sed 's/.*: //')
    done
    awk -v r="$rate" -v s="$size" -v h="${us[herring]}" -v g="${us[hierarchical]}" \
      'BEGIN {printf "%-8s %-8s %14.1f %14.1f %7.2f\n", r, s, h, g, h / g}'
  done
done
