#!/usr/bin/env bash
# What the GPU machine checks when a session is lent one (docs/GPU.md "Left
# for a GPU machine", and issue 17's second machine: its many-core host).
# That machine has nvcc, meson, ninja and Python but none of Debian's
# packages, and a device command may run 10 minutes: so the work is cut in
# stages, each one command, each writing what it found under $OUT (the
# device tool brings that folder back) or build-dev/device-results.
#
#   scripts/device_check.sh run [--standin]  the one call of a device session (under 8 minutes):
#                                            only the targets the GPU checks need, the
#                                            gpu suite, the kernel benchmark, the c10d
#                                            backend's CUDA tensor test (stage torch-cuda,
#                                            with python3's torch), and
#                                            $OUT/report.md (stages, tests, benchmark table);
#                                            --standin rehearses it without a GPU over the
#                                            host stand-in for CUDA (suite gpu-standin)
#   scripts/device_check.sh build            core, shm and the CUDA parts into build-dev/
#   scripts/device_check.sh gpu              the gpu test suite and the kernel benchmark
#   scripts/device_check.sh host [NPS] [REPS] [MAX]
#                                            the host's facts, the node calibration at
#                                            np=2 (values and staging probe), then
#                                            bench/auto_vs_forced.sh (default "2 4", 3, 64M;
#                                            issue 17 asks for 2 4 8 16)
#   scripts/device_check.sh python           a ctypes build of the binding and its suite
#   scripts/device_check.sh pack             (here, before the device call) copies the
#                                            header-only libraries the tools build against
#                                            (nlohmann-json, CLI11) into .device-deps/, which
#                                            the device call carries: run(..., carry=[".device-deps"])
#
# Every stage prints what it runs; the exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-dev
RESULTS=${OUT:-$BUILD/device-results}
mkdir -p "$RESULTS"
status=0

# The GPU machine has no Debian packages: the header-only ones come in the
# carried .device-deps/ (see pack), found by the compiler itself (meson.build
# looks there when pkg-config does not know them).
[[ -d $ROOT/.device-deps/include ]] &&
  export CPLUS_INCLUDE_PATH="$ROOT/.device-deps/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"

pack() {
  local dest=$ROOT/.device-deps/include dir
  rm -rf "$ROOT/.device-deps"
  mkdir -p "$dest"
  for dir in nlohmann CLI; do
    [[ -d /usr/include/$dir ]] || { echo "pack: /usr/include/$dir missing (scripts/lib.sh installs it)" >&2; return 1; }
    cp -r "/usr/include/$dir" "$dest/"
  done
  du -sh "$ROOT/.device-deps"
}

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

# The targets the GPU checks need, nothing else (no GoogleTest there).
DEVICE_TARGETS=(smd smd-transport-shm smd-transport-tcp smdrun smd-info smd-gpu gpu-kernels-test
  gpu-collectives-test gpu-streams-test gpu-ipc-test gpu-kernel-bench gpu-allreduce-bench
  cuda-abi-check)
STANDIN_TARGETS=(smd-cuda-standin smd-gpu-standin)
# The c10d backend against the device machine's python3 torch (a CUDA
# build there): its CUDA tensor test runs in stage torch-cuda. Not in the
# rehearsal: no GPU torch here, and a torch build costs minutes on 2 cores.
TORCH_OPTIONS=(-Dtorch=auto -Dtorch_cuda=auto "-Dtorch_python=$(command -v python3)")

# stage NAME LIMIT CMD...: run() under a time limit, its seconds and exit
# status kept for the report.
stage() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  run "$name" timeout "$limit" "$@"
  local rc=$?
  echo "$name $((SECONDS - t0)) $rc" >>"$RESULTS/stages.txt"
  return "$rc"
}

# allreduce_routes MAX_MIB ITERATIONS: the device allreduce of 2 ranks
# sharing the GPU on each route, one smdrun each (bench/gpu/gpu_allreduce_bench.cc).
allreduce_routes() {
  local bench=$BUILD/bench/gpu/gpu-allreduce-bench smdrun=$BUILD/tools/smdrun rc=0
  export SMD_PLUGIN_PATH=$BUILD/src/plugins/shm:$BUILD/src/plugins/tcp
  SMD_GPU_STAGE_CHUNK_BYTES=0 "$smdrun" -n 2 "$bench" "$1" "$2" staged-whole || rc=1
  "$smdrun" -n 2 "$bench" "$1" "$2" staged-chunks || rc=1
  SMD_GPU_IPC=1 "$smdrun" -n 2 "$bench" "$1" "$2" ipc || rc=1
  # Small calls out of place: the IPC allreduce one-shot (up to 64 KiB) and
  # in two phases at every size, beside the staging.
  "$smdrun" -n 2 "$bench" "$1" "$((10 * $2))" staged-chunks small || rc=1
  SMD_GPU_IPC=1 "$smdrun" -n 2 "$bench" "$1" "$((10 * $2))" ipc small || rc=1
  SMD_GPU_IPC=1 SMD_GPU_IPC_ONESHOT_BYTES=0 "$smdrun" -n 2 "$bench" "$1" "$((10 * $2))" \
    ipc-2phase small || rc=1
  return $rc
}

# The stages' limits add up to 465 s, so the report comes back from a
# device command of 8 minutes whatever hangs.
one_call() {
  local standin=${1:-}
  local suite=gpu targets=("${DEVICE_TARGETS[@]}") torch_options=("${TORCH_OPTIONS[@]}")
  : >"$RESULTS/stages.txt"
  if [[ $standin == --standin ]]; then
    # The same programs over the host stand-in: a rehearsal of the build
    # and of the stages, not a check of CUDA.
    # The gpu suite runs too (its tests skip without a device), so a
    # target missing from DEVICE_TARGETS shows here.
    suite=gpu-standin
    targets+=("${STANDIN_TARGETS[@]}")
    torch_options=(-Dtorch=disabled)
    echo "mode: rehearsal over the host stand-in for CUDA (no GPU)" >"$RESULTS/mode.txt"
  elif [[ -n $standin ]]; then
    echo "run: unknown option $standin (only --standin)" >&2
    return 2
  else
    echo "mode: device" >"$RESULTS/mode.txt"
  fi
  if [[ -f $BUILD/build.ninja ]]; then
    # meson compile finds targets by the last configuration's list: bring
    # it up to date with the meson files (and the torch options) first.
    # shellcheck disable=SC2016 # $0 and $@ are bash -c's own arguments
    stage regenerate 50 bash -c 'meson configure "$0" "$@" && ninja -C "$0" build.ninja' \
      "$BUILD" "${torch_options[@]}" || { report; return; }
  else
    stage setup 50 meson setup "$BUILD" -Dtests=disabled -Dpython=disabled -Drust=disabled \
      "${torch_options[@]}" -Djax=disabled -Ducx=disabled -Defa=disabled -Dhwloc=disabled \
      -Dcuda=enabled || { report; return; }
  fi
  # The c10d backend when meson found a CUDA torch (its summary says why
  # not); the extension's target name carries Python's suffix.
  local torch_cuda=0 ext
  if grep -q '"torch-cuda-np2"' "$BUILD/meson-info/intro-tests.json" 2>/dev/null; then
    ext=$(python3 -c 'import json, sys
print(next(t["name"] for t in json.load(open(sys.argv[1])) if t["name"].startswith("_smd_c10d")))' \
      "$BUILD/meson-info/intro-targets.json") && torch_cuda=1 && targets+=("bindings/torch/$ext")
  fi
  stage compile 185 meson compile -C "$BUILD" "${targets[@]}" || { report; return; }
  local suites=(--suite gpu)
  [[ $suite == gpu-standin ]] && suites+=(--suite gpu-standin)
  stage tests 70 meson test -C "$BUILD" --no-rebuild "${suites[@]}" --print-errorlogs
  cp "$BUILD/meson-logs/testlog.json" "$RESULTS/testlog.json" 2>/dev/null
  if ((torch_cuda)); then
    # bindings/torch/tests/test_cuda.py and test_cuda_training.py (DDP,
    # FSDP, FSDP2) at 2 ranks sharing the GPU; its result joins the
    # report's tests, pytest's skip reasons are in the log.
    stage torch-cuda 80 meson test -C "$BUILD" --no-rebuild --suite torch-cuda --print-errorlogs
    cat "$BUILD/meson-logs/testlog.json" >>"$RESULTS/testlog.json" 2>/dev/null
  elif [[ $suite == gpu ]]; then
    {
      echo "torch-cuda: not run, the c10d backend's CUDA path is not built; meson's summary:"
      grep -E '^\s+torch\s+: (on|off)' "$BUILD/meson-logs/meson-log.txt" | tail -n 1
    } | tee "$RESULTS/torch-cuda.log"
  fi
  if [[ $suite == gpu-standin ]]; then
    # The stand-in's kernels are host loops: a short run shows the
    # benchmark works, its numbers mean nothing.
    SMD_CUDA_LIBRARY=$BUILD/tests/gpu/cuda_standin/libsmd-cuda-standin.so \
      SMD_CUDA_DRIVER_LIBRARY=$BUILD/tests/gpu/cuda_standin/libsmd-cuda-standin.so \
      SMD_GPU_MODULE=$BUILD/tests/gpu/cuda_standin/libsmd-gpu-standin.so \
      stage gpu-kernel-bench 60 "$BUILD/bench/gpu/gpu-kernel-bench" 4 2
    SMD_CUDA_LIBRARY=$BUILD/tests/gpu/cuda_standin/libsmd-cuda-standin.so \
      SMD_CUDA_DRIVER_LIBRARY=$BUILD/tests/gpu/cuda_standin/libsmd-cuda-standin.so \
      SMD_GPU_MODULE=$BUILD/tests/gpu/cuda_standin/libsmd-gpu-standin.so \
      stage gpu-allreduce-bench 30 "$0" allreduce-routes 4 2
  else
    SMD_GPU_MODULE=$BUILD/src/gpu/libsmd-gpu.so stage gpu-kernel-bench 40 "$BUILD/bench/gpu/gpu-kernel-bench"
    SMD_GPU_MODULE=$BUILD/src/gpu/libsmd-gpu.so stage gpu-allreduce-bench 30 "$0" allreduce-routes 256 10
    SMD_CUDA=on stage topology 10 "$BUILD/tools/smd-info" topology
    nvidia-smi >"$RESULTS/nvidia-smi.txt" 2>&1
  fi
  report
}

report() {
  python3 "$ROOT/scripts/device_report.py" "$RESULTS" >"$RESULTS/report.md" &&
    say "report: $RESULTS/report.md" && cat "$RESULTS/report.md"
}

case ${1:-} in
  run) shift; one_call "$@" ;;
  build) build ;;
  gpu) gpu ;;
  host) shift; host "$@" ;;
  python) python_stage ;;
  pack) pack || exit 1; exit 0 ;;
  allreduce-routes) shift; allreduce_routes "$@"; exit ;;
  *)
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
say "results in $RESULTS (exit $status)"
exit "$status"
