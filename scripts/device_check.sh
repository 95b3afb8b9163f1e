#!/usr/bin/env bash
# What the GPU machine checks when a session is lent one (docs/GPU.md "Left
# for a GPU machine", and issue 17's second machine: its many-core host).
# That machine has nvcc, meson, ninja and Python but none of Debian's
# packages, and a device command may run 10 minutes: so the work is cut in
# stages, each one command, each writing what it found under $OUT (the
# device tool brings that folder back) or build-dev/device-results.
#
#   scripts/device_check.sh build            core, shm and the CUDA parts into build-dev/
#   scripts/device_check.sh gpu              the gpu test suite and the kernel benchmark
#   scripts/device_check.sh host [NPS] [REPS] [MAX]
#                                            the host's facts, the node calibration at
#                                            np=2 (values and staging probe), then
#                                            bench/auto_vs_forced.sh (default "2 4", 3, 64M;
#                                            issue 17 asks for 2 4 8 16)
#   scripts/device_check.sh python           a ctypes build of the binding and its suite
#
# Every stage prints what it runs; the exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-dev
RESULTS=${OUT:-$BUILD/device-results}
mkdir -p "$RESULTS"
status=0

say() { echo "# $(date -u +%H:%M:%S) $*"; }
# run NAME CMD...: runs CMD, its output also to RESULTS/NAME.log.
run() {
  local name=$1
  shift
  say "$name: $*"
  "$@" 2>&1 | tee "$RESULTS/$name.log"
  local rc=${PIPESTATUS[0]}
  [[ $rc == 0 ]] || { say "$name failed (exit $rc)"; [[ $status == 0 ]] && status=$rc; }
  return "$rc"
}

build() {
  [[ -f $BUILD/build.ninja ]] ||
    run setup meson setup "$BUILD" -Dtests=disabled -Dpython=disabled -Drust=disabled \
      -Dtorch=disabled -Djax=disabled -Ducx=disabled -Defa=disabled -Dhwloc=disabled \
      -Dcuda=enabled || return
  run ninja ninja -C "$BUILD"
}

gpu() {
  [[ -f $BUILD/build.ninja ]] || build || return
  run gpu-suite meson test -C "$BUILD" --suite gpu --print-errorlogs
  [[ -x $BUILD/bench/gpu/gpu-kernel-bench ]] && run gpu-kernel-bench "$BUILD/bench/gpu/gpu-kernel-bench"
  nvidia-smi >"$RESULTS/nvidia-smi.txt" 2>&1
}

host() {
  local nps=${1:-2 4} reps=${2:-3} max=${3:-64M}
  [[ -f $BUILD/build.ninja ]] || build || return
  {
    lscpu
    echo
    nproc
    free -g
  } >"$RESULTS/host.txt" 2>&1
  grep -E 'Model name|^CPU\(s\)|L1d|L2|L3|NUMA node\(s\)' "$RESULTS/host.txt"
  if cc -O3 -march=native -pthread bench/membw.c -o "$BUILD/membw" 2>"$RESULTS/membw-build.log"; then
    run membw "$BUILD/membw"
  fi
  # The node calibration measured afresh, with the staging probe's timings.
  local dir
  dir=$(mktemp -d)
  SMD_RENDEZVOUS_DIR=$dir SMD_CALIBRATE=force SMD_DEBUG=trace \
    SMD_PLUGIN_PATH="$BUILD/src/plugins/shm" "$BUILD/tools/smdrun" -n 2 --bind-to core \
    "$BUILD/tools/smd-bench" allreduce -b 8 -e 8 -n 1 -w 0 2>&1 | grep 'calibrate' |
    tee "$RESULTS/calibration.log"
  rm -rf "$dir"
  run auto-vs-forced bench/auto_vs_forced.sh "$BUILD" "$reps" "$nps" "$max"
}

python_stage() {
  local b=$ROOT/build-py
  [[ -f $b/build.ninja ]] ||
    run setup-py meson setup "$b" -Dtests=disabled -Drust=disabled -Dtorch=disabled -Ducx=disabled \
      -Defa=disabled -Dhwloc=disabled -Dpython=enabled -Djax=auto -Dcuda=enabled || return
  run ninja-py ninja -C "$b" || return
  run python-suite meson test -C "$b" --suite python --print-errorlogs
}

case ${1:-} in
  build) build ;;
  gpu) gpu ;;
  host) shift; host "$@" ;;
  python) python_stage ;;
  *)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
say "results in $RESULTS (exit $status)"
exit "$status"
