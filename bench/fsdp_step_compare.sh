#!/bin/sh
# fsdp_step_compare.sh - bench/fsdp_step.py's configurations interleaved,
# so that a shared machine's load weighs on each alike: every repeat runs
# FSDP over smd, FSDP over gloo and smd.torch.ShardedDataParallel in turn,
# each line with the load average at its start; then the medians over the
# repeats of each configuration's median step and of its median CPU time
# per step (every thread of every rank: the work, which load delays but
# does not add to), their ratios (SDP / FSDP over smd, FSDP smd / gloo;
# the median's and each repeat's) and every rank's largest peak RSS growth.
#
#   bench/fsdp_step_compare.sh [REPEATS]        (default 3)
#
# PYTHON (default .venv/bin/python) and SMDRUN (default smdrun) name the
# interpreter and launcher; FSDP_STEP_ARGS is passed to every run;
# FSDP_STEP_CONFIGS lists the BACKEND:WRAPPER runs of a repeat (default
# "smd:fsdp gloo:fsdp gloo:sdp").
set -eu
repeats=${1:-3}
py=${PYTHON:-.venv/bin/python}
smdrun=${SMDRUN:-smdrun}
here=$(cd "$(dirname "$0")" && pwd)
lines=""
for rep in $(seq "$repeats"); do
  for config in ${FSDP_STEP_CONFIGS:-smd:fsdp gloo:fsdp gloo:sdp}; do
    backend=${config%%:*} wrapper=${config#*:}
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086  # FSDP_STEP_ARGS is a list of words
    out=$("$smdrun" -n 4 --timeout 600 "$py" "$here/fsdp_step.py" --backend "$backend" --wrapper "$wrapper" \
          ${FSDP_STEP_ARGS:-} | sed -n 's/^.*\(fsdp_step backend=\)/\1/p') || out="fsdp_step backend=$backend wrapper=$wrapper failed"
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
            (float(f["median_ms"]), float(f.get("cpu_ms", "nan")),
             max(json.loads(f["peak_rss_growth_mib"])), float(f["load"])))
med, cpu = {}, {}
for (wrapper, backend), r in sorted(runs.items()):
    med[wrapper, backend] = statistics.median(t for t, _, _, _ in r)
    cpu[wrapper, backend] = statistics.median(c for _, c, _, _ in r)
    print(f"{wrapper} {backend}: median of {len(r)} medians {med[wrapper, backend]:.1f} ms, "
          f"CPU {cpu[wrapper, backend]:.1f} ms, "
          f"largest rank peak RSS growth {[m for _, _, m, _ in r]} MiB, load {[l for _, _, _, l in r]}")
pairs = (("SDP / FSDP over smd", ("sdp", "gloo"), ("fsdp", "smd")),
         ("FSDP smd / gloo", ("fsdp", "smd"), ("fsdp", "gloo")))
for name, a, b in pairs:
    if a in med and b in med:
        each = " ".join(f"{x[0] / y[0]:.2f}" for x, y in zip(runs[a], runs[b]))
        each_cpu = " ".join(f"{x[1] / y[1]:.2f}" for x, y in zip(runs[a], runs[b]))
        print(f"{name}: wall {med[a] / med[b]:.2f} (per repeat {each}), "
              f"CPU {cpu[a] / cpu[b]:.2f} (per repeat {each_cpu})")
'
