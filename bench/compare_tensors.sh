#!/usr/bin/env bash
# bench/compare_tensors.sh: many small tensors per step, smd against Open MPI.
#
# For each layout (np=2, np=4 on one node, 2x2 fake nodes over shm+tcp) and
# repetition, runs side by side: smd-bench --tensors K -b SIZE (K separate
# allreduces), the same --grouped (one group, fused), and mpi_tensors (Open
# MPI: K MPI_Iallreduce + MPI_Waitall; vader within the node, tcp for the
# fake-node layout); then BERT-base's parameter list (smd-bench --model
# bert-base) separate, grouped and as one allreduce of the same bytes
# (--single). Prints the membw probe once and a table of medians and ratios.
#
# usage: bench/compare_tensors.sh [--reps R] [--tensors K] [--size BYTES]
#                                 [--build DIR] [--no-bert]
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=3 K=1000 SIZE=4096 BUILD="$ROOT/build" BERT=1
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift ;;
    --tensors) K=$2; shift ;;
    --size) SIZE=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --no-bert) BERT=0 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_tensors.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
BB="$BUILD/bench"
mkdir -p "$BB"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/smd-tensors.XXXXXX")
PLUGINS=$(find "$BUILD/src/plugins" -mindepth 1 -maxdepth 1 -type d | tr '\n' ':')
export SMD_PLUGIN_PATH="$PLUGINS"
SMDRUN="$BUILD/tools/smdrun" BENCH="$BUILD/tools/smd-bench"
HAVE_MPI=0
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  mpicc -O2 -Wall -Wextra "$ROOT/bench/mpi_tensors.c" -o "$BB/mpi_tensors" && HAVE_MPI=1
fi
MPIRUN=(mpirun --oversubscribe --bind-to none --mca pml ob1)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
${CC:-cc} -O3 -march=native -pthread "$ROOT/bench/membw.c" -o "$BB/membw" 2>/dev/null &&
  echo "# membw: $("$BB/membw" 2>/dev/null | tr '\n' ' ')"
echo "# cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {  # tag, command...
  local tag=$1; shift
  "$@" 2>/dev/null | sed -n 's/^\[0\] //; /^{/p' | sed "s/^{/{\"tag\": \"$tag\", /" >> "$OUT/results.jsonl"
}
for rep in $(seq "$REPS"); do
  for layout in np2 np4 np4-nodes2; do
    case $layout in
      np2) args=(-n 2); env=(); btl=self,vader; np=2 ;;
      np4) args=(-n 4); env=(); btl=self,vader; np=4 ;;
      np4-nodes2) args=(-n 4 --nodes 2); env=(SMD_TRANSPORT=shm+tcp); btl=self,tcp; np=4 ;;
    esac
    t=(allreduce --tensors "$K" -b "$SIZE" -n 20 -w 3 --json)
    run "$layout separate" env "${env[@]}" "$SMDRUN" "${args[@]}" "$BENCH" "${t[@]}"
    run "$layout grouped" env "${env[@]}" "$SMDRUN" "${args[@]}" "$BENCH" "${t[@]}" --grouped
    run "$layout single" env "${env[@]}" "$SMDRUN" "${args[@]}" "$BENCH" "${t[@]}" --single
    [ $HAVE_MPI = 1 ] && run "$layout mpi" "${MPIRUN[@]}" --mca btl "$btl" -np "$np" "$BB/mpi_tensors" "$K" "$SIZE" 20 3
    if [ $BERT = 1 ]; then
      b=(allreduce --model bert-base -n 3 -w 1 --json)
      for m in separate grouped single; do
        flag=(); [ $m = grouped ] && flag=(--grouped); [ $m = single ] && flag=(--single)
        run "$layout bert-$m" env "${env[@]}" "$SMDRUN" "${args[@]}" "$BENCH" "${b[@]}" "${flag[@]}"
      done
    fi
  done
done
/usr/bin/python3 - "$OUT/results.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault(r["tag"], []).append(r["time_us"])
    if r.get("errors"): print("ERRORS in", r)
med = {k: statistics.median(v) for k, v in by.items()}
print(f"{'layout':<12} {'separate':>10} {'grouped':>10} {'single':>10} {'mpi':>10} {'sep/grp':>8} {'mpi/grp':>8} {'grp/single':>10}   (median us per step, {len(by.get('np2 separate', []))} reps)")
for lay in ["np2", "np4", "np4-nodes2"]:
    g = lambda m: med.get(f"{lay} {m}")
    s, gr, si, mp = g("separate"), g("grouped"), g("single"), g("mpi")
    f = lambda x: f"{x:10.0f}" if x else f"{'n/a':>10}"
    rt = lambda a, b: f"{a / b:8.2f}" if a and b else f"{'n/a':>8}"
    print(f"{lay:<12} {f(s)} {f(gr)} {f(si)} {f(mp)} {rt(s, gr)} {rt(mp, gr)} {rt(gr, si):>10}")
    bs, bg, bsi = g("bert-separate"), g("bert-grouped"), g("bert-single")
    if bg:
        print(f"{lay + ' bert':<12} {f(bs)} {f(bg)} {f(bsi)} {'':>10} {rt(bs, bg)} {'':>8} {rt(bg, bsi):>10}")
PY
echo "# raw results: $OUT/results.jsonl"
