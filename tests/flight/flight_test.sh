#!/usr/bin/env bash
# The flight recorder end to end (flight_worker.cc): one rank skips a
# collective, the others time out and dump, smdrun's SIGTERM makes the
# laggard dump too, and `smd-info flight` names it; then ranks disagree
# on a count and `smd-info flight` names the call; then a rank dies of
# SIGSEGV and dumps from the signal handler. Every dump must be
# valid JSON with the fields docs/RELIABILITY.md lists.
# usage: flight_test.sh SMDRUN SMD_INFO FLIGHT_WORKER
set -u
smdrun=$1 info=$2 worker=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "flight_test: $*"; exit 1; }

check_dumps() {  # DIR EXPECTED_COUNT
  local n
  n=$(ls "$1"/smd-flight.*.json 2>/dev/null | wc -l)
  [[ "$n" -eq "$2" ]] || { ls -l "$1"; fail "expected $2 dumps in $1, found $n"; }
  python3 - "$1"/smd-flight.*.json <<'PY' || fail "a dump is not what it should be"
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    for key in ("reason", "world_rank", "comm", "comm_rank", "comm_size", "entries"):
        assert key in d, f"{path}: no {key}"
    for e in d["entries"]:
        for key in ("seq", "kind", "datatype", "op", "count", "root", "algorithm",
                    "state", "start_ns", "end_ns", "result"):
            assert key in e, f"{path}: entry without {key}"
        assert e["state"] in ("queued", "running", "done", "failed"), e
    kinds = [e["kind"] for e in d["entries"]]
    assert kinds[:5] == ["barrier", "allreduce", "allreduce", "allreduce", "broadcast"], (path, kinds)
PY
}

run_case() {  # MODE SMD_TIMEOUT GRACE [EXIT]: the job must exit EXIT (3); its dumps are checked
  mkdir "$dir/$1"
  SMD_DUMP_DIR="$dir/$1" SMD_TIMEOUT=$2 "$smdrun" -n 3 --grace "$3" --timeout 90 "$worker" "$1" \
    > "$dir/$1.out" 2>&1
  local rc=$?
  [[ $rc -eq ${4:-3} ]] || { cat "$dir/$1.out"; fail "$1 run: exit $rc, expected ${4:-3}"; }
  check_dumps "$dir/$1" 3
  "$info" flight "$dir/$1" > "$dir/$1.info" 2>&1 || { cat "$dir/$1.info"; fail "smd-info flight failed"; }
  cat "$dir/$1.info"
}

# 1. A hang: rank 2 never enters call #5.
run_case hang 3 1
grep -q '"reason":"signal 15"' "$dir/hang"/smd-flight.rank2.*.json ||
  fail "rank 2 did not dump on SIGTERM"
grep -q '"reason":"SMD_ERR_TIMEOUT"' "$dir/hang"/smd-flight.rank0.*.json ||
  { cat "$dir/hang"/smd-flight.rank0.*.json; fail "rank 0's dump does not say it timed out"; }
grep -q "laggard: world rank 2 (comm rank 2): last completed #4 broadcast" "$dir/hang.info" ||
  fail "smd-info flight did not name rank 2 as the laggard"
grep -q "mismatched calls: none" "$dir/hang.info" || fail "a mismatch was reported in the hang"

# 2. A mismatch: rank 1 asks for 16 elements in call #5, the others 8.
run_case mismatch 20 5
grep -q "mismatch at call #5: world rank 0 allreduce(float32, sum, count 8, root 0) vs world rank 1 allreduce(float32, sum, count 16, root 0)" \
  "$dir/mismatch.info" || fail "smd-info flight did not name the mismatched call"

# 3. A crash: rank 0 dies of SIGSEGV (smdrun exits 128 + 11) after
#    dumping from the signal handler; the others fail in call #5.
# (AddressSanitizer's own SIGSEGV handler, which ours passes the signal
# to, would end the process with exit 1 instead: leave SIGSEGV alone.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" run_case crash 20 5 139
grep -q '"reason":"signal 11"' "$dir/crash"/smd-flight.rank0.*.json ||
  fail "rank 0 did not dump on SIGSEGV"
grep -q "laggard: world rank 0 (comm rank 0)" "$dir/crash.info" ||
  fail "smd-info flight did not name rank 0 as the laggard"

# 4. Off: SMD_FLIGHT_RECORDER=0 writes nothing.
mkdir "$dir/off"
SMD_FLIGHT_RECORDER=0 SMD_DUMP_DIR="$dir/off" "$smdrun" -n 3 --grace 5 --timeout 90 "$worker" mismatch \
  > /dev/null 2>&1
[[ -z "$(ls -A "$dir/off")" ]] || fail "SMD_FLIGHT_RECORDER=0 still dumped"
echo "flight_test: ok"
