#!/usr/bin/env bash
# scripts/test.sh - install what is missing, build, and run every registered
# test (README.md, "Two commands", lists what skips here and why):
# the normal build (build/) with all suites, heavy variants included
# (SMD_TEST_HEAVY=1: see tests/heavy_only.sh), then a sanitizer build
# (build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer) with every
# suite but the slowest multi-process variants (suite 'slow').
#
# Then the torch 2.x suites: scripts/lib.sh makes .venv (the newest
# torch 2.x, light install: docs/TORCH.md) unless it is ready, and
# build-torch2/ builds the same backend sources against it; its suite
# 'torch' runs there too (build/'s ran under Debian's torch 1.13). Offline
# without .venv, or with SMD_NO_TORCH2=1, this part is skipped with a
# message.
#
# Then the hardening tools: the libFuzzer targets (tests/fuzz/run.sh:
# the store protocol, rank records, plugin address blobs and configuration
# parsers, built with clang++ from those sources alone into build-fuzz/,
# SMD_FUZZ_SECONDS each, 30 by default), and a ThreadSanitizer build
# (tests/tsan.sh, build-tsan/) of only the executor and thread-world tests.
# Together about 4-5 minutes on a 2-core machine.
#
# Environment: SMD_NO_INSTALL=1 (never install), SMD_NO_TORCH2=1 (skip the
# torch 2.x suites), SMD_NO_SANITIZE=1 (skip
# the sanitizer build), SMD_NO_FUZZ=1 (skip the fuzzers), SMD_NO_TSAN=1
# (skip the ThreadSanitizer build), SMD_TEST_HEAVY=0 (skip the heavy variants, about
# 2.5 minutes of the normal build's run on a 2-core machine), SMD_JOBS=N
# (build jobs), SMD_TEST_ARGS (extra arguments for `meson test`, e.g.
# "--suite coll").
#
# SMD_TEST_STRESS=1 adds two runs of the normal build's suite after the
# first, to show that no test depends on the machine's speed: one pinned to
# CPU 0 (`taskset -c 0`), and one pinned there beside two busy-looping
# processes on the same CPU (started here, killed when the run ends, however
# it ends). Meson's time limits are tripled for these runs (every process
# gets a third of one CPU); the tests' own deadlines are left as they are.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SMD_ROOT"

start=$(date +%s)
smd_log_section "dependencies"
smd_install_deps

# .venv first: build/ finds jax there (suite jax) and the wheel test uses
# its meson-python (suite wheel); the torch 2.x section below reuses it.
if [[ "${SMD_NO_TORCH2:-0}" != "1" ]]; then
  smd_log_section ".venv (torch 2.x, jax, meson-python)"
  smd_setup_torch2_venv || true
fi

smd_log_section "build (build/)"
smd_configure_build build
smd_build build

# Shared memory must come back clean: remember what /dev/shm held.
shm_before="$(ls -A /dev/shm 2>/dev/null | sort || true)"

smd_log_section "tests (build/)"
export SMD_TEST_HEAVY="${SMD_TEST_HEAVY:-1}"
# shellcheck disable=SC2086
meson test -C build --print-errorlogs ${SMD_TEST_ARGS:-}

if [[ "${SMD_TEST_STRESS:-0}" == "1" ]]; then
  command -v taskset >/dev/null || smd_die "SMD_TEST_STRESS=1 needs taskset (util-linux)"
  smd_log_section "stress: tests (build/) pinned to CPU 0"
  # shellcheck disable=SC2086
  taskset -c 0 meson test -C build --print-errorlogs --timeout-multiplier 3 ${SMD_TEST_ARGS:-}

  smd_log_section "stress: tests (build/) on CPU 0 beside two busy loops"
  busy_pids=()
  stop_busy() {
    local pid
    for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${busy_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    busy_pids=()
  }
  # A failing run ends the script (set -e), and so does a signal: the EXIT
  # trap runs either way.
  trap stop_busy EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  for _ in 1 2; do
    taskset -c 0 sh -c 'while :; do :; done' &
    busy_pids+=("$!")
  done
  # shellcheck disable=SC2086
  taskset -c 0 meson test -C build --print-errorlogs --timeout-multiplier 3 ${SMD_TEST_ARGS:-}
  stop_busy
  trap - EXIT INT TERM
fi

if [[ "${SMD_NO_TORCH2:-0}" != "1" ]]; then
  smd_log_section "torch 2.x (.venv, build-torch2/)"
  if smd_setup_torch2_venv; then
    smd_configure_torch2_build build-torch2
    smd_build build-torch2
    meson test -C build-torch2 --print-errorlogs --suite torch
  fi
fi

if [[ "${SMD_NO_SANITIZE:-0}" != "1" ]]; then
  smd_log_section "sanitizer build (build-asan/: address + undefined behaviour)"
  # -O1 -g1: what ASan recommends, and about 2.5x quicker to compile than
  # -O2 -g (the sanitizer build was half of CI's time); -g1 keeps the line
  # numbers of reports.
  smd_configure_build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=plain -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 \
    -Dcuda=disabled -Dpython=disabled -Drust=disabled -Dtorch=disabled -Djax=disabled
  smd_build build-asan
  smd_log_section "tests (build-asan/)"
  # Leaks are errors; UBSan findings stop the test that triggers them.
  # intercept_tls_get_addr=0: LeakSanitizer's record of the dynamic
  # thread-local blocks of dlopened libraries (UCX's, via the ucx plugin)
  # came out corrupt with this toolchain, and its exit scan crashed on it
  # ("Tracer caught signal 11", after every test had passed); static TLS,
  # stacks and the heap are still scanned.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:intercept_tls_get_addr=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # shellcheck disable=SC2086
  meson test -C build-asan --print-errorlogs --no-suite slow ${SMD_TEST_ARGS:-}
fi

if [[ "${SMD_NO_FUZZ:-0}" != "1" ]]; then
  smd_log_section "fuzzers (build-fuzz/: libFuzzer, ${SMD_FUZZ_SECONDS:-30} s each)"
  if command -v clang++ >/dev/null; then
    tests/fuzz/run.sh "${SMD_FUZZ_SECONDS:-30}"
  else
    smd_log "clang++ not found: fuzzers skipped (install clang and libclang-rt-14-dev)"
  fi
fi

if [[ "${SMD_NO_TSAN:-0}" != "1" ]]; then
  smd_log_section "ThreadSanitizer (build-tsan/: executor and thread-world tests)"
  SMD_JOBS="${SMD_JOBS:-$(nproc)}" tests/tsan.sh
fi

shm_after="$(ls -A /dev/shm 2>/dev/null | sort || true)"
if [[ "$shm_before" != "$shm_after" ]]; then
  smd_die "the tests left files in /dev/shm: $(comm -13 <(echo "$shm_before") <(echo "$shm_after") | tr '\n' ' ')"
fi

smd_log_section "all tests passed in $(( $(date +%s) - start )) s"
