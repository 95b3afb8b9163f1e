#!/usr/bin/env bash
# bench/mpi_rs_algos.sh: which of Open MPI's reduce_scatter_block algorithms
# is fastest here, all five side by side (bench/compare.sh's "MPI best"
# column takes the best of them at each point; this shows them all).
#
# Runs mpi_bench reduce_scatter (MPI_Reduce_scatter_block, shared memory:
# btl vader,self) with the default decision (0) and with each algorithm
# forced (--mca coll_tuned_use_dynamic_rules 1
# --mca coll_tuned_reduce_scatter_block_algorithm N: 1 basic_linear,
# 2 recursive_doubling, 3 recursive_halving, 4 butterfly), the algorithms
# alternating within each repetition; prints busbw GB/s (median of the
# repetitions) per algorithm, ranks and size, and the best per row.
#
# usage: bench/mpi_rs_algos.sh [--reps R] [--ranks "2 4"] [--sizes "1M 16M"]
#                              [--build DIR]
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/machine.sh
source "$ROOT/bench/machine.sh"
REPS=3
RANKS="2 4"
SIZES="64K 1M 16M"
BUILD="$ROOT/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --build) BUILD=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mpi_rs_algos.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
  { echo "mpi_rs_algos.sh: needs mpicc and mpirun (apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 1; }
BENCH="$BUILD/bench/mpi_bench"
if [ ! -x "$BENCH" ] || [ "$ROOT/bench/mpi_bench.c" -nt "$BENCH" ]; then
  mkdir -p "$(dirname "$BENCH")"
  mpicc -O2 "$ROOT/bench/mpi_bench.c" -o "$BENCH" || exit 1
fi
ARGS=(--oversubscribe --bind-to none --mca pml ob1 --mca btl vader,self)
if [ "$(id -u)" = 0 ]; then
  ARGS+=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/mpi-rs-algos.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

echo "# $(machine_line)"
for rep in $(seq 1 "$REPS"); do
  for np in $RANKS; do
    for size in $SIZES; do
      for k in 0 1 2 3 4; do
        alg=$(( (k + rep) % 5 ))  # rotate the order every repetition
        extra=()
        [ "$alg" != 0 ] && extra=(--mca coll_tuned_use_dynamic_rules 1
                                  --mca coll_tuned_reduce_scatter_block_algorithm "$alg")
        timeout -k 5 120 mpirun "${ARGS[@]}" "${extra[@]+"${extra[@]}"}" -np "$np" "$BENCH" reduce_scatter \
          -b "$size" -e "$size" -n 10 -w 2 --json >> "$OUT/alg${alg}_np${np}.jsonl" 2>/dev/null ||
          echo "# alg $alg np=$np $size rep $rep failed"
      done
    done
  done
done

/usr/bin/env python3 - "$OUT" <<'EOF'
import glob, json, os, re, statistics, sys
names = {0: "default", 1: "basic_linear", 2: "rec_doubling", 3: "rec_halving", 4: "butterfly"}
data = {}
for f in glob.glob(os.path.join(sys.argv[1], "alg*_np*.jsonl")):
    alg, np_ = map(int, re.findall(r"\d+", os.path.basename(f)))
    for line in open(f):
        r = json.loads(line)
        if not r.get("errors"):
            data.setdefault((np_, r["bytes"], alg), []).append(r["busbw_gbps"])
print("Open MPI reduce_scatter_block (vader), busbw GB/s, median of repetitions")
print(f"{'np':>3} {'bytes':>10} " + " ".join(f"{names[a]:>12}" for a in names) + "  best")
for np_, b in sorted({k[:2] for k in data}):
    meds = {a: statistics.median(data[(np_, b, a)]) for a in names if (np_, b, a) in data}
    best = max(meds, key=meds.get)
    print(f"{np_:>3} {b:>10} " + " ".join(f"{meds[a]:>12.3f}" if a in meds else f"{'n/a':>12}" for a in names)
          + f"  {best} ({names[best]})")
EOF
