#!/bin/bash
# What the default agreement check (SMD_CHECK=fast) costs: smd-bench
# allreduce with SMD_CHECK=off and fast, alternated, on the point-to-point
# paths (ring forced on one node with 2 and 4 ranks, 2 fake nodes over tcp,
# 2x2 fake nodes shm+tcp), printing the median time of REPS runs per size as
# a markdown table. The arena (direct) path never runs the check.
#   bench/check_cost.sh BUILD_DIR [REPS]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [REPS]}
reps=${2:-5}
export SMD_PLUGIN_PATH="$build/src/plugins/shm:$build/src/plugins/tcp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# name, ranks, nodes, SMD_ALGO, SMD_TRANSPORT (fake nodes on one machine
# would otherwise still talk through shared memory)
configs=("ring-np2-node1 2 1 ring auto" "ring-np4-node1 4 1 ring auto"
         "tcp-np2-nodes2 2 2 auto tcp" "shm+tcp-np4-nodes2 4 2 auto shm+tcp")
for ((rep = 0; rep < reps; ++rep)); do
  for c in "${configs[@]}"; do
    read -r name n nodes algo transport <<<"$c"
    for mode in off fast; do
      SMD_CHECK=$mode SMD_ALGO=$algo SMD_TRANSPORT=$transport "$build/tools/smdrun" -n "$n" --nodes "$nodes" --timeout 300 \
        "$build/tools/smd-bench" allreduce -b 8 -e 1M -f 16 -n 200 -w 20 --json |
        grep -o '{.*}' | sed "s/^/$name $mode /" >>"$out/runs"
    done
  done
done
/usr/bin/python3 - "$out/runs" <<'PY'
import json, statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, mode, js = line.split(' ', 2)
    d = json.loads(js)
    times.setdefault((name, d['bytes']), {}).setdefault(mode, []).append(d['time_us'])
print('| path | bytes | off (us) | fast (us) | fast/off |')
print('|---|---|---|---|---|')
for (name, size), m in times.items():
    off, fast = statistics.median(m['off']), statistics.median(m['fast'])
    print(f'| {name} | {size} | {off:.1f} | {fast:.1f} | {fast / off:.2f} |')
PY
