#!/bin/sh
# fsdp_step_compare.sh - bench/fsdp_step.py's configurations interleaved,
# so that a shared machine's load weighs on each alike: every repeat runs
# FSDP over smd, FSDP over gloo and smd.torch.ShardedDataParallel in turn,
# each line with the load average at its start; then the medians over the
# repeats of each configuration's median step, their ratios (SDP / FSDP
# over smd, FSDP smd / gloo) and every rank's largest peak RSS growth.
#
#   bench/fsdp_step_compare.sh [REPEATS]        (default 3)
#
# PYTHON (default .venv/bin/python) and SMDRUN (default smdrun) name the
# interpreter and launcher; FSDP_STEP_ARGS is passed to every run.
set -eu
repeats=${1:-3}
py=${PYTHON:-.venv/bin/python}
smdrun=${SMDRUN:-smdrun}
here=$(cd "$(dirname "$0")" && pwd)
lines=""
for rep in $(seq "$repeats"); do
  for config in "smd fsdp" "gloo fsdp" "gloo sdp"; do
    # shellcheck disable=SC2086  # backend and wrapper, split on purpose
    set -- $config
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086  # FSDP_STEP_ARGS is a list of words
    out=$("$smdrun" -n 4 --timeout 600 "$py" "$here/fsdp_step.py" --backend "$1" --wrapper "$2" \
          ${FSDP_STEP_ARGS:-} | sed -n 's/^.*\(fsdp_step backend=\)/\1/p') || out="fsdp_step backend=$1 wrapper=$2 failed"
    line="repeat=$rep load=$load $out"
    echo "$line"
    lines="$lines$line
"
  done
done
printf '%s' "$lines" | "$py" -c '
import json, re, statistics, sys
runs = {}
for line in sys.stdin:
    f = dict(re.findall(r"(\w+)=(\[[^]]*\]|\S+)", line))
    if "median_ms" in f:
        runs.setdefault((f["wrapper"], f["backend"]), []).append(
            (float(f["median_ms"]), max(json.loads(f["peak_rss_growth_mib"])), float(f["load"])))
med = {}
for (wrapper, backend), r in sorted(runs.items()):
    med[wrapper, backend] = statistics.median(t for t, _, _ in r)
    print(f"{wrapper} {backend}: median of {len(r)} medians {med[wrapper, backend]:.1f} ms, "
          f"largest rank peak RSS growth {[m for _, m, _ in r]} MiB, load {[l for _, _, l in r]}")
sdp, fsdp_smd, fsdp_gloo = (med.get(k) for k in (("sdp", "gloo"), ("fsdp", "smd"), ("fsdp", "gloo")))
if sdp and fsdp_smd:
    print(f"SDP / FSDP over smd: {sdp / fsdp_smd:.2f}")
if fsdp_smd and fsdp_gloo:
    print(f"FSDP smd / gloo: {fsdp_smd / fsdp_gloo:.2f}")
'
