#!/usr/bin/env bash
# bench/tcp_duplex.sh: both directions of a link at once over smd's tcp
# transport against plain sockets (docs/SCALE.md, issue 32). Two network
# namespaces joined by a veth shaped by tc tbf (or bare: --rate unshaped),
# one rank in each; per size, ROUNDS alternating runs of
#   - plain sockets sending SIZE/2 bytes each way at once
#     (bench/duplex_sockets.py, one connection per direction as smd's),
#   - smd-bench COLLECTIVE -b SIZE -e SIZE -n ITERS over SMD_TRANSPORT
#     with each --plugin's tcp plugin (a 2-rank allgather of SIZE sends
#     SIZE/2 each way),
# and prints the median over the rounds of each run's mean time per call,
# its ratio to the wire time of SIZE/2 bytes at the rate, and the range.
#
# usage: sudo bench/tcp_duplex.sh [--rate-gbit G|--rate unshaped]
#          [--burst-ms T] [--sizes "1M 4M 16M"] [--rounds R] [--iters N]
#          [--collective C] [--transport T] [--build DIR]
#          [--plugin LABEL=DIR]...
#   --plugin  a folder holding libsmd-transport-tcp.so (and, for shm+tcp,
#             libsmd-transport-shm.so); repeat to compare builds, e.g. a
#             copy of the previous build's plugins as before=DIR. Default:
#             this build's, as "smd".
# Needs root (network namespaces), ip and tc (iproute2), python3.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build"
RATE=1
BURST_MS=4
SIZES="1M 4M 16M"
ROUNDS=5
ITERS=5
COLL=allgather
TRANSPORT=tcp
PLUGINS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rate-gbit) RATE=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --burst-ms) BURST_MS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --iters) ITERS=$2; shift ;;
    --collective) COLL=$2; shift ;;
    --transport) TRANSPORT=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --plugin) PLUGINS+=("$2"); shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#PLUGINS[@]} -gt 0 ] || PLUGINS=("smd=$BUILD/src/plugins/tcp:$BUILD/src/plugins/shm")
[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)" >&2; exit 77; }

tag=$$
ns=("smddxA$tag" "smddxB$tag")
veth=("smddxa$tag" "smddxb$tag")
addr=(10.213.0.1 10.213.0.2)
work=$(mktemp -d)
cleanup() {
  ip netns del "${ns[0]}" 2>/dev/null
  ip netns del "${ns[1]}" 2>/dev/null
  ip link del "${veth[0]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
ip netns add "${ns[0]}" && ip netns add "${ns[1]}" &&
  ip link add "${veth[0]}" type veth peer name "${veth[1]}" || exit 77
for i in 0 1; do
  ip link set "${veth[i]}" netns "${ns[i]}"
  ip -n "${ns[i]}" addr add "${addr[i]}/24" dev "${veth[i]}"
  ip -n "${ns[i]}" link set "${veth[i]}" up
  ip -n "${ns[i]}" link set lo up
  if [ "$RATE" != unshaped ]; then
    burst=$(awk -v r="$RATE" -v t="$BURST_MS" 'BEGIN { printf "%db", r * 1e9 / 8 * t / 1000 }')
    tc -n "${ns[i]}" qdisc add dev "${veth[i]}" root tbf rate "${RATE}gbit" burst "$burst" \
      latency 10ms || exit 77
  fi
done

bytes() { numfmt --from=iec "$1"; }
port=31000
# plain SIZE: seconds per iteration, one a line
plain() {
  local half=$(($(bytes "$1") / 2))
  port=$((port + 1))
  ip netns exec "${ns[0]}" python3 "$ROOT/bench/duplex_sockets.py" listen "${addr[0]}" "$port" \
    "$half" "$((ITERS + 1))" &
  ip netns exec "${ns[1]}" python3 "$ROOT/bench/duplex_sockets.py" dial "${addr[0]}" "$port" \
    "$half" "$((ITERS + 1))" | tail -n +2 | awk '{ s += $1 } END { print s / NR * 1e6 }'
  wait
}
# smd DIRS SIZE: smd-bench's time_us (the slowest rank's mean per call)
smd() {
  local r
  port=$((port + 1))
  for r in 1 0; do
    ip netns exec "${ns[r]}" env SMD_PLUGIN_PATH="$1" SMD_TRANSPORT="$TRANSPORT" \
      SMD_RANK=$r SMD_WORLD_SIZE=2 SMD_LOCAL_RANK=0 SMD_LOCAL_SIZE=1 \
      SMD_MASTER_ADDR="${addr[0]}" SMD_MASTER_PORT=$port SMD_JOB_TOKEN="dx-$tag-$port" \
      SMD_NODE_ID="dx-node$r" SMD_TCP_ADDR="${addr[r]}" \
      timeout -k 5 300 "$BUILD/tools/smd-bench" "$COLL" -b "$2" -e "$2" -n "$ITERS" -w 2 --json \
      >"$work/rank$r" 2>&1 &
  done
  wait
  grep -o '"time_us": [0-9.]*' "$work/rank0" | awk '{ print $2 }'
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), load at start:$(cut -d' ' -f1-3 /proc/loadavg)"
link="${RATE} Gbit/s tbf, bucket ${BURST_MS} ms"
[ "$RATE" != unshaped ] || link="the bare veth (no qdisc: the CPUs bound it)"
echo "# link: $link; $COLL of SIZE over $TRANSPORT, 2 ranks (1 per namespace); $ROUNDS rounds of $ITERS calls"
for size in $SIZES; do
  for ((k = 0; k < ROUNDS; ++k)); do
    echo "plain $size $(plain "$size")" >>"$work/times"
    for p in "${PLUGINS[@]}"; do
      echo "${p%%=*} $size $(smd "${p#*=}" "$size")" >>"$work/times"
    done
  done
done
echo "# load at end:$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/times" "$RATE" <<'PY'
import collections, statistics, sys
rate = sys.argv[2]
times, labels = collections.defaultdict(list), []
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
for line in open(sys.argv[1]):
    label, size, us = (line.split() + ["", "", ""])[:3]
    if not us:
        print(f"# {label} {size}: no time (the run failed)")
        continue
    times[(label, size)].append(float(us) / 1e3)
    if label not in labels:
        labels.append(label)
sizes = list(dict.fromkeys(s for _, s in times))
head = "| Bytes |" + ("" if rate == "unshaped" else " Wire (ms) |")
what = "median ms [range]" if rate == "unshaped" else "median ms (x wire) [range]"
print(head + "".join(f" {l} {what} |" for l in labels))
print("|---" * (head.count("|") - 1 + len(labels)) + "|")
for s in sizes:
    n = int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)
    wire = None if rate == "unshaped" else n / 2 * 8 / (float(rate) * 1e9) * 1e3
    row = f"| {s} |" + ("" if wire is None else f" {wire:.1f} |")
    for l in labels:
        v = times.get((l, s))
        if not v:
            row += " - |"
            continue
        m = statistics.median(v)
        ratio = "" if wire is None else f" ({m / wire:.2f}x)"
        row += f" {m:.1f}{ratio} [{min(v):.1f}-{max(v):.1f}] |"
    print(row)
PY
