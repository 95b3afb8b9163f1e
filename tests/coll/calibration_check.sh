#!/usr/bin/env bash
# The node calibration with real processes (SMD_CALIBRATE): every rank of
# a node gets the leader's values, identical to the last digit; the values
# go to a private per-boot cache file that the next job reads instead of
# measuring; a corrupt file or one of another boot is measured over; off
# gives the defaults; smd-info params shows the cached values. Nothing here
# depends on the machine's speed.
# usage: calibration_check.sh SMDRUN SMD_BENCH SMD_INFO
set -u
smdrun=$1 bench=$2 info=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "calibration_check: $*"; exit 1; }
file="$dir/smd-calibration-$(id -u).txt"

# run NP MODE: one tiny allreduce with the calibration logged; prints the
# calibration lines.
run() {
  SMD_RENDEZVOUS_DIR="$dir" SMD_CALIBRATE=$2 SMD_DEBUG=info "$smdrun" -n "$1" --timeout 120 \
    "$bench" allreduce -b 8 -e 8 -n 1 -w 0 > "$dir/out" 2>&1 || { cat "$dir/out"; fail "run failed"; }
  grep 'calibrate:' "$dir/out"
}
# values LINES: the distinct "key=value ... (origin)" parts of the ranks'
# lines (with a staging probe, the last line of each rank: its final values).
values() {
  grep 'world rank' | sed 's/^\[\([0-9]*\)\].*(world rank [0-9]*):/\1 /' |
    awk '{r = $1; $1 = ""; last[r] = $0} END {for (r in last) print last[r]}' | sort -u
}

out=$(run 3 force)
echo "$out"
[[ $(echo "$out" | grep 'world rank' | grep -o '^\[[0-9]*\]' | sort -u | wc -l) == 3 ]] ||
  fail "expected calibration lines from each of 3 ranks"
v=$(echo "$out" | values)
[[ $(echo "$v" | wc -l) == 1 ]] || fail "the ranks hold different values: $v"
echo "$v" | grep -q '(measured now)$' || fail "not measured with SMD_CALIBRATE=force: $v"
for key in copy_cache_gbps copy_memory_gbps cma_gbps stream_min_bytes; do
  echo "$v" | grep -Eq " $key=[0-9]" || fail "no $key in $v"
done
# The staging probe times the communicator's own allreduce both ways after
# the ping-pong, unless the ping-pong never ran with both ranks on a CPU
# (a loaded machine): then the range stays unmeasured (0).
if echo "$v" | grep -Eq ' line_rtt_us=0 '; then
  echo "$v" | grep -Eq ' stage_stream_min_bytes=0 stage_stream_max_bytes=0 ' ||
    fail "a staging range without a ping-pong: $v"
else
  echo "$out" | grep -q 'staging probe in' || fail "no staging probe ran: $out"
  echo "$v" | grep -Eq ' stage_stream_min_bytes=(-1|[1-9][0-9]*) stage_stream_max_bytes=(-1|[1-9][0-9]*) ' ||
    fail "no staging range measured: $v"
fi
echo "$v" | grep -Eq ' copy_memory_gbps=0 ' && fail "no copy bandwidth measured: $v"
[[ -f "$file" ]] || fail "no cache file written"
[[ $(stat -c %a "$file") == 600 ]] || fail "the cache file is not private: $(stat -c %a "$file")"
grep -q '^key = boot=' "$file" || fail "the cache file names no boot: $(cat "$file")"

# The next job reads the file: the same values, from the file.
again=$(run 3 auto | values)
[[ "${again% (cached file)}" == "${v% (measured now)}" ]] || fail "cached values differ: '$again' vs '$v'"
[[ "$again" == *"(cached file)" ]] || fail "the cache file was not used: $again"

# A corrupt file and one from another boot are measured over.
echo "garbage" > "$file"
out=$(run 2 auto)
echo "$out" | grep -q "ignoring $file" || fail "a corrupt file was not reported: $out"
echo "$out" | values | grep -q '(measured now)$' || fail "a corrupt file was used: $out"
sed -i 's/^key = boot=[^ ]*/key = boot=another-boot/' "$file"
out=$(run 2 auto)
echo "$out" | grep -q "another boot" || fail "a file of another boot was not reported: $out"
echo "$out" | values | grep -q '(measured now)$' || fail "a file of another boot was used: $out"
# A value no measurement gives (the file was edited) is warned about and
# measured over.
grep -q '^line_rtt_us = ' "$file" || fail "no line_rtt_us in the rewritten file: $(cat "$file")"
sed -i 's/^line_rtt_us = .*/line_rtt_us = 1e308/' "$file"
out=$(run 2 auto)
echo "$out" | grep -q "WARN.*ignoring the calibration cache $file: line_rtt_us = 1e+308 is outside" ||
  fail "a crafted value was not warned about: $out"
echo "$out" | values | grep -q '(measured now)$' || fail "a crafted value was used: $out"

# smd-info params shows the cached values and their origin.
SMD_RENDEZVOUS_DIR="$dir" "$info" params > "$dir/params" 2>&1 || { cat "$dir/params"; fail "smd-info params failed"; }
grep -E 'calibration: copy_memory_gbps' "$dir/params" | grep -q 'cached file' ||
  { cat "$dir/params"; fail "smd-info params does not show the cached calibration"; }

# off: the defaults (nothing measured, nothing read or written).
rm -f "$file"
v=$(run 3 off | values)
[[ "$v" == *"copy_memory_gbps=0 "*"(default)" ]] || fail "SMD_CALIBRATE=off did not give the defaults: $v"
[[ -f "$file" ]] && fail "SMD_CALIBRATE=off wrote a cache file"
echo "calibration_check: ok"
