#!/usr/bin/env bash
# tests/fuzz/run.sh - builds the libFuzzer targets (clang++ with
# -fsanitize=fuzzer,address,undefined) from the decoder and parser sources
# alone, then runs each for a bounded time from its seed corpus.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     (default 30 s each, all targets)
#
# Targets: store_protocol (the TCP store's frames), rank_record (the rank
# records of the rendezvous), address (the tcp/ucx/efa plugins' address
# blobs), params (SMD_* values through the registry, SMD_ALGO,
# SMD_TUNING_FILE, rank-group placements, CPU lists).
#
# Objects and binaries go to build-fuzz/ (BUILD_FUZZ overrides); the
# corpus a run grows goes to build-fuzz/corpus/TARGET, seeded from
# tests/fuzz/corpus/TARGET, which stays as committed. A crash leaves
# crash-* (the input) in build-fuzz/ and fails the script. Longer runs by
# hand: tests/fuzz/run.sh 3600 params; reproduce one input with
# build-fuzz/fuzz_params build-fuzz/crash-...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${BUILD_FUZZ:-$root/build-fuzz}"
seconds="${1:-30}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(store_protocol rank_record address params)
cxx="${CXX_FUZZ:-clang++}"
cc="${CC_FUZZ:-clang}"
command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found (install clang)"; exit 1; }

mkdir -p "$out/obj" "$out/corpus"
# The build configuration the core's sources include: no optional library.
cat > "$out/smd_build_config.h" <<'H'
#pragma once
#define SMD_HAVE_CUDA 0
#define SMD_HAVE_HWLOC 0
#define SMD_PLUGIN_INSTALL_DIR ""
#define SMD_VERSION_STRING "fuzz"
H
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -O1 -g1 -ffunction-sections -fdata-sections)
inc=(-I"$root/include" -I"$root/src" -I"$root/src/plugins" -I"$out")

declare -A sources=(
  [store_protocol]="src/core/bootstrap/store_protocol.cc"
  [rank_record]="src/core/comm/topology.cc src/core/comm/cpu_binding.cc src/core/util/params.cc src/core/util/log.cc"
  [address]="examples/plugin-template/address.c examples/plugin-template/interface.c examples/plugin-template/wire.c src/plugins/ucx/address.cc src/plugins/efa/address.cc"
  [params]="src/core/util/params.cc src/core/util/log.cc src/core/coll/select/algo_config.cc src/core/coll/select/cost_model.cc src/core/coll/select/cost_file.cc src/core/coll/calibrate/calibration.cc src/core/coll/calibrate/calibration_cache.cc src/core/coll/algorithms/blocks/stream_copy.cc src/core/groups/layout.cc src/core/comm/cpu_binding.cc tests/fuzz/no_rows.cc"
)
common="src/core/util/error.cc src/core/util/safe_file.cc src/core/util/byte_codec.cc"

# One object per source, rebuilt only when the source is newer.
object() {
  local src=$1 obj="$out/obj/$(echo "$1" | tr / _).o"
  if [[ ! -f "$obj" || "$root/$src" -nt "$obj" ]]; then
    if [[ "$src" == *.c ]]; then
      "$cc" -std=gnu11 "${san[@]}" -fsanitize=fuzzer-no-link "${inc[@]}" -c "$root/$src" -o "$obj"
    else
      "$cxx" -std=c++20 "${san[@]}" -fsanitize=fuzzer-no-link "${inc[@]}" -c "$root/$src" -o "$obj"
    fi
  fi
  echo "$obj"
}

status=0
for t in "${targets[@]}"; do
  [[ -n "${sources[$t]:-}" ]] || { echo "fuzz: unknown target $t"; exit 2; }
  objs=()
  common_srcs=$common
  [[ $t == address ]] && common_srcs=""
  for s in ${sources[$t]} $common_srcs; do objs+=("$(object "$s")"); done
  "$cxx" -std=c++20 "${san[@]}" -fsanitize=fuzzer "${inc[@]}" "$root/tests/fuzz/fuzz_$t.cc" \
    "${objs[@]}" -Wl,--gc-sections -o "$out/fuzz_$t"
  mkdir -p "$out/corpus/$t"
  echo "== fuzz_$t for ${seconds} s"
  if ! (cd "$out" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "./fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "corpus/$t" "$root/tests/fuzz/corpus/$t" 2>&1 | tail -n 25); then
    status=1
  fi
  if compgen -G "$out/crash-*" > /dev/null || compgen -G "$out/leak-*" > /dev/null ||
     compgen -G "$out/timeout-*" > /dev/null; then
    echo "fuzz: fuzz_$t found a problem: $(ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* 2>/dev/null)"
    status=1
  fi
done
exit $status
