#!/bin/bash
# bench/auto_vs_forced.sh across network namespaces: whether the automatic
# choice holds when the link between nodes is the bottleneck. NODES "nodes"
# of PER ranks (tests/netns/netns_test.sh bench: shm inside a node, tcp
# between, each node's link shaped by tbf to each RATE in turn); for every
# rate and collective, smd-bench with the automatic choice (the network
# link measured as the world forms prices it) and with each algorithm
# forced (SMD_ALGO; herring too: forced on nodes of several ranks, the
# hierarchy runs it between them), alternated REPS times; the median time per size.
# Prints one markdown table per rate and collective: the algorithm auto
# chose, its time and that algorithm's forced time, the best forced
# algorithm, auto/forced (flagged over 15%) and choice/best (the chosen
# algorithm forced over the best forced: the choice's own cost, without
# the noise between two runs of one algorithm). Needs root.
#   sudo bench/auto_vs_forced_netns.sh BUILD_DIR [REPS] [NODES] [PER] [RATES] [MAX_SIZE]
# e.g. sudo bench/auto_vs_forced_netns.sh build 3 2 2 "0.5 2" 16M
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: $0 BUILD_DIR [REPS] [NODES] [PER] [RATES] [MAX_SIZE]}
build=$(cd "$build" && pwd)
reps=${2:-3}
nodes=${3:-2}
per=${4:-2}
rates=${5:-0.5 2}
max=${6:-16M}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
touch "$out/runs" "$out/failed"
declare -A forced=([allreduce]="ring rd hierarchical herring" [allgather]="ring rd hierarchical"
                   [broadcast]="ring tree hierarchical")
for ((rep = 0; rep < reps; ++rep)); do
  for rate in $rates; do
    # tbf's bucket: 4 ms of the rate (docs/SCALE.md: smaller ones lose
    # tokens to a loaded VM's scheduling gaps).
    burst=$(awk -v r="$rate" 'BEGIN { printf "%db", r * 1e9 / 8 * 0.004 }')
    for coll in allreduce allgather broadcast; do
      for mode in auto ${forced[$coll]}; do
        algo=()
        [[ $mode == auto ]] || algo=(SMD_ALGO="$coll=$mode")
        env "${algo[@]}" NETNS_BENCH="$build/tools/smd-bench" NETNS_RATE="${rate}gbit" \
          NETNS_TBF_BURST="$burst" NETNS_NODES="$nodes" NETNS_RANKS_PER_NODE="$per" \
          NETNS_BENCH_ARGS="$coll -b 64K -e $max -f 4 -n 5 -w 2 -c 0" \
          SMD_PLUGIN_PATH="$build/src/plugins/shm:$build/src/plugins/tcp" \
          LD_LIBRARY_PATH="$build/src" "$root/tests/netns/netns_test.sh" bench >"$out/one" 2>&1
        status=$?
        results=$(grep -o '^{.*}' "$out/one" || true)
        if ((status != 0)) || [[ -z $results ]]; then
          { echo "$rate Gbit/s $coll $mode: exit status $status"; tail -n 5 "$out/one"; } >>"$out/failed"
          continue
        fi
        sed "s/^/$rate $coll $mode /" <<<"$results" >>"$out/runs"
      done
    done
  done
done
py=$(command -v /usr/bin/python3 || command -v python3)
"$py" "$root/bench/auto_vs_forced_report.py" "$out/runs" \
  "{collective}, $nodes nodes x $per ranks, {group} Gbit/s (median us)"
if [[ -s $out/failed ]]; then
  echo
  echo "FAILED RUNS:"
  cat "$out/failed"
  exit 1
fi
