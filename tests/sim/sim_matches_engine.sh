#!/bin/bash
# smd-sim against the engine it models (docs/SCALE.md, Simulator):
# 1. on 4 fake nodes of 4 rank threads, run for real with smd-sim's cost
#    model as SMD_TUNING_FILE, every collective's algorithm and predicted
#    time equal smd-sim's, at sizes where the choice changes;
# 2. predicted times grow with the size, and with the network's latency;
# 3. a step's time is its collectives without computation, and hides them
#    under ample computation;
# 4. a broken description is refused with a message, not a crash.
# Usage: sim_matches_engine.sh SMD_SIM ENGINE_CHOICES
set -euo pipefail
sim=$1
engine=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# A slow arena step, so small calls choose flat algorithms and large ones
# the hierarchy: the sizes cross the choice's boundaries.
cluster() {  # $1: inter-node latency in us
  cat <<JSON
{"name": "test", "ranks_per_node": 4, "nodes": [4],
 "intra_node": {"latency_us": 1, "gbytes_per_s": 8},
 "arena": {"latency_us": 30, "gbytes_per_s": 8},
 "inter_node": {"latency_us": $1, "gbytes_per_s_per_rail": 2.5, "rails": 2},
 "reduce_gbytes_per_s": 3}
JSON
}
cluster 20 > "$dir/cluster.json"
cluster 200 > "$dir/slow.json"
colls=allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,barrier
sizes=16,1024,16384,262144

"$sim" --help | grep -q "usage: smd-sim"
"$sim" tuning --cluster "$dir/cluster.json" > "$dir/tuning.txt"
SMD_TUNING_FILE="$dir/tuning.txt" SMD_TRANSPORT=inproc SMD_RANKS_PER_NODE=4 \
  "$engine" 16 "$colls" "$sizes" | sort > "$dir/real.csv"
"$sim" collectives --cluster "$dir/cluster.json" --collectives "$colls" --sizes "$sizes" \
  | tail -n +2 | cut -d, -f3-6 | sort > "$dir/sim.csv"
"$sim" collectives --cluster "$dir/slow.json" --collectives "$colls" --sizes "$sizes" \
  | tail -n +2 | cut -d, -f3-6 | sort > "$dir/slow.csv"

want=$(( 7 * 4 ))
[[ $(wc -l < "$dir/real.csv") -eq $want ]] || { echo "FAIL: real run gave $(wc -l < "$dir/real.csv") rows, want $want"; cat "$dir/real.csv"; exit 1; }
# Same collective, size and algorithm; predicted times equal to the
# printed hundredth.
if ! join -t, -j1 <(awk -F, '{print $1"/"$2","$3","$4}' "$dir/real.csv") \
                  <(awk -F, '{print $1"/"$2","$3","$4}' "$dir/sim.csv") |
     awk -F, -v want="$want" '
       { n++; if ($2 != $4) { print "FAIL: " $1 ": engine ran " $2 ", smd-sim says " $4; bad = 1 }
         d = $3 - $5; if (d < 0) d = -d
         if (d > 0.011) { print "FAIL: " $1 ": engine predicted " $3 " us, smd-sim " $5; bad = 1 } }
       END { if (n != want) { print "FAIL: " n " of " want " rows matched"; bad = 1 } exit bad }'; then
  paste -d' ' "$dir/real.csv" "$dir/sim.csv"
  exit 1
fi
algos=$(cut -d, -f3 "$dir/real.csv" | sort -u | tr '\n' ' ')
[[ $(wc -w <<< "$algos") -ge 3 ]] || { echo "FAIL: only $algos chosen: the sizes do not reach the choice's crossovers"; exit 1; }
echo "engine and smd-sim agree on $want calls; algorithms chosen: $algos"

# Growth: never faster with more bytes, slower at the largest size than at
# the smallest (barrier moves none); never faster with more latency, and
# slower for the barrier.
sort -t, -k1,1 -k2,2n "$dir/sim.csv" | awk -F, '
  $1 != prev { if (prev != "" && prev != "barrier" && last <= first) { print "FAIL: " prev " not slower at the largest size"; bad = 1 }
               prev = $1; first = $4; last = $4; next }
  { if ($4 < last) { print "FAIL: " $1 " faster at " $2 " bytes than below"; bad = 1 } last = $4 }
  END { if (prev != "barrier" && last <= first) bad = 1; exit bad }'
join -t, -j1 <(awk -F, '{print $1"/"$2","$4}' "$dir/sim.csv") \
             <(awk -F, '{print $1"/"$2","$4}' "$dir/slow.csv") | awk -F, '
  { if ($3 < $2) { print "FAIL: " $1 " faster with 10x the latency"; bad = 1 }
    if ($1 ~ /^barrier/ && $3 <= $2) { print "FAIL: barrier not slower with 10x the latency"; bad = 1 } }
  END { exit bad }'
echo "predicted times grow with size and latency"

# --all: every applicable algorithm once (several for all but alltoall,
# which has only pairwise across nodes), the choice exactly one of them
# and the cheapest.
"$sim" collectives --cluster "$dir/cluster.json" --collectives "$colls" --sizes "$sizes" --all |
  tail -n +2 | awk -F, '
  { key = $3 "/" $4; n[key]++; if (!(key in best) || $6 < best[key]) best[key] = $6
    if ($7 == "true") { chosen[key]++; cost[key] = $6 } }
  END { for (k in n) {
          if (chosen[k] != 1) { print "FAIL: " k ": " chosen[k] + 0 " rows marked chosen"; bad = 1 }
          else if (cost[k] > best[k]) { print "FAIL: " k ": chose " cost[k] " us over " best[k]; bad = 1 }
          if (n[k] < 2 && k !~ /^alltoall/) { print "FAIL: " k ": one candidate only"; bad = 1 } }
        exit bad }'
echo "--all: the choice is the cheapest of the candidates"

# The step: with no computation it is its collectives back to back; with
# far more computation than communication they hide behind the backward
# pass (data parallel) and the prefetched gathers (sharded); one node is
# the baseline of the efficiency.
cat > "$dir/step.json" <<JSON
{"ranks_per_node": 4, "nodes": [1, 4],
 "intra_node": {"latency_us": 1, "gbytes_per_s": 8},
 "inter_node": {"latency_us": 20, "gbytes_per_s_per_rail": 2.5, "rails": 2},
 "reduce_gbytes_per_s": 3,
 "workloads": [
  {"name": "idle", "mode": "data_parallel", "parameters": 1e7, "bucket_bytes": 4e6, "compute_ms": 0},
  {"name": "busy", "mode": "data_parallel", "parameters": 1e7, "bucket_bytes": 4e6, "compute_ms": 10000},
  {"name": "busy", "mode": "sharded", "parameters": 1e7, "bucket_bytes": 4e6, "compute_ms": 10000}]}
JSON
"$sim" step --cluster "$dir/step.json" > "$dir/step.csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
  { name = $col["workload"] "/" $col["mode"] "/" $col["nodes"] " nodes"
    step = $col["step_ms"]; comm = $col["communication_ms"]; n = $col["nodes"]; rows++
    if (n == 1 && $col["efficiency_vs_1_node"] != 1) { print "FAIL: " name ": efficiency against itself not 1"; bad = 1 }
    if ($col["workload"] == "idle" && n == 4 && (comm <= 0 || step - comm > 0.011 || comm - step > 0.011)) {
      print "FAIL: " name ": step " step " ms is not its collectives (" comm " ms)"; bad = 1 }
    if ($col["workload"] == "busy" && (comm <= 0 && n == 4 || $col["efficiency_vs_compute"] < 0.99)) {
      print "FAIL: " name ": " comm " ms of collectives not hidden by 10 s of compute (step " step " ms)"; bad = 1 } }
  END { if (rows != 6) { print "FAIL: " rows " step rows, want 6"; bad = 1 } exit bad }' "$dir/step.csv" ||
  { cat "$dir/step.csv"; exit 1; }
echo "step times: collectives alone without compute, hidden under ample compute"

# Broken input: a clear message and exit 1, or 2 for a usage error.
echo '{"ranks_per_node": 4, "nodes": [4]}' > "$dir/bad.json"
set +e
msg=$("$sim" collectives --cluster "$dir/bad.json" 2>&1); rc=$?
set -e
[[ $rc -eq 1 && $msg == *"intra_node"* ]] || { echo "FAIL: missing link gave rc $rc: $msg"; exit 1; }
set +e
"$sim" collectives --cluster "$dir/cluster.json" --sizes 12Q > /dev/null 2>&1; rc=$?
set -e
[[ $rc -eq 2 ]] || { echo "FAIL: a bad size gave rc $rc"; exit 1; }
echo "bad input refused"
