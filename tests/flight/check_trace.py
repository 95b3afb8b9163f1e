#!/usr/bin/env python3
"""Checks a Chrome trace as smd writes it (SMD_TRACE, merged by smd-info
trace): the file is JSON with a traceEvents list; the processes are exactly
ranks 0..N-1, each named; complete events ("X") have a non-negative
duration; async begin/end pairs ("b"/"e") balance per (rank, name, id) with
the end not before the begin; at least MIN_COLL collective events per rank
and, with --transfers, transport events on every rank.

usage: check_trace.py TRACE.json NRANKS MIN_COLL [--transfers]
"""
import collections
import json
import sys


def main() -> int:
    path, nranks, min_coll = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    want_transfers = "--transfers" in sys.argv[4:]
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    problems = []
    pids = {e["pid"] for e in events}
    if pids != set(range(nranks)):
        problems.append(f"ranks in the trace: {sorted(pids)}, expected 0..{nranks - 1}")
    named = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    if named != pids:
        problems.append(f"ranks without a process_name: {sorted(pids - named)}")
    colls = collections.Counter()
    transfers = collections.Counter()
    open_async = {}
    for e in events:
        ph = e["ph"]
        if ph == "X":
            if e["dur"] < 0 or e["ts"] <= 0:
                problems.append(f"bad complete event {e}")
            if e.get("cat") == "collective":
                colls[e["pid"]] += 1
        elif ph == "b":
            key = (e["pid"], e["name"], e["id"])
            if key in open_async:
                problems.append(f"async id begun twice: {key}")
            open_async[key] = e["ts"]
        elif ph == "e":
            key = (e["pid"], e["name"], e["id"])
            if key not in open_async:
                problems.append(f"async end without a begin: {key}")
            elif e["ts"] < open_async.pop(key):
                problems.append(f"async end before its begin: {key}")
            transfers[e["pid"]] += 1
        elif ph != "M":
            problems.append(f"unexpected phase {ph!r}")
    if open_async:
        problems.append(f"{len(open_async)} async events never ended, e.g. {next(iter(open_async))}")
    for r in range(nranks):
        if colls[r] < min_coll:
            problems.append(f"rank {r}: {colls[r]} collective events, expected at least {min_coll}")
        if want_transfers and transfers[r] == 0:
            problems.append(f"rank {r}: no transport events")
    for p in problems[:20]:
        print(f"check_trace: {p}")
    print(f"check_trace: {len(events)} events, {sum(colls.values())} collectives, "
          f"{sum(transfers.values())} transfers, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
