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
"$py" - "$out/runs" "$nodes" "$per" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rate, coll, mode, js = line.split(' ', 3)
    d = json.loads(js)
    runs.setdefault((float(rate), coll), {}).setdefault(d['bytes'], {}).setdefault(mode, []).append(d)
worst = 0
for (rate, coll), sizes in sorted(runs.items()):
    print(f'\n{coll}, {sys.argv[2]} nodes x {sys.argv[3]} ranks, {rate:g} Gbit/s (median us)\n')
    print('| bytes | auto | us | its algorithm forced, us | best forced | us | auto/forced | choice/best |')
    print('|---|---|---|---|---|---|---|---|')
    for size in sorted(sizes):
        m = sizes[size]
        med = {k: statistics.median(r['time_us'] for r in v) for k, v in m.items()}
        forced = {k: t for k, t in med.items() if k != 'auto'}
        if 'auto' not in med or not forced:
            print(f'| {size} | (runs missing: see the failed runs below) |')
            continue
        best = min(forced, key=forced.get)
        ratio = med['auto'] / forced[best]
        worst = max(worst, ratio)
        flag = ' **over 15%**' if ratio > 1.15 else ''
        # The same algorithm run automatically and forced differs only by
        # noise: the choice's own cost is its forced time over the best.
        chosen = m['auto'][0]['algo']
        mine = forced.get(chosen)
        own = f'{mine:.1f}' if mine else '-'
        choice = f'{mine / forced[best]:.2f}' if mine else '-'
        print(f"| {size} | {chosen} | {med['auto']:.1f} | {own} | {best} | {forced[best]:.1f} | "
              f'{ratio:.2f}{flag} | {choice} |')
print(f'\nworst auto/forced: {worst:.2f}')
PY
if [[ -s $out/failed ]]; then
  echo
  echo "FAILED RUNS:"
  cat "$out/failed"
  exit 1
fi
