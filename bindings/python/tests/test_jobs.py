"""Tests that start jobs of their own: a killed peer, the launcher wrapper,
the example, installing the package. They run once, in the one-rank suite."""

import os
import re
import shutil

from conftest import JOBS, PYTHON, PYTHON_DIR, REPO, run_job, smdrun


def test_killed_peer(solo, tmp_path):
    """One rank of three is SIGKILLed mid-collective; the other two get
    PeerFailureError within seconds (not at the 60 s deadline)."""
    status, out = run_job([smdrun(), "-n", "3", "--grace", "60", PYTHON, str(JOBS / "killed_peer.py")],
                          env={"SMD_TIMEOUT": "60", "SURVIVORS_DIR": str(tmp_path)}, timeout=120)
    reports = re.findall(r"^\[([01])\] PeerFailureError after ([0-9.]+) s: (.*)$", out, re.M)
    assert len(reports) == 2, out
    for rank, seconds, message in reports:
        assert float(seconds) < 10, out
        assert "rank 2 " in message, message  # names the dead rank
    assert status == 128 + 9, out  # smdrun: the first rank to fail died of SIGKILL


def test_run_module(solo):
    """python -m smd.run passes smdrun's options and the script's own."""
    status, out = run_job([PYTHON, "-m", "smd.run", "-n", "2", "--timeout", "60",
                           str(JOBS / "hello.py"), "-x", "--flag"],
                          env={"SMD_SMDRUN": smdrun()}, timeout=90)
    assert status == 0, out
    for r in range(2):
        assert f"[{r}] hello from {r} of 2 args=['-x', '--flag']" in out, out


def test_run_module_finds_smdrun(solo):
    from smd import run

    assert os.access(run.find_smdrun(), os.X_OK)
    assert run.split_args(["-n", "4", "--no-tag-output", "--grace=2", "s.py", "-n", "1"]) == (
        ["-n", "4", "--no-tag-output", "--grace=2"], ["s.py", "-n", "1"])
    assert run.split_args(["-n4", "-m", "pytest", "-q"]) == (["-n4"], ["-m", "pytest", "-q"])
    assert run.split_args(["-n", "2", "--", "-weird.py"]) == (["-n", "2"], ["-weird.py"])


def test_example_train_dp(solo):
    status, out = run_job([smdrun(), "-n", "2", "--timeout", "120", PYTHON,
                           str(REPO / "examples" / "python" / "train_dp.py"), "--steps", "200"],
                          timeout=150)
    assert status == 0, out
    assert "equality check" in out and "FAIL" not in out, out


def test_pip_install(solo, tmp_path):
    """pip installs the package offline (no build isolation, no index);
    the installed package carries the declarations generated from smd.h and
    needs neither a compiler nor the source tree."""
    src = tmp_path / "src"
    shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__", "meson.build"))
    target = tmp_path / "site"
    env = {"SMD_HEADER": str(REPO / "include" / "smd.h"), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONPATH": ""}
    status, out = run_job([PYTHON, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                           "--no-index", "-q", "--target", str(target), str(src)],
                          env=env, timeout=240)
    assert status == 0, out
    assert (target / "smd" / "_cdef.h").is_file()
    lib = os.environ.get("SMD_LIBRARY") or str(REPO / "build" / "src" / "libsmd.so.0")
    check = ("import numpy, smd; from smd import _ffi; "
             "assert _ffi.cdef_origin.endswith('(generated)'), _ffi.cdef_origin; "
             "w = smd.init(); print('sum', w.allreduce(numpy.ones(3))); w.destroy()")
    # From an empty directory, with only the installed package on the path
    # and no compiler to preprocess a header with.
    status, out = run_job([PYTHON, "-c", check], cwd=tmp_path, env={
        "PYTHONPATH": str(target), "SMD_LIBRARY": lib, "SMD_HEADER": None,
        "CC": "/nonexistent-compiler"})
    assert status == 0, out
    assert "sum [1. 1. 1.]" in out, out
