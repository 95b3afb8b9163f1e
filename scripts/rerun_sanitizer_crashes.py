#!/usr/bin/python3
"""Names the failed tests of a meson test log whose only failure was the
LeakSanitizer tool itself crashing ("Tracer caught signal", "LeakSanitizer
has encountered a fatal error"): its ptrace-based tracer now and then dies
while another thread (a transport library's progress thread) is exiting.
That is no finding about our code, so scripts/test.sh runs those tests once
more; a real report (leaks, memory errors, undefined behaviour) or any other
failure is never retried.

Usage: rerun_sanitizer_crashes.py BUILD_DIR -> one test name per line;
exit status 1 when some failure is anything else (then nothing is retried).
"""
import json
import sys

TOOL_CRASH = "LeakSanitizer has encountered a fatal error"
FINDINGS = ("ERROR: LeakSanitizer: detected memory leaks", "ERROR: AddressSanitizer",
            "runtime error:")


def main():
    log = sys.argv[1] + "/meson-logs/testlog.json"
    crashed, other = [], 0
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            test = json.loads(line)
            if test.get("result") in ("OK", "SKIP", "EXPECTEDFAIL"):
                continue
            out = (test.get("stdout") or "") + (test.get("stderr") or "")
            if TOOL_CRASH in out and not any(f in out for f in FINDINGS):
                # "suite / name" -> the name meson test accepts
                crashed.append(test["name"].split(" / ", 1)[-1])
            else:
                other += 1
    if other or not crashed:
        return 1
    print("\n".join(crashed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
