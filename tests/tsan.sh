#!/usr/bin/env bash
# tests/tsan.sh - ThreadSanitizer build of the thread and executor tests:
# configures build-tsan/ (-Db_sanitize=thread) and builds only what they
# need (libsmd, the shm and tcp plugins, test_core_units for the executor
# tests, coll_threads_test for collectives with ranks as threads,
# sole_user_test for a communicator shared by threads), then runs the
# executor tests, the sole-user tests at 2 ranks and the thread worlds of
# up to 16 ranks with every algorithm (the 33 and 64 rank worlds take minutes under TSan on two cores:
# tests/tsan.sh all runs them too). A race fails the run
# (halt_on_error); tests/tsan.supp lists the justified suppressions.
#
#   tests/tsan.sh [all]      BUILD_TSAN=dir overrides build-tsan/
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${BUILD_TSAN:-$root/build-tsan}"
jobs="${SMD_JOBS:-$(nproc)}"
if [[ ! -f "$out/build.ninja" ]]; then
  meson setup "$out" "$root" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=plain \
    -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 -Dcuda=disabled -Dpython=disabled \
    -Drust=disabled -Dtorch=disabled -Ducx=disabled -Defa=disabled > "$out.setup.log" 2>&1 ||
    { cat "$out.setup.log"; exit 1; }
fi
ninja -C "$out" -j "$jobs" src/plugins/shm/libsmd-transport-shm.so \
  src/plugins/tcp/libsmd-transport-tcp.so tests/util/test_core_units tests/threads/coll_threads_test \
  tools/smdrun tests/coll/sole_user_test

export SMD_PLUGIN_PATH="$out/src/plugins/shm:$out/src/plugins/tcp"
export LD_LIBRARY_PATH="$out/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tests/tsan.supp"
export GTEST_COLOR=no
filter='NoLeaks.*:*_np1:*_np5:*_np7:*_np16'
[[ "${1:-}" == all ]] && filter='*'
"$out/tests/util/test_core_units" --gtest_filter='Executor.*:Params.*'
"$out/tests/threads/coll_threads_test" --gtest_filter="$filter"
# A communicator handed between threads, used by two at once, destroyed by
# another thread (the lock-free calls of src/core/exec/sole_user.h).
"$out/tools/smdrun" -n 2 --timeout 300 "$out/tests/coll/sole_user_test"
echo "tsan: no races"
