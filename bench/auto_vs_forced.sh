#!/bin/bash
# Whether the automatic choice holds on the machine at hand: smd-bench with
# the calibrated choice (auto), the documented defaults (SMD_CALIBRATE=off)
# and each algorithm forced (SMD_ALGO), alternated REPS times, the median
# time per size. Prints a markdown table per collective and rank count:
# the algorithm each of auto and off chose, their times, the best forced
# algorithm and how much faster than auto it was (flagged when over 15%).
# A run that fails or prints no result is listed at the end with its last
# lines of output, and makes the exit status 1 (the tables then lack it).
#   bench/auto_vs_forced.sh BUILD_DIR [REPS] [NPS] [MAX_SIZE]
# e.g. bench/auto_vs_forced.sh build 5 "2 4" 64M
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [REPS] [NPS] [MAX_SIZE]}
reps=${2:-5}
nps=${3:-2 4}
max=${4:-64M}
export SMD_PLUGIN_PATH="$build/src/plugins/shm"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
touch "$out/runs"
declare -A forced=([allreduce]="direct ring rd" [allgather]="direct ring rd cma"
                   [reduce_scatter]="direct ring rd cma" [broadcast]="direct ring tree cma")
for ((rep = 0; rep < reps; ++rep)); do
  for np in $nps; do
    for coll in allreduce allgather reduce_scatter broadcast; do
      for mode in auto off ${forced[$coll]}; do
        env=(SMD_CALIBRATE=auto)
        case $mode in
          auto) ;;
          off) env=(SMD_CALIBRATE=off) ;;
          *) env+=(SMD_ALGO="$coll=$mode") ;;
        esac
        status=0
        env "${env[@]}" "$build/tools/smdrun" -n "$np" --timeout 600 \
          "$build/tools/smd-bench" "$coll" -b 8 -e "$max" -f 16 -n 20 -w 3 -c 0 --json \
          >"$out/one" 2>&1 || status=$?
        results=$(grep -o '{.*}' "$out/one" || true)
        if ((status != 0)) || [[ -z $results ]]; then
          { echo "np $np $coll $mode (${env[*]}): exit status $status"; tail -n 5 "$out/one"; } >>"$out/failed"
          continue
        fi
        sed "s/^/$np $coll $mode /" <<<"$results" >>"$out/runs"
      done
    done
  done
done
# Debian's interpreter where there is one (the first python3 on PATH may be
# another); the report needs only the standard library.
py=$(command -v /usr/bin/python3 || command -v python3)
"$py" "$(dirname "${BASH_SOURCE[0]}")/auto_vs_forced_report.py" "$out/runs" "{collective} np={group} (median us)"
if [[ -s $out/failed ]]; then
  echo
  echo "FAILED RUNS:"
  cat "$out/failed"
  exit 1
fi
