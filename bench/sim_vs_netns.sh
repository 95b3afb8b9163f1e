#!/usr/bin/env bash
# bench/sim_vs_netns.sh: smd-sim's predicted times against the same
# collective measured over a shaped link between two network namespaces
# (docs/SCALE.md, Simulator). Two (or --nodes) "nodes" of two ranks
# (tests/netns/netns_test.sh bench: a veth pair, or a bridge's ports past
# two nodes, shaped by tc to RATE and DELAY,
# shm inside a node, tcp between); smd-sim is given a cluster with the same
# link, and its cost model goes to the real run as SMD_TUNING_FILE, so both
# choose alike and the table compares times only.
#
# usage: sudo bench/sim_vs_netns.sh [--rate-gbit G] [--delay-us D]
#          [--collective C] [--sizes "1M 4M 16M"] [--base-latency-us B]
#          [--intra-latency-us L] [--intra-gbytes-per-s W] [--build DIR]
#          [--burst-ms T] [--ranks-per-node R] [--nodes N] [--no-tuning]
#   --rate-gbit, --delay-us  the shaped link (default 2 Gbit/s, 0 us: tbf;
#                      a delay needs tc's netem module)
#   --base-latency-us  what a tcp message costs between the namespaces on
#                      top of DELAY (default 30; measure it with smd-bench at
#                      8 bytes and DELAY 0 and pass it here)
#   --intra-*          the node's links (default 1 us, 5 GB/s; take them
#                      from `smd-bench --tune` on this machine)
#   --burst-ms         tbf's bucket in milliseconds of the rate (default 4).
#                      A bucket the loaded VM's scheduling gaps overflow
#                      loses tokens: 256 KB at 2 Gbit/s (1 ms) carried a
#                      two-way 4 MiB allgather at 60% of the rate
#                      (docs/SCALE.md)
#   --ranks-per-node   ranks on each node (default 2)
#   --nodes            nodes (default 2; 3 to 8 hang off a bridge, each
#                      node's link shaped to RATE both ways)
#   --no-tuning        the real run without smd-sim's cost model (its own)
#   --collective       allreduce, allgather, broadcast or reduce (sizes mean
#                      smd-bench's bytes: allgather's whole output, which
#                      smd-sim is given per rank; default allreduce)
# Needs root (network namespaces). Prints one row per size: the algorithm
# each side chose, the measured and predicted microseconds and their ratio,
# and the replay's microseconds (smd-sim collectives --replay) and ratio.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build"
RATE=2
DELAY=0
BASE=30
INTRA_LAT=1
INTRA_BW=5
COLL=allreduce
BURST_MS=4
PER_NODE=2
NODES=2
TUNED=1
SIZES="1M 4M 16M"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate-gbit) RATE=$2; shift ;;
    --delay-us) DELAY=$2; shift ;;
    --base-latency-us) BASE=$2; shift ;;
    --intra-latency-us) INTRA_LAT=$2; shift ;;
    --intra-gbytes-per-s) INTRA_BW=$2; shift ;;
    --collective) COLL=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --burst-ms) BURST_MS=$2; shift ;;
    --ranks-per-node) PER_NODE=$2; shift ;;
    --nodes) NODES=$2; shift ;;
    --no-tuning) TUNED=0 ;;
    --build) BUILD=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sim_vs_netns.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$COLL" in
  allreduce | allgather | broadcast | reduce) ;;
  *) echo "sim_vs_netns.sh: --collective is allreduce, allgather, broadcast or reduce" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/cluster.json" <<JSON
{"name": "netns nodes", "ranks_per_node": $PER_NODE, "nodes": [$NODES],
 "intra_node": {"latency_us": $INTRA_LAT, "gbytes_per_s": $INTRA_BW},
 "inter_node": {"latency_us": $(awk -v a="$BASE" -v b="$DELAY" 'BEGIN {print a + b}'),
                "gbytes_per_s_per_rail": $(awk -v r="$RATE" 'BEGIN {print r / 8}'), "rails": 1},
 "reduce_gbytes_per_s": 3}
JSON
"$BUILD/tools/smd-sim" tuning --cluster "$work/cluster.json" > "$work/tuning.txt" || exit 1
# smd-sim's allgather size is one rank's block.
per_call=1
[[ "$COLL" != allgather ]] || per_call=$((NODES * PER_NODE))
sim_sizes=$(for s in $SIZES; do
  awk -v s="$s" -v d="$per_call" 'BEGIN { m = 1; u = toupper(substr(s, length(s)))
    if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824
    printf "%d\n", (m == 1 ? s : substr(s, 1, length(s) - 1)) * m / d }'
done | paste -sd,)
burst=$(awk -v r="$RATE" -v t="$BURST_MS" 'BEGIN { printf "%db", r * 1e9 / 8 * t / 1000 }')
tuning="$work/tuning.txt"
[[ $TUNED -eq 1 ]] || tuning=
# --replay: also the chosen algorithm's real messages (rank threads over
# the inproc transport) timed over the cluster's links.
SMD_PLUGIN_PATH="$BUILD/src/plugins/inproc" \
  "$BUILD/tools/smd-sim" collectives --cluster "$work/cluster.json" --collectives "$COLL" \
  --sizes "$sim_sizes" --replay | tail -n +2 | cut -d, -f4-6,8 > "$work/sim.csv" || exit 1

# smd-bench walks sizes by a factor: run it once per size.
: > "$work/real.json"
for size in $SIZES; do
  NETNS_BENCH="$BUILD/tools/smd-bench" NETNS_RATE="${RATE}gbit" NETNS_DELAY="${DELAY}us" \
    NETNS_TUNING_FILE="$tuning" NETNS_TBF_BURST="$burst" NETNS_RANKS_PER_NODE="$PER_NODE" NETNS_NODES="$NODES" \
    NETNS_BENCH_ARGS="$COLL -b $size -e $size -n 10 -w 3" \
    SMD_PLUGIN_PATH="$BUILD/src/plugins/shm:$BUILD/src/plugins/tcp" LD_LIBRARY_PATH="$BUILD/src" \
    "$ROOT/tests/netns/netns_test.sh" bench > "$work/run.out"
  rc=$?
  [[ $rc -eq 0 ]] || { cat "$work/run.out"; echo "sim_vs_netns.sh: the run at $size failed ($rc)"; exit 1; }
  grep '^{' "$work/run.out" >> "$work/real.json"
done

field() { grep -o "\"$1\": \"*[0-9a-z._]*" "$work/real.json" | sed 's/.*: "*//'; }
echo "$COLL, $NODES nodes x $PER_NODE ranks, link ${RATE} Gbit/s (tbf burst $burst), delay ${DELAY} us," \
  "base latency ${BASE} us, real run $([[ $TUNED -eq 1 ]] && echo "given smd-sim's model" || echo "untuned")"
printf '%-10s %-13s %-13s %12s %12s %7s %12s %7s\n' bytes measured_algo smd-sim_algo measured_us \
  smd-sim_us ratio replay_us ratio
paste -d, <(field bytes) <(field algo) <(field time_us) "$work/sim.csv" |
  awk -F, '{printf "%-10s %-13s %-13s %12.1f %12.1f %7.2f %12.1f %7.2f\n", $1, $2, $5, $3, $6, $3 / $6, $7, $3 / $7}'
