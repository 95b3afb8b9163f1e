#!/usr/bin/env bash
# bench/compare.sh: smd against Open MPI and Gloo on this machine, in one run.
#
# Builds (into BUILD/bench/, not through meson) an MPI edition of smd-bench
# (mpi_bench, mpicc), a Gloo edition (gloo_bench, g++ -lgloo, TCP on
# 127.0.0.1) and a memory-bandwidth probe (membw); runs them and smd-bench
# with the same sizes, dtype float32, op sum and rank counts, alternating the
# implementations and repeating; prints one table (bench/report.py).
# See bench/README.md for the bound and the conventions.
#
# usage: bench/compare.sh [--quick] [--reps R] [--ranks "2 4"]
#                         [--collectives "allreduce allgather reduce_scatter broadcast"]
#                         [--out DIR] [--budget SECONDS] [--build DIR] [--no-smd-build] [--bind]
#   --quick          the smoke: sizes 8 B and 64 KiB, 1 rep, 2 ranks, every implementation
#   --reps R         repetitions of every (implementation, collective, ranks, sizes) run (3)
#   --budget S       start no repetition that (as long as the last one) would end after S
#                    seconds, and no point of one that would end after S+25 s (default 555:
#                    the whole script, build and report included, stays under 10 minutes)
#   --out DIR        raw JSON and the report go there (default BUILD/bench/results/<timestamp>)
#   --build DIR      smd's meson build directory (default: build/ at the repository root)
#   --no-smd-build   do not run ninja for smd-bench/smdrun (the meson test uses this)
#   --bind           pin rank r of every implementation to one CPU (smdrun --bind-to core
#                    for smd and Gloo, --bind-to core for Open MPI); default: no pinning, as
#                    smdrun and torchrun leave it. Unpinned ranks can share one CPU for a
#                    whole run on some VMs (the 8-byte cells then move by 2-3x)
# Environment: SMD_COMPARE_SKIP="mpi gloo" leaves implementations out (for testing).
# SMD_COMPARE_MPI_RS_ALGOS="1 2 3 4" (the default): Open MPI's reduce_scatter_block
# algorithms (coll_tuned, forced) run beside its default decision, each as
# implementation mpirsN, reduce_scatter only; the report's "MPI best" column
# is the best of them and the default at each point (Open MPI's best
# configuration, not only its weak default); "" leaves them out.
# Exit status: 0, or 1 when a run failed or a checked result was wrong (both
# are listed under the table), 2 for a bad option.
set -u -o pipefail

T_START=$(date +%s.%N)
elapsed() { awk -v s="$T_START" -v n="$(date +%s.%N)" 'BEGIN { printf "%.0f", n - s }'; }
say() { printf '%s\n' "$*"; }
warn() { printf 'compare.sh: %s\n' "$*" >&2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/machine.sh
source "$ROOT/bench/machine.sh"
QUICK=0
REPS=3
RANKS="2 4"
COLLS="allreduce allgather reduce_scatter broadcast"
OUT=""
BUDGET=555
BUILD="$ROOT/build"
SMD_BUILD=1
BIND=0
REPS_SET=0 RANKS_SET=0

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --reps) REPS=$2; REPS_SET=1; shift ;;
    --reps=*) REPS=${1#*=}; REPS_SET=1 ;;
    --ranks) RANKS=$2; RANKS_SET=1; shift ;;
    --ranks=*) RANKS=${1#*=}; RANKS_SET=1 ;;
    --collectives) COLLS=$2; shift ;;
    --collectives=*) COLLS=${1#*=} ;;
    --out) OUT=$2; shift ;;
    --out=*) OUT=${1#*=} ;;
    --budget) BUDGET=$2; shift ;;
    --budget=*) BUDGET=${1#*=} ;;
    --build) BUILD=$2; shift ;;
    --build=*) BUILD=${1#*=} ;;
    --no-smd-build) SMD_BUILD=0 ;;
    --bind) BIND=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) warn "unknown option '$1' (see --help)"; exit 2 ;;
  esac
  shift
done
case "$REPS" in ''|*[!0-9]*|0) warn "--reps needs a positive integer"; exit 2 ;; esac
for c in $COLLS; do
  case "$c" in allreduce|allgather|reduce_scatter|broadcast) ;; *) warn "unknown collective '$c'"; exit 2 ;; esac
done
for n in $RANKS; do
  case "$n" in ''|*[!0-9]*|0|1) warn "--ranks takes rank counts >= 2"; exit 2 ;; esac
done
if [ "$QUICK" = 1 ]; then
  [ "$REPS_SET" = 1 ] || REPS=1
  [ "$RANKS_SET" = 1 ] || RANKS=2
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# ---- size groups --------------------------------------------------------------------
# smd-bench's -n applies to every size of an invocation, so sizes are run in groups
# with their own iteration counts (the same for every implementation):
#   name  sizes (bytes)                    -b    -e    -f     -n  -w
if [ "$QUICK" = 1 ]; then
  GROUPS_SPEC="tiny:8:64K:8192:20:3"
else
  # Enough calls that each timed loop lasts several milliseconds for the fast
  # implementations: with 100 calls of 0.5 us one scheduling hiccup moved a
  # median by half, and 2000 calls still left 8-byte medians 20% apart from
  # run to run. Gloo (100-1000 us a call here) runs the small group with a
  # hundredth of the calls.
  GROUPS_SPEC="small:8:1K:128:20000:1000 mid:64K:1M:16:200:20 big:16M:16M:2:20:2 large:256M:256M:2:1:1"
fi

# ---- build -------------------------------------------------------------------------
BB="$BUILD/bench"
mkdir -p "$BB" || { warn "cannot create $BB"; exit 1; }
STAMP=$(date +%Y%m%d-%H%M%S)
[ -n "$OUT" ] || OUT="$BB/results/$STAMP"
mkdir -p "$OUT" || { warn "cannot create $OUT"; exit 1; }
OUT=$(cd "$OUT" && pwd)
LOG="$OUT/build.log"
: > "$LOG"

say "# compare.sh: results in $OUT"
if [ "$SMD_BUILD" = 1 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    say "# building smd (meson setup $BUILD && ninja) ..."
    (cd "$ROOT" && meson setup "$BUILD") >>"$LOG" 2>&1 || { warn "meson setup failed (see $LOG)"; exit 1; }
  fi
  say "# building smd-bench and smdrun (ninja -C $BUILD) ..."
  ninja -C "$BUILD" tools/smd-bench tools/smdrun >>"$LOG" 2>&1 || { warn "ninja failed (see $LOG)"; exit 1; }
fi
SMDRUN="$BUILD/tools/smdrun"
SMDBENCH="$BUILD/tools/smd-bench"
for f in "$SMDRUN" "$SMDBENCH"; do
  [ -x "$f" ] || { warn "$f is missing: build smd first (meson setup build && ninja -C build)"; exit 1; }
done

# Rebuild a bench binary when its source is newer (or it is missing).
stale() { [ ! -x "$1" ] || [ "$2" -nt "$1" ] || [ "$0" -nt "$1" ]; }

# smdmem: smd-bench -m 1, buffers from smd_mem_alloc that peers read in place
# (the collectives that have such a path).
IMPLS="smd smdmem"
MEM_COLLS=" allreduce allgather reduce_scatter broadcast "
SKIP=" ${SMD_COMPARE_SKIP:-} "
MISSING=()
if [[ "$SKIP" == *" mpi "* ]]; then
  MISSING+=("mpi: left out (SMD_COMPARE_SKIP)")
elif ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  MISSING+=("mpi: no mpicc/mpirun (apt-get install libopenmpi-dev openmpi-bin); MPI columns are n/a")
else
  if stale "$BB/mpi_bench" "$ROOT/bench/mpi_bench.c"; then
    say "# building mpi_bench (mpicc) ..."
    if ! mpicc -O2 -Wall -Wextra "$ROOT/bench/mpi_bench.c" -o "$BB/mpi_bench" >>"$LOG" 2>&1; then
      MISSING+=("mpi: mpicc failed (see $LOG); MPI columns are n/a")
    fi
  fi
  [ -x "$BB/mpi_bench" ] && IMPLS="$IMPLS mpi"
  MPI_RS_ALGOS=${SMD_COMPARE_MPI_RS_ALGOS-1 2 3 4}
  if [ -x "$BB/mpi_bench" ] && [[ " $COLLS " == *" reduce_scatter "* ]]; then
    for a in $MPI_RS_ALGOS; do
      case "$a" in 1|2|3|4) IMPLS="$IMPLS mpirs$a" ;; *) warn "SMD_COMPARE_MPI_RS_ALGOS: no algorithm '$a' (1-4)"; exit 2 ;; esac
    done
  fi
fi
if [[ "$SKIP" == *" gloo "* ]]; then
  MISSING+=("gloo: left out (SMD_COMPARE_SKIP)")
elif [ ! -f /usr/include/gloo/rendezvous/file_store.h ] ||
     { ! compgen -G "/usr/lib/libgloo.so*" >/dev/null && ! compgen -G "/usr/lib/*/libgloo.so*" >/dev/null; }; then
  MISSING+=("gloo: no libgloo (apt-get install libgloo-dev); Gloo columns are n/a")
elif ! command -v g++ >/dev/null 2>&1; then
  MISSING+=("gloo: no g++; Gloo columns are n/a")
else
  if stale "$BB/gloo_bench" "$ROOT/bench/gloo_bench.cc"; then
    say "# building gloo_bench (g++ -lgloo) ..."
    if ! g++ -std=c++17 -O2 -march=native -Wall -Wextra "$ROOT/bench/gloo_bench.cc" -o "$BB/gloo_bench" \
        -lgloo -pthread >>"$LOG" 2>&1; then
      rm -f "$BB/gloo_bench"
      MISSING+=("gloo: building gloo_bench failed (see $LOG); Gloo columns are n/a")
    fi
  fi
  [ -x "$BB/gloo_bench" ] && IMPLS="$IMPLS gloo"
fi
HAVE_MEMBW=0
if stale "$BB/membw" "$ROOT/bench/membw.c"; then
  say "# building membw (cc -O3 -march=native -pthread) ..."
  ${CC:-cc} -O3 -march=native -Wall -Wextra -pthread "$ROOT/bench/membw.c" -o "$BB/membw" >>"$LOG" 2>&1 ||
    MISSING+=("membw: build failed (see $LOG); no bound column")
fi
[ -x "$BB/membw" ] && HAVE_MEMBW=1
for m in "${MISSING[@]+"${MISSING[@]}"}"; do say "# note: $m"; done
say "# implementations: $IMPLS   ranks: $RANKS   collectives: $COLLS   reps: $REPS   pinned: $([ "$BIND" = 1 ] && echo "yes (rank r on CPU r mod $(nproc))" || echo no)"

# ---- launchers ---------------------------------------------------------------------
MPIRUN_ARGS=(--oversubscribe --mca pml ob1 --mca btl self,vader)
if [ "$BIND" = 1 ]; then MPIRUN_ARGS+=(--bind-to core:overload-allowed); else MPIRUN_ARGS+=(--bind-to none); fi
# smdrun's ranks: pinned by smdrun itself (--bind).
PIN=()
[ "$BIND" = 1 ] && PIN=(--bind-to core)
if [ "$(id -u)" = 0 ]; then
  MPIRUN_ARGS+=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
RUN_TIMEOUT=${SMD_COMPARE_RUN_TIMEOUT:-150}  # seconds for one process group
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/smd-compare.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT

# run_one IMPL COLL NP GROUPSPEC OUTFILE [extra args]
run_one() {
  local impl=$1 coll=$2 np=$3 spec=$4 out=$5; shift 5
  local name b e f n w
  IFS=: read -r name b e f n w <<<"$spec"
  if [ "$impl" = gloo ] && [ "$name" = small ]; then n=$(( (n + 99) / 100 )); w=$(( (w + 99) / 100 )); fi
  local args=("$coll" -b "$b" -e "$e" -f "$f" -d float32 -o sum -n "$n" -w "$w" --json "$@")
  local rc=0
  # MPI_Bcast has one buffer: smd's broadcast runs in place too, so that
  # neither side pays for a root's copy the other skips.
  if [[ "$impl" == smd* ]] && [ "$coll" = broadcast ]; then args+=(-i 1); fi
  [ "$impl" = smdmem ] && args+=(-m 1)
  case "$impl" in
    smd|smdmem)
      timeout -k 5 "$RUN_TIMEOUT" "$SMDRUN" -n "$np" --no-tag-output "${PIN[@]+"${PIN[@]}"}" "$SMDBENCH" "${args[@]}" \
        >"$out" 2>"$out.err" || rc=$? ;;
    mpi)
      timeout -k 5 "$RUN_TIMEOUT" mpirun "${MPIRUN_ARGS[@]}" -np "$np" "$BB/mpi_bench" "${args[@]}" \
        >"$out" 2>"$out.err" || rc=$? ;;
    mpirs*)
      timeout -k 5 "$RUN_TIMEOUT" mpirun "${MPIRUN_ARGS[@]}" --mca coll_tuned_use_dynamic_rules 1 \
        --mca coll_tuned_reduce_scatter_block_algorithm "${impl#mpirs}" -np "$np" "$BB/mpi_bench" "${args[@]}" \
        >"$out" 2>"$out.err" || rc=$? ;;
    gloo)
      local store="$TMPD/gloo-store.$RANDOM.$RANDOM"
      mkdir -p "$store"
      timeout -k 5 "$RUN_TIMEOUT" "$SMDRUN" -n "$np" --no-tag-output "${PIN[@]+"${PIN[@]}"}" "$BB/gloo_bench" "${args[@]}" \
        --store "$store" >"$out" 2>"$out.err" || rc=$?
      rm -rf "$store" ;;
  esac
  [ -s "$out.err" ] || rm -f "$out.err"
  return $rc
}

# ---- the plan: every (ranks, collective, group) with the implementations in turn ---
# The order of the implementations rotates from one point to the next, so each
# one goes first (and last) equally often; every repetition walks the whole plan.
POINTS=()
for np in $RANKS; do
  for coll in $COLLS; do
    for spec in $GROUPS_SPEC; do POINTS+=("$np|$coll|$spec"); done
  done
done
read -r -a IMPL_ARR <<<"$IMPLS"
NIMPL=${#IMPL_ARR[@]}
PER_REP=0
for point in "${POINTS[@]}"; do
  IFS='|' read -r _np coll _spec <<<"$point"
  for impl in "${IMPL_ARR[@]}"; do
    [ "$impl" = smdmem ] && [[ "$MEM_COLLS" != *" $coll "* ]] && continue
    [[ "$impl" == mpirs* ]] && [ "$coll" != reduce_scatter ] && continue
    PER_REP=$((PER_REP + 1))
  done
done
TOTAL=$(( PER_REP * REPS ))
say "# plan: ${#POINTS[@]} points x $NIMPL implementations (smdmem:$MEM_COLLS) x $REPS reps = $TOTAL runs (+ membw probe each rep)"
say "# groups (name:-b:-e:-f:-n:-w): $GROUPS_SPEC"

L3_BYTES=$(machine_l3_bytes)
say "# $(machine_line)"
{
  echo "{\"meta\": \"compare\", \"stamp\": \"$STAMP\", \"quick\": $QUICK, \"reps\": $REPS, \"ranks\": \"$RANKS\", \"collectives\": \"$COLLS\", \"impls\": \"$IMPLS\", \"mpi_rs_algos\": \"${MPI_RS_ALGOS:-}\", \"groups\": \"$GROUPS_SPEC\", \"host\": \"$(hostname)\", \"nproc\": $(nproc), \"cpu\": \"$(machine_cpu | tr -d '"\\')\", \"l3_bytes\": ${L3_BYTES:-null}, \"loadavg\": \"$(machine_load)\", \"pinned\": $BIND, \"git\": \"$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)\"}"
  for m in "${MISSING[@]+"${MISSING[@]}"}"; do
    printf '{"meta": "missing", "what": "%s"}\n' "${m//\"/\'}"
  done
} > "$OUT/meta.jsonl"

FAILED=0
POINT_SECS=()  # seconds each point took (the longest repetition so far)
K=0
REPS_DONE=0
REP_START=0
for ((rep = 0; rep < REPS; rep++)); do
  now=$(elapsed)
  if [ "$rep" -gt 0 ]; then
    last=$(( now - REP_START ))
    if [ $(( now + last )) -gt "$BUDGET" ]; then
      say "# stopping after $rep of $REPS reps: the next one (about ${last}s) would pass the ${BUDGET}s budget"
      echo "{\"meta\": \"budget\", \"reps_done\": $rep, \"reps_asked\": $REPS}" >> "$OUT/meta.jsonl"
      break
    fi
  fi
  REP_START=$now
  if [ "$HAVE_MEMBW" = 1 ]; then
    say "[rep $((rep + 1))/$REPS] membw probe (memcpy, add; 1 and 2 threads; 256 MiB and 4 MiB) ... ($(elapsed)s)"
    if [ "$QUICK" = 1 ]; then mb_args=(--min-time 0.05 --reps 3); else mb_args=(--min-time 0.35 --reps 5); fi
    timeout -k 5 120 "$BB/membw" --json "${mb_args[@]}" > "$OUT/r${rep}_membw.jsonl" 2>"$OUT/r${rep}_membw.err" ||
      warn "membw failed (see $OUT/r${rep}_membw.err)"
    [ -s "$OUT/r${rep}_membw.err" ] || rm -f "$OUT/r${rep}_membw.err"
  fi
  for ((pi = 0; pi < ${#POINTS[@]}; pi++)); do
    # A repetition after the first stops short when this point (as long as it
    # took last time) would end more than 25 s past the budget; the medians then
    # use fewer repetitions for the points it did not reach.
    if [ "$rep" -gt 0 ] && [ $(( $(elapsed) + ${POINT_SECS[$pi]:-0} )) -gt $(( BUDGET + 25 )) ]; then
      say "# budget spent: repetition $((rep + 1)) stops after $pi of ${#POINTS[@]} points"
      echo "{\"meta\": \"budget_cut\", \"rep\": $rep, \"points_done\": $pi, \"points\": ${#POINTS[@]}}" >> "$OUT/meta.jsonl"
      break 2
    fi
    IFS='|' read -r np coll spec <<<"${POINTS[$pi]}"
    gname=${spec%%:*}
    point_t0=$(elapsed)
    rot=$(( (pi + rep) % NIMPL ))
    for ((j = 0; j < NIMPL; j++)); do
      impl=${IMPL_ARR[$(( (rot + j) % NIMPL ))]}
      [ "$impl" = smdmem ] && [[ "$MEM_COLLS" != *" $coll "* ]] && continue
      [[ "$impl" == mpirs* ]] && [ "$coll" != reduce_scatter ] && continue
      K=$((K + 1))
      extra=()
      # Resident memory: every allreduce run of the largest group reports VmHWM per rank.
      if [ "$coll" = allreduce ] && [ "$spec" = "${GROUPS_SPEC##* }" ]; then extra=(--rss); fi
      # Results are checked in the first repetition; later ones skip the check (and
      # its fill) of the 256 MiB group, whose per-element loops cost more than the calls.
      if [ "$rep" -gt 0 ] && [ "$gname" = large ]; then extra+=(-c 0); fi
      out="$OUT/r${rep}_${impl}_${coll}_np${np}_${gname}.jsonl"
      printf '[%d/%d] %-6s %-14s np=%s %-6s (%s..%s B, -n %s) ... ' "$K" "$TOTAL" "$impl" "$coll" "$np" \
        "$gname" "$(cut -d: -f2 <<<"$spec")" "$(cut -d: -f3 <<<"$spec")" "$(cut -d: -f5 <<<"$spec")"
      t0=$(date +%s.%N)
      if run_one "$impl" "$coll" "$np" "$spec" "$out" "${extra[@]+"${extra[@]}"}"; then
        printf 'ok %.1fs (%ss)\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$(elapsed)"
      else
        rc=$?
        FAILED=$((FAILED + 1))
        printf 'FAILED (exit %s%s; see %s.err)\n' "$rc" "$([ "$rc" = 124 ] && echo ", timed out after ${RUN_TIMEOUT}s")" "$out"
        echo "{\"meta\": \"failed\", \"impl\": \"$impl\", \"collective\": \"$coll\", \"ranks\": $np, \"group\": \"$gname\", \"rep\": $rep, \"exit\": $rc}" >> "$OUT/meta.jsonl"
      fi
    done
    d=$(( $(elapsed) - point_t0 ))
    [ "$d" -gt "${POINT_SECS[$pi]:-0}" ] && POINT_SECS[$pi]=$d  # the longest seen
  done
  REPS_DONE=$((rep + 1))
done

say ""
"$PY" "$ROOT/bench/report.py" "$OUT" | tee "$OUT/report.txt"
rc=${PIPESTATUS[0]}
say "# total time: $(elapsed)s (reps done: $REPS_DONE of $REPS, failed runs: $FAILED); raw JSON in $OUT"
# Wrong results (report.py exits 1) and failed runs fail the script.
[ "$rc" = 0 ] || exit "$rc"
if [ "$FAILED" -gt 0 ]; then
  say "# FAILED: $FAILED run(s) failed (listed in the report's notes)"
  exit 1
fi
exit 0
