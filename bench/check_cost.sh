#!/bin/bash
# What the default agreement check (SMD_CHECK=fast) costs: smd-bench
# allreduce with SMD_CHECK=off and fast, alternated, on the point-to-point
# paths (ring forced on one node with 2 and 4 ranks, 2 fake nodes over tcp,
# 2x2 fake nodes shm+tcp), printing the median time of REPS runs per size as
# a markdown table. The arena (direct) path never runs the check.
#   bench/check_cost.sh BUILD_DIR [REPS] [BASE_BUILD_DIR]
# With BASE_BUILD_DIR (another build, such as the commit before a change to
# the checks), both builds run alternately and the table puts them side by
# side; two more rows then cover what such changes touch beyond the
# point-to-point check: the arena (2 ranks, its descriptors) and a group of
# 64 allreduces of 1 KiB fused into one (smd-bench --tensors 64 --grouped)
# on the arena and over tcp.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [REPS] [BASE_BUILD_DIR]}
reps=${2:-5}
base=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sweep="-b 8 -e 1M -f 16 -n 200 -w 20"
grouped="--tensors 64 --grouped -b 1K -e 1K -n 200 -w 20"
# name, ranks, nodes, SMD_ALGO, SMD_TRANSPORT (fake nodes on one machine
# would otherwise still talk through shared memory), smd-bench arguments
configs=("ring-np2-node1 2 1 ring auto $sweep" "ring-np4-node1 4 1 ring auto $sweep"
         "tcp-np2-nodes2 2 2 auto tcp $sweep" "shm+tcp-np4-nodes2 4 2 auto shm+tcp $sweep")
builds=("this $build")
if [[ -n "$base" ]]; then
  configs+=("arena-np2-node1 2 1 auto auto $sweep" "grouped64x1K-arena-np2 2 1 auto auto $grouped"
            "grouped64x1K-tcp-np2-nodes2 2 2 auto tcp $grouped")
  builds=("base $base" "this $build")
fi
for ((rep = 0; rep < reps; ++rep)); do
  for c in "${configs[@]}"; do
    read -r name n nodes algo transport args <<<"$c"
    for mode in off fast; do
      for b in "${builds[@]}"; do
        read -r which dir <<<"$b"
        # shellcheck disable=SC2086 # args are words
        SMD_PLUGIN_PATH="$dir/src/plugins/shm:$dir/src/plugins/tcp" \
          SMD_CHECK=$mode SMD_ALGO=$algo SMD_TRANSPORT=$transport "$dir/tools/smdrun" -n "$n" --nodes "$nodes" --timeout 300 \
          "$dir/tools/smd-bench" allreduce $args --json |
          grep -o '{.*}' | sed "s/^/$name $which-$mode /" >>"$out/runs"
      done
    done
  done
done
/usr/bin/python3 - "$out/runs" "${base:+1}" <<'PY'
import json, statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, mode, js = line.split(' ', 2)
    d = json.loads(js)
    times.setdefault((name, d['bytes']), {}).setdefault(mode, []).append(d['time_us'])
med = lambda m, k: statistics.median(m[k])
if sys.argv[2]:
    print('| path | bytes | base off (us) | base fast (us) | off (us) | fast (us) | fast/base fast |')
    print('|---|---|---|---|---|---|---|')
    for (name, size), m in times.items():
        print(f"| {name} | {size} | {med(m, 'base-off'):.1f} | {med(m, 'base-fast'):.1f} | "
              f"{med(m, 'this-off'):.1f} | {med(m, 'this-fast'):.1f} | "
              f"{med(m, 'this-fast') / med(m, 'base-fast'):.2f} |")
else:
    print('| path | bytes | off (us) | fast (us) | fast/off |')
    print('|---|---|---|---|---|')
    for (name, size), m in times.items():
        off, fast = med(m, 'this-off'), med(m, 'this-fast')
        print(f'| {name} | {size} | {off:.1f} | {fast:.1f} | {fast / off:.2f} |')
PY
