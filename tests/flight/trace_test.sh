#!/usr/bin/env bash
# SMD_TRACE end to end: a run over two fake nodes (so transfers cross the
# tcp plugin as well as the arena) writes one trace per rank; each is
# valid on its own, and `smd-info trace` merges them (given the files, or
# their directory) into one that check_trace.py accepts.
# usage: trace_test.sh SMDRUN SMD_INFO SMD_BENCH
set -u
smdrun=$1 info=$2 bench=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "trace_test: $*"; exit 1; }

SMD_TRACE="$dir/t.json" "$smdrun" -n 4 --nodes 2 --timeout 120 "$bench" allreduce -b 8 -e 64K -f 64 \
  -n 3 -w 1 > "$dir/out" 2>&1 || { cat "$dir/out"; fail "the traced run failed"; }
for r in 0 1 2 3; do
  [[ -s "$dir/t.rank$r.json" ]] || { ls "$dir"; fail "no trace from rank $r"; }
done
python3 -c 'import json, sys; assert {e["pid"] for e in json.load(open(sys.argv[1]))["traceEvents"]} == {2}' \
  "$dir/t.rank2.json" || fail "rank 2's own file is not JSON holding rank 2 alone"
"$info" trace "$dir/merged.json" "$dir"/t.rank*.json || fail "smd-info trace (files) failed"
python3 "$here/check_trace.py" "$dir/merged.json" 4 12 --transfers || fail "the merged trace is wrong"
mkdir "$dir/in" && mv "$dir"/t.rank*.json "$dir/in/"
"$info" trace "$dir/merged2.json" "$dir/in" || fail "smd-info trace (directory) failed"
cmp -s "$dir/merged.json" "$dir/merged2.json" || fail "merging the directory gave another trace"
echo "trace_test: ok"
