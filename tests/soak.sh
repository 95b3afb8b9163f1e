#!/usr/bin/env bash
# tests/soak.sh - a soak test, run by hand (not in CI): for DURATION
# seconds, job after job of random collectives, sizes and communicators
# (tests/soak/soak_worker.cc) on 2-6 ranks, one node or several fake ones,
# with the default transports or tcp everywhere, and in about one job in
# three a rank killed at a random call. Prints a line per job and a summary.
#
#   tests/soak.sh [DURATION_S [BUILD_DIR]]      (default 300 s, build/)
#
# A job passes when every rank completes with right results, or, when a
# rank was killed, when smdrun names the victim as killed by SIGKILL and
# every survivor ends on its own within smdrun's grace period (2x
# SMD_TIMEOUT and a margin: the bound docs/RELIABILITY.md gives for a dead
# peer) with its SOAK line and no wrong result. A survivor that smdrun had
# to stop after the grace, or a hang (--timeout), is a failure.
# Every job gets SMD_TIMEOUT=20 and its own SMD_DUMP_DIR; the dumps of
# failed jobs are kept under the summary's directory for smd-info flight.
# Exit status: 0 if every job passed. SOAK_SEED fixes the sequence.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
duration="${1:-300}"
build="${2:-$root/build}"
smdrun="$build/tools/smdrun"
worker="$build/tests/soak/soak_worker"
[[ -x "$smdrun" && -x "$worker" ]] || { echo "soak: build first (ninja -C $build)"; exit 2; }
out="$(mktemp -d "${TMPDIR:-/tmp}/smd-soak.XXXXXX")"
RANDOM="${SOAK_SEED:-$$}"
start=$SECONDS jobs=0 passed=0 killed=0 failed=0 calls=0

while (( SECONDS - start < duration )); do
  jobs=$((jobs + 1))
  n=$((2 + RANDOM % 5))
  nodes=1
  if (( RANDOM % 2 )); then
    # smdrun places ranks in blocks of ceil(n/k), which can fill fewer than
    # k nodes (it refuses those): take the count the blocks do fill.
    k=$((1 + RANDOM % n)) block=$(( (n + k - 1) / k )); nodes=$(( (n + block - 1) / block ))
  fi
  transport=auto; (( RANDOM % 4 == 0 )) && transport=tcp
  seed=$RANDOM iters=$((20 + RANDOM % 200))
  victim=-1 kill_at=0
  if (( RANDOM % 3 == 0 )); then victim=$((RANDOM % n)); kill_at=$((RANDOM % iters)); killed=$((killed + 1)); fi
  job="$out/job$jobs"
  mkdir -p "$job"
  SMD_TIMEOUT=20 SMD_DUMP_DIR="$job" SMD_TRANSPORT=$transport \
    "$smdrun" -n "$n" --nodes "$nodes" --timeout 120 --grace 45 "$worker" "$seed" "$iters" "$victim" "$kill_at" \
    > "$job/out" 2>&1
  rc=$?
  got=$(grep -o 'calls [0-9]*' "$job/out" | awk '{s += $2} END {print s + 0}')
  calls=$((calls + got))
  verdict=FAIL
  if grep -q "result WRONG" "$job/out"; then
    verdict=FAIL-WRONG-RESULT
  elif [[ $rc -eq 124 ]]; then
    verdict=FAIL-HANG
  elif [[ $victim -lt 0 && $rc -eq 0 ]]; then
    verdict=pass
  elif [[ $victim -ge 0 && ( $rc -eq 137 || $rc -eq 3 ) ]]; then
    # Judged on the survivors, not on the victim's own exit status.
    survivors=$(grep -c '^\[[0-9]*\] SOAK rank [0-9]* calls' "$job/out")
    if ! grep -q "smdrun: rank $victim (pid [0-9]*) was killed by signal 9" "$job/out"; then
      verdict=FAIL-VICTIM-NOT-KILLED
    elif grep -q "grace period over" "$job/out" || (( survivors != n - 1 )); then
      verdict=FAIL-SURVIVOR-STOPPED-BY-SMDRUN
    else
      verdict=pass
    fi
  fi
  printf 'job %d: np %d nodes %d transport %s seed %d calls %d victim %d@%d exit %d: %s\n' \
    "$jobs" "$n" "$nodes" "$transport" "$seed" "$iters" "$victim" "$kill_at" "$rc" "$verdict"
  if [[ $verdict == pass ]]; then
    passed=$((passed + 1))
    rm -rf "$job"
  else
    failed=$((failed + 1))
    tail -n 5 "$job/out" | sed 's/^/    /'
  fi
done

echo "soak: $jobs jobs in $((SECONDS - start)) s ($killed with a rank killed), $calls calls completed," \
  "$passed passed, $failed failed"
[[ $failed -eq 0 ]] && rm -rf "$out" || echo "soak: the failed jobs' output and flight dumps are in $out"
[[ $failed -eq 0 ]]
