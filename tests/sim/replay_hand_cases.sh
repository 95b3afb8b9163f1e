#!/bin/bash
# smd-sim collectives --replay against times worked out by hand
# (docs/SCALE.md, Simulator): the engine's real schedule, recorded over the
# inproc transport and replayed over the described links, must give
# 1. a ring allreduce of n bytes on p nodes of one rank: 2p(p-1) messages
#    of n/p bytes and 2(p-1) x (latency + n/p / bandwidth), for p = 4, 8;
# 2. a recursive-doubling allreduce on 4 nodes: 2 x (latency + n / bandwidth);
# 3. a hierarchical allreduce on 2 nodes of 4 ranks: one shared rail (NIC)
#    slower than four by the rail phase's bytes queued behind each other,
#    n x (1 - 1/4) / bandwidth (within 5%);
# 4. a world beyond the replay's limit refused, naming the cost model.
# The agreement check's fingerprint messages are off (SMD_CHECK=off) so
# that the messages are the algorithm's alone.
# Usage: replay_hand_cases.sh SMD_SIM
set -euo pipefail
sim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export SMD_CHECK=off

cluster() {  # $1: ranks per node, $2: rails
  cat <<JSON
{"name": "hand", "ranks_per_node": $1, "nodes": [2],
 "intra_node": {"latency_us": 1, "gbytes_per_s": 8},
 "inter_node": {"latency_us": 10, "gbytes_per_s_per_rail": 1, "rails": $2},
 "reduce_gbytes_per_s": 3}
JSON
}
cluster 1 1 > "$dir/flat.json"
cluster 4 1 > "$dir/one_rail.json"
cluster 4 4 > "$dir/four_rails.json"

# Prints "replayed_algorithm replay_us messages inter_node_bytes".
replayed() {  # $1: cluster, $2: nodes, $3: algorithm, $4: bytes
  "$sim" collectives --cluster "$1" --nodes "$2" --collectives allreduce --sizes "$4" \
    --replay --algorithm "$3" | tail -n +2 | awk -F, '{print $7, $8, $9, $10}'
}
fail=0
expect() {  # $1: what, $2: got, $3: want, $4: tolerance
  if awk -v g="$2" -v w="$3" -v t="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'; then
    echo "ok: $1: $2 (want $3)"
  else
    echo "FAIL: $1: $2, want $3 (+-$4)"
    fail=1
  fi
}

n=65536
for p in 4 8; do
  read -r algo us msgs bytes <<< "$(replayed "$dir/flat.json" $p ring $n)"
  [[ $algo == ring ]] || { echo "FAIL: ring forced on $p nodes ran $algo"; exit 1; }
  expect "ring on $p: messages" "$msgs" $(( 2 * p * (p - 1) )) 0
  expect "ring on $p: inter-node bytes" "$bytes" $(( 2 * (p - 1) * n )) 0
  expect "ring on $p: time (us)" "$us" "$(awk -v p=$p -v n=$n 'BEGIN { print 2 * (p - 1) * (10 + n / p / 1000) }')" 0.011
done

read -r algo us msgs bytes <<< "$(replayed "$dir/flat.json" 4 rd $n)"
[[ $algo == rd ]] || { echo "FAIL: rd forced on 4 nodes ran $algo"; exit 1; }
expect "rd on 4: time (us)" "$us" "$(awk -v n=$n 'BEGIN { print 2 * (10 + n / 1000) }')" 0.011

n=1048576
read -r algo one _ <<< "$(replayed "$dir/one_rail.json" 2 hierarchical $n)"
[[ $algo == hierarchical ]] || { echo "FAIL: hierarchical forced ran $algo"; exit 1; }
read -r _ four _ <<< "$(replayed "$dir/four_rails.json" 2 hierarchical $n)"
want=$(awk -v n=$n 'BEGIN { print n * 0.75 / 1000 }')
expect "one rail against four: extra time (us)" "$(awk -v a="$one" -v b="$four" 'BEGIN { print a - b }')" \
  "$want" "$(awk -v w="$want" 'BEGIN { print w * 0.05 }')"

if "$sim" collectives --cluster "$dir/flat.json" --nodes 600 --collectives allreduce --sizes 1K \
     --replay > "$dir/out" 2> "$dir/err"; then
  echo "FAIL: a replay of 600 ranks ran"; fail=1
elif ! grep -q "cost model" "$dir/err"; then
  echo "FAIL: 600 ranks refused without pointing at the cost model:"; cat "$dir/err"; fail=1
else
  echo "ok: 600 ranks refused: $(cat "$dir/err")"
fi
exit $fail
