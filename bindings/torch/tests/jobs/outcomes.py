"""How the jobs report their Works: one line per Work, which the tests in
test_jobs.py read back."""

import time

import smd


def wait_all(works, start):
    """Waits for each Work and prints "no error" or "<ErrorClass> after
    <seconds since start> s: <message>"; returns how many failed."""
    failed = 0
    for w in works:
        try:
            w.wait()
            print("no error", flush=True)
        except smd.Error as e:
            failed += 1
            print(f"{type(e).__name__} after {time.monotonic() - start:.2f} s: {e}", flush=True)
    return failed
