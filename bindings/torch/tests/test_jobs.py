"""Tests that start jobs of their own: the init methods, a killed rank, a
timeout, the DDP example. They run once, in the one-rank suite."""

import json
import re

import pytest

from conftest import HEAVY, PYTHON, REPO, launch, smdrun  # noqa: F401


@pytest.mark.parametrize("method", ["env", "tcp", "file"])
def test_init_method(solo, tmp_path, method):
    status, out = launch(2, "init_methods.py", method, tmp_path / "store")
    assert status == 0, out
    for r in range(2):
        assert f"ok {method} {r}" in out, out


def test_killed_rank_ends_pending_works(solo):
    """One rank of three dies (SIGKILL); every pending Work of the other two
    ends with PeerFailureError naming it, within seconds, not at the
    group's 60 s timeout."""
    status, out = launch(3, "killed_rank.py", timeout=100)
    reports = re.findall(r"^\[([01])\] (\w+) after ([0-9.]+) s: (.*)$", out, re.M)
    assert len(reports) == 6, out
    assert any(kind == "PeerFailureError" and "rank 2 " in message
               for _, kind, _, message in reports), out
    assert all(float(seconds) < 20 for _, _, seconds, _ in reports), out
    assert status == 128 + 9, out  # smdrun: the first rank to fail died of SIGKILL


def test_timeout_ends_pending_works(solo):
    status, out = launch(2, "timeout.py", timeout=100)
    first = re.findall(r"^\[0\] (\w+) after ([0-9.]+) s: (.*)$", out, re.M)
    assert len(first) == 2, out
    assert first[0][0] == "TimeoutError", out
    assert all(2.5 < float(seconds) < 15 for _, seconds, _ in first), out
    late = re.findall(r"^\[1\] late: (\w+) after", out, re.M)
    assert late and late[0] != "no error", out
    assert status == 0, out


def test_smd_trace_covers_torch_jobs(solo, tmp_path):
    """SMD_TRACE works under torch.distributed: the backend calls the C
    library, so each rank writes its Chrome trace with the job's
    allreduces, closed as valid JSON even if the world outlives the script."""
    trace = tmp_path / "t.json"
    status, out = launch(2, "init_methods.py", "env", env={"SMD_TRACE": str(trace)})
    assert status == 0, out
    for r in range(2):
        with open(tmp_path / f"t.rank{r}.json") as f:
            events = json.load(f)["traceEvents"]
        assert {e["pid"] for e in events} == {r}
        assert sum(e["name"] == "allreduce" and e["ph"] == "X" for e in events) >= 2, events


def test_example_train_ddp(solo):
    """examples/torch/train_ddp.py: DDP over smd matches DDP over gloo."""
    ranks, steps = (4, 60) if HEAVY else (2, 30)
    status, out = launch(ranks, REPO / "examples" / "torch" / "train_ddp.py", "--steps", steps,
                         timeout=200)
    assert status == 0, out
    assert re.search(rf"train_ddp: {ranks} ranks, {steps} steps", out), out
