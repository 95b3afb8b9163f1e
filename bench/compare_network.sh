#!/usr/bin/env bash
# bench/compare_network.sh: smd's network plugins against Open MPI's TCP BTL
# on loopback, in one run.
#
# Every rank is placed on a fake node of its own or two nodes are shared
# (smdrun --nodes 2), so traffic between the "nodes" crosses a network
# plugin: ucx (UCX_TLS=tcp), efa (libfabric, SMD_EFA_PROVIDER="tcp;ofi_rxm")
# and tcp (smd's own socket plugin). Open MPI runs MPI_Allreduce with
# `--mca btl tcp,self` (every pair over TCP on loopback). smd runs twice per
# plugin: with the plugin for every peer (SMD_TRANSPORT=PLUGIN, like MPI's
# all-TCP run) and, with two nodes, shm inside a node and the plugin between
# nodes (SMD_TRANSPORT=shm+PLUGIN, what a real job on two nodes does: the
# hierarchical allreduce), and on the same two nodes with the flat ring and
# recursive doubling forced (SMD_ALGO), so the table shows what the
# hierarchy gains. Open MPI runs a second time with its hierarchical
# collectives (han, --mca coll_han_priority 100); on one host Open MPI sees
# one node, so han runs its intra-node path there (over TCP).
#
# Which comparisons are fair: the "all" columns and Open MPI (tcp) use TCP
# between every pair. The "nodes2" columns use shared memory inside each fake
# node, which Open MPI (tcp) does not: set them beside two fair peers,
# "nodes2-net" (smd on the same two nodes with the plugin inside the node too:
# every pair over the network plugin, as Open MPI's, with smd's hierarchical
# algorithm) and "mpi-shm" (Open MPI with --mca btl vader,self: shared memory
# between every pair, more than a real two-node layout would give it; Open
# MPI cannot be told of fake nodes on one host).
# Implementations alternate within each repetition; the table is the median.
#
# usage: bench/compare_network.sh [--quick] [--reps R] [--ranks "2 4"]
#                                 [--build DIR] [--out DIR]
#   --quick   one repetition, 2 ranks, 1 MiB only (the test suite's smoke)
#   --small   one repetition, 4 ranks, 64 KiB and 1 MiB, fewer iterations: every
#             column, two nodes included, in a few minutes on a shared machine
# Environment: SMD_COMPARE_SKIP="mpi efa ..." leaves implementations out.
# A run that fails is marked F in its cells, one with wrong results E (its
# busbw is left out of the median); both are listed under the table and make
# the script exit 1.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/machine.sh
source "$ROOT/bench/machine.sh"
BUILD="$ROOT/build"
REPS=3
RANKS="2 4"
OUT=""
SIZES=(-b 64K -e 16M -f 16)
ITERS=(-n 10 -w 3)
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) REPS=1; RANKS=2; SIZES=(-b 1M -e 1M); ITERS=(-n 3 -w 1) ;;
    --small) REPS=1; RANKS=4; SIZES=(-b 64K -e 1M -f 16); ITERS=(-n 5 -w 2) ;;
    --reps) REPS=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_network.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

SMDRUN="$BUILD/tools/smdrun"
SMDBENCH="$BUILD/tools/smd-bench"
for f in "$SMDRUN" "$SMDBENCH"; do
  [ -x "$f" ] || { echo "compare_network.sh: $f is missing: build smd first (meson setup build && ninja -C build)" >&2; exit 1; }
done
OUT=${OUT:-"$BUILD/bench/network-$(date +%Y%m%d-%H%M%S)"}
mkdir -p "$OUT"
rm -f "$OUT/failed.txt"  # failures of an earlier run into the same directory
SKIP=" ${SMD_COMPARE_SKIP:-} "
START=$(date +%s)

# The implementations: name, then how to run it (a function below).
IMPLS=()
for plugin in ucx efa tcp; do
  [[ "$SKIP" == *" $plugin "* ]] && continue
  if [ -e "$BUILD/src/plugins/$plugin/libsmd-transport-$plugin.so" ]; then
    IMPLS+=("smd-$plugin")
  else
    echo "# smd-$plugin: plugin not built; its column is n/a"
  fi
done
MPI_BENCH="$BUILD/bench/mpi_bench"
if [[ "$SKIP" != *" mpi "* ]] && command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  if [ ! -x "$MPI_BENCH" ] || [ "$ROOT/bench/mpi_bench.c" -nt "$MPI_BENCH" ]; then
    mkdir -p "$(dirname "$MPI_BENCH")"
    mpicc -O2 "$ROOT/bench/mpi_bench.c" -o "$MPI_BENCH" || { echo "# mpicc failed; MPI is n/a"; MPI_BENCH=""; }
  fi
  [ -n "$MPI_BENCH" ] && IMPLS+=(mpi mpi-han mpi-shm)
else
  echo "# mpi: left out or no mpicc/mpirun (apt-get install libopenmpi-dev openmpi-bin)"
fi
MPIRUN_ARGS=(--oversubscribe --bind-to none --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
MPIRUN_SHM_ARGS=(--oversubscribe --bind-to none --mca pml ob1 --mca btl vader,self)
if [ "$(id -u)" = 0 ]; then
  MPIRUN_ARGS+=(--allow-run-as-root)
  MPIRUN_SHM_ARGS+=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# run IMPL MODE NP OUTFILE: MODE is "all" (the plugin for every peer, each
# rank its own node), "nodes2" (two nodes, shm inside, the plugin between:
# the automatic choice, hierarchical), "nodes2-ring" / "nodes2-rd" (the
# same with that flat algorithm forced) or "nodes2-net" (two nodes, the
# plugin inside them too: no shared memory anywhere, as Open MPI's tcp run).
run() {
  local impl=$1 mode=$2 np=$3 out=$4
  local args=(allreduce "${SIZES[@]}" -d float32 -o sum "${ITERS[@]}" --json)
  case "$impl" in
    mpi) timeout -k 5 300 mpirun "${MPIRUN_ARGS[@]}" -np "$np" "$MPI_BENCH" "${args[@]}" ;;
    mpi-han)
      timeout -k 5 300 mpirun "${MPIRUN_ARGS[@]}" --mca coll_han_priority 100 -np "$np" \
        "$MPI_BENCH" "${args[@]}" ;;
    mpi-shm)
      timeout -k 5 300 mpirun "${MPIRUN_SHM_ARGS[@]}" -np "$np" "$MPI_BENCH" "${args[@]}" ;;
    smd-*)
      # Two statements: within one `local`, $plugin would still be the
      # caller's (the last plugin of the loop above), not this one.
      local plugin=${impl#smd-}
      local nodes=$np transport=$plugin algo=auto
      case "$mode" in
        nodes2-net) nodes=2 ;;
        nodes2*) nodes=2; transport=shm+$plugin ;;
      esac
      case "$mode" in
        *-ring) algo=ring ;;
        *-rd) algo=rd ;;
      esac
      # Under auto, SMD_EFA_PROVIDER naming a provider puts efa first; for
      # the ucx and tcp columns, efa is kept out by naming one it lacks.
      local provider="tcp;ofi_rxm"
      [ "$plugin" != efa ] && provider=none
      SMD_TRANSPORT=$transport SMD_ALGO=$algo UCX_TLS=tcp SMD_EFA_PROVIDER=$provider SMD_DEBUG=${SMD_DEBUG:-warn} \
        SMD_PLUGIN_PATH="$BUILD/src/plugins/shm:$BUILD/src/plugins/$plugin" \
        timeout -k 5 300 "$SMDRUN" -n "$np" --nodes "$nodes" --timeout 240 "$SMDBENCH" "${args[@]}" ;;
  esac > "$out" 2> "$out.err"
}

echo "# implementations: ${IMPLS[*]}   ranks: $RANKS   reps: $REPS   results: $OUT"
echo "# $(machine_line); git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown); SMD_CHECK=${SMD_CHECK:-default}"
MEMBW="$BUILD/bench/membw"
if [ ! -x "$MEMBW" ] || [ "$ROOT/bench/membw.c" -nt "$MEMBW" ]; then
  ${CC:-cc} -O3 -march=native -pthread "$ROOT/bench/membw.c" -o "$MEMBW" 2>/dev/null || MEMBW=""
fi
[ -n "$MEMBW" ] && echo "# membw probe (GB/s; the machine as it was at the start):" &&
  "$MEMBW" --min-time 0.05 --reps 3 2>/dev/null | sed 's/^/#   /'

for rep in $(seq 1 "$REPS"); do
  for np in $RANKS; do
    # Rotate the order every repetition so drift does not favour anyone.
    n=${#IMPLS[@]}
    for i in $(seq 0 $((n - 1))); do
      impl=${IMPLS[$(( (i + rep) % n ))]}
      modes="all"
      [[ "$impl" == smd-* && "$np" -gt 2 ]] && modes="all nodes2 nodes2-ring nodes2-rd nodes2-net"
      for mode in $modes; do
        f="$OUT/r${rep}_${impl}_${mode}_np${np}.jsonl"
        printf '[rep %d] %-8s %-6s np=%d ... ' "$rep" "$impl" "$mode" "$np"
        if run "$impl" "$mode" "$np" "$f"; then
          echo "ok ($(( $(date +%s) - START ))s)"
        else
          rc=$?
          echo "FAILED (exit $rc; see $f.err)"
          printf '%s %s %s %s %s\n' "$impl" "$mode" "$np" "$rep" "$rc" >> "$OUT/failed.txt"
        fi
      done
    done
  done
done

/usr/bin/env python3 - "$OUT" <<'EOF'
import glob, json, os, re, statistics, sys
out = sys.argv[1]
data = {}    # (impl, mode, np, bytes) -> [busbw] of the runs with right results
wrong = {}   # (impl, mode, np, bytes) -> [(rep, wrong elements)]
failed = {}  # (impl, mode, np) -> [(rep, exit status)]
algos = {}   # (impl, mode, np) -> algorithms smd-bench reported
inter = {}   # (impl, mode, np, bytes) -> bytes the busiest rank sent across nodes per call
predicted = {}  # (impl, mode, np, bytes) -> the cost model's time of one call, us
times = {}   # (impl, mode, np, bytes) -> measured times of one call, us
for f in glob.glob(os.path.join(out, "r*_*.jsonl")):
    m = re.match(r"r(\d+)_(.+)_(all|nodes2|nodes2-ring|nodes2-rd|nodes2-net)_np(\d+)\.jsonl$", os.path.basename(f))
    if not m:
        continue
    for line in open(f, errors="replace"):
        line = re.sub(r"^\[\d+\] ", "", line.strip())
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "busbw_gbps" not in r:
            continue
        key = (m.group(2), m.group(3), int(m.group(4)), r["bytes"])
        if "algo" in r:
            algos.setdefault(key[:3], set()).add(r["algo"])
        if "inter_node_bytes" in r:
            inter[key] = max(inter.get(key, 0), r["inter_node_bytes"])
        if "predicted_us" in r:
            predicted[key] = r["predicted_us"]
            times.setdefault(key, []).append(r["time_us"])
        data.setdefault(key, [])
        if r.get("errors", 0):
            wrong.setdefault(key, []).append((int(m.group(1)), r["errors"]))
        else:
            data[key].append(r["busbw_gbps"])
if os.path.exists(os.path.join(out, "failed.txt")):
    for line in open(os.path.join(out, "failed.txt")):
        impl, mode, np_, rep, rc = line.split()
        failed.setdefault((impl, mode, int(np_)), []).append((int(rep), rc))
def med(k):
    v = data.get(k)
    return statistics.median(v) if v else None
def fmt(x):
    return "n/a" if x is None else f"{x:.3g}"
def cell(k):
    """The median, then E when a run of the cell had wrong results and F when
    a run of its implementation, mode and rank count failed."""
    marks = ("E" if k in wrong else "") + ("F" if k[:3] in failed else "")
    return f"{fmt(med(k))} {marks}".strip()
sizes = sorted({k[3] for k in data})
nps = sorted({k[2] for k in data} | {k[2] for k in failed})
cols = sorted({(k[0], k[1]) for k in list(data) + list(failed) if k[0] != "mpi"})
flats = ("nodes2-ring", "nodes2-rd")
# The fair peer of each column: shared memory inside the fake nodes is set
# beside Open MPI with shared memory between every pair; the plugin for every
# pair beside Open MPI over TCP for every pair.
SHM_MODES = ("nodes2", "nodes2-ring", "nodes2-rd")
def peer_of(impl, mode):
    return "mpi-shm" if mode in SHM_MODES else "mpi"
def label(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
print()
print("smd's network plugins vs Open MPI on loopback: allreduce float32 sum, busbw GB/s, median of reps")
print("  Open MPI = btl tcp,self (TCP between every pair); mpi-han = the same with its hierarchical collectives")
print("  (one host: han's intra-node path); mpi-shm = btl vader,self (shared memory between every pair).")
print("  all = the plugin for every peer, each rank its own node: compare with Open MPI (TCP), ratio /tcp.")
print("  nodes2 = two fake nodes, SHARED MEMORY inside each, the plugin between (the automatic choice,")
print("  hierarchical); nodes2-ring / nodes2-rd = the same with that flat algorithm forced: these use shared")
print("  memory where Open MPI (TCP) does not, so their ratio is to mpi-shm (/shm), which has shared memory")
print("  for every pair. nodes2-net = the two nodes with the plugin inside them too (no shared memory): /tcp.")
head = f"{'np':>3} {'size':>8} {'Open MPI':>9}" + "".join(
    f" {i + '/' + m:>17} {'/' + ('shm' if peer_of(i, m) == 'mpi-shm' else 'tcp'):>5}" for i, m in cols)
print(head)
print("-" * len(head))
for np_ in nps:
    for b in sizes:
        row = f"{np_:>3} {label(b):>8} {cell(('mpi', 'all', np_, b)):>9}"
        for i, m in cols:
            v = med((i, m, np_, b))
            mpi = None if i.startswith("mpi") else med((peer_of(i, m), "all", np_, b))
            ratio = "-" if v is None or not mpi else f"{v / mpi:.2f}"
            row += f" {cell((i, m, np_, b)):>17} {ratio:>5}"
        print(row)
print("-" * len(head))
print("  E = a run gave wrong results (left out of the median); F = a run failed (no numbers from it)")
# The hierarchy against smd's best flat algorithm on the same two nodes,
# with the bytes the busiest rank sent across nodes per call.
hier_rows = [(i, np_, b) for (i, m) in cols if m == "nodes2" for np_ in nps for b in sizes
             if med((i, "nodes2", np_, b)) is not None]
if hier_rows:
    print()
    print("two nodes: automatic (hierarchical) vs the better flat algorithm, bytes sent across nodes per rank and call,")
    print("  and the automatic choice's measured time of one call next to the cost model's prediction (default costs")
    print("  unless SMD_TUNING_FILE is set); auto/shm = auto over Open MPI with shared memory between every pair")
    print(f"{'impl':>8} {'np':>3} {'size':>8} {'auto':>7} {'algo':>13} {'flat':>7} {'auto/flat':>9} "
          f"{'auto/shm':>8} {'bytes auto':>11} {'bytes flat':>11} {'us':>8} {'model us':>8}")
    for i, np_, b in hier_rows:
        auto = med((i, "nodes2", np_, b))
        flat_v = [(med((i, f, np_, b)), f) for f in flats if med((i, f, np_, b)) is not None]
        flat, which = max(flat_v) if flat_v else (None, None)
        best_mpi = med(("mpi-shm", "all", np_, b)) or 0
        print(f"{i:>8} {np_:>3} {label(b):>8} {fmt(auto):>7} {','.join(sorted(algos.get((i, 'nodes2', np_), {'?'}))):>13} "
              f"{fmt(flat):>7} {('-' if not flat else f'{auto / flat:.2f}'):>9} "
              f"{('-' if not best_mpi else f'{auto / best_mpi:.2f}'):>8} "
              f"{inter.get((i, 'nodes2', np_, b), '-'):>11} {inter.get((i, which, np_, b), '-') if which else '-':>11} "
              f"{fmt(statistics.median(times[(i, 'nodes2', np_, b)])) if (i, 'nodes2', np_, b) in times else '-':>8} "
              f"{fmt(predicted.get((i, 'nodes2', np_, b))):>8}")
bad = []
for (i, m, np_, b), l in sorted(wrong.items()):
    bad += [f"WRONG: {i} {m} np={np_} {label(b)} rep {rep}: {n} wrong elements" for rep, n in l]
for (i, m, np_), l in sorted(failed.items()):
    bad += [f"FAILED: {i} {m} np={np_} rep {rep} (exit {rc}; see its .err)" for rep, rc in l]
for line in bad:
    print("  " + line)
if bad:
    print(f"compare_network.sh: {len(bad)} run(s) failed or gave wrong results")
sys.exit(1 if bad else 0)
EOF
rc=$?
echo "# total time: $(( $(date +%s) - START ))s; raw JSON in $OUT"
exit "$rc"
