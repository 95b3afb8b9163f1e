#!/usr/bin/env bash
# bench/python_call_cost.sh: what one small call costs from Python, smd
# beside mpi4py (Open MPI), in one run on this machine: 2 ranks, an 8-byte
# allreduce (one float64) and a barrier, best of REPS loops of CALLS calls,
# for smd's default (interruptible) communicator, smd with
# interruptible=False, smd with a SIGINT handler of the program's (the wait
# in slices, the default before smd_set_interrupt_fd), and mpi4py; plus smd's cost per queued allreduce in a
# group of 100. Implementations alternate over ROUNDS rounds; the table keeps
# each one's best. Prints the CPU, load and a memory-bandwidth probe first.
#
# usage: bench/python_call_cost.sh [--build DIR] [--calls N] [--reps R] [--rounds K]
#   --build DIR   smd's meson build directory (default build/), with libsmd,
#                 the shm plugin and smdrun built
# Environment: PYTHON (default python3) must import numpy, and mpi4py for
# its column (Debian: python3-mpi4py); without mpi4py that column is n/a.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/machine.sh
source "$ROOT/bench/machine.sh"
BUILD="$ROOT/build" CALLS=20000 REPS=5 ROUNDS=2
PY=${PYTHON:-python3}
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift ;;
    --calls) CALLS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    *) echo "python_call_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
WORKER="$ROOT/bench/python_call_cost.py"
ARGS=(--calls "$CALLS" --reps "$REPS")
export SMD_LIBRARY="$BUILD/src/libsmd.so" SMD_PLUGIN_PATH="$BUILD/src/plugins/shm"
export PYTHONPATH="$ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
# The compiled fast path this build made (smd/_fast.py); "smd-cffi" runs without it.
FASTCALL=$(ls "$BUILD"/bindings/python/_fastcall*.so 2>/dev/null | head -1)
export SMD_PY_FASTCALL="${FASTCALL:-0}"
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT

echo "# $(machine_line)"
membw=$(mktemp -d)
if ${CC:-cc} -O3 -march=native -pthread "$ROOT/bench/membw.c" -o "$membw/membw" 2>/dev/null; then
  echo "# membw: $("$membw/membw" --min-time 0.05 --reps 3 2>&1 | tr '\n' ' ' | cut -c1-300)"
else
  echo "# membw: build failed"
fi
rm -rf "$membw"

HAVE_MPI4PY=0
MPIRUN=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader)
if [ "$(id -u)" = 0 ]; then  # containers run as root
  MPIRUN+=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
"$PY" -c 'import mpi4py' 2>/dev/null && command -v mpirun >/dev/null && HAVE_MPI4PY=1
for round in $(seq "$ROUNDS"); do
  echo "# round $round/$ROUNDS"
  if [ "$HAVE_MPI4PY" = 1 ]; then
    timeout -k 5 300 "${MPIRUN[@]}" -np 2 "$PY" "$WORKER" --impl mpi4py "${ARGS[@]}" >> "$RESULTS" || echo "# mpi4py run failed"
  fi
  for impl in smd smd-cffi smd-blocking smd-sliced; do
    fast=$SMD_PY_FASTCALL
    [ "$impl" = smd-cffi ] && fast=0
    SMD_PY_FASTCALL=$fast timeout -k 5 300 "$BUILD/tools/smdrun" -n 2 "$PY" "$WORKER" \
      --impl "$impl" "${ARGS[@]}" >> "$RESULTS" || echo "# $impl run failed"
  done
done
"$PY" - "$RESULTS" <<'PYEOF'
import collections, json, sys
best = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    if "{" in line:  # smdrun tags lines with "[rank] "
        r = json.loads(line[line.index("{"):])
        cell = best[r["impl"]]
        cell[r["call"]] = min(cell.get(r["call"], float("inf")), r["us"])
calls = ["allreduce_8B", "barrier", "group_allreduce_8B"]
ref = best.get("mpi4py", {})
print("| us per call (best) | " + " | ".join(calls) + " |")
print("|---|" + "---|" * len(calls))
for impl in ["mpi4py", "smd", "smd-cffi", "smd-blocking", "smd-sliced"]:
    cells = []
    for c in calls:
        v = best.get(impl, {}).get(c)
        if v is None:
            cells.append("n/a")
        elif c in ref and impl != "mpi4py":
            cells.append(f"{v:.2f} ({v / ref[c]:.1f}x)")
        elif c.startswith("group_") and "allreduce_8B" in ref:
            cells.append(f"{v:.2f} ({v / ref['allreduce_8B']:.1f}x mpi4py allreduce)")
        else:
            cells.append(f"{v:.2f}")
    print(f"| {impl} | " + " | ".join(cells) + " |")
PYEOF
