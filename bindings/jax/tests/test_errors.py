"""An error on one rank inside a jitted collective (a mismatch between
ranks, a dead peer, a timeout) raises a Python exception naming the cause
on every rank still alive: no hang, no abort of the interpreter. Each case
is a 2-rank job of its own (jobs/failing_rank.py), run from the one-rank
run of the suite."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

JOB = Path(__file__).resolve().parent / "jobs" / "failing_rank.py"


def run_job(how, timeout_s="4"):
    env = dict(os.environ, SMD_TIMEOUT=timeout_s)
    done = subprocess.run([os.environ["SMDRUN"], "-n", "2", "--timeout", "90", "--grace", "30",
                           sys.executable, str(JOB), how],
                          env=env, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    return done, {r: [l[4:] for l in lines if l.startswith(f"[{r}] ")] for r in (0, 1)}


def raised(lines):
    return [l for l in lines if l.startswith("raised ")]


@pytest.mark.parametrize("how,cause", [("count", "count=4 float32 op=sum; rank 1: allreduce count=5"),
                                       ("dtype", "count=4 int32")])
def test_a_mismatch_raises_on_every_rank(solo, how, cause):
    done, out = run_job(how)
    for rank in (0, 1):
        assert len(raised(out[rank])) == 1, done.stdout + done.stderr
        assert "SMD_ERR_MISMATCH" in raised(out[rank])[0] and cause in raised(out[rank])[0]
    assert "exited with status 3" in done.stderr and "signal" not in done.stderr


def test_a_dead_peer_raises(solo):
    done, out = run_job("dead")
    assert "SMD_ERR_PEER_FAILURE" in raised(out[0])[0], done.stdout + done.stderr
    assert "rank 1" in raised(out[0])[0]
    assert "rank 0 (pid" in done.stderr and "exited with status 3" in done.stderr


def test_a_rank_that_never_comes_raises_a_timeout(solo):
    done, out = run_job("late")
    assert "SMD_ERR_TIMEOUT" in raised(out[0])[0], done.stdout + done.stderr
    assert "SMD_TIMEOUT" in raised(out[0])[0]
