"""Tests that start jobs of their own: a killed peer, the launcher wrapper,
the example, installing the package. They run once, in the one-rank suite."""

import os
import re

import pytest

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


def source_files():
    """Every file of the source tree under bindings/python (to see that an
    install wrote nothing there)."""
    return sorted(p.relative_to(PYTHON_DIR) for p in PYTHON_DIR.rglob("*")
                  if "__pycache__" not in p.parts)


def test_pip_install(solo, tmp_path):
    """pip installs the package offline (no build isolation, no index)
    straight from the source tree, building out of it (nothing written
    there); the installed package carries the declarations generated from
    smd.h, needs neither a compiler nor the source tree, and holds smd.torch
    and SageMaker's module paths."""
    target = tmp_path / "site"
    before = source_files()
    env = {"SMD_HEADER": str(REPO / "include" / "smd.h"), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONPATH": ""}
    status, out = run_job([PYTHON, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                           "--no-index", "-q", "--target", str(target), str(PYTHON_DIR)],
                          env=env, timeout=240)
    assert status == 0, out
    assert source_files() == before, "pip wrote into the source tree"
    assert (target / "smd" / "_cdef.h").is_file()
    lib = os.environ.get("SMD_LIBRARY") or str(REPO / "build" / "src" / "libsmd.so.0")
    check = ("import numpy, smd; from smd import _ffi; "
             "assert _ffi.cdef_origin.endswith('(generated)'), _ffi.cdef_origin; "
             "import smd.smp, smdistributed.modelparallel.torch; "
             "w = smd.init(); print('sum', w.allreduce(numpy.ones(3))); w.destroy()")
    clean = {"PYTHONPATH": str(target), "SMD_LIBRARY": lib, "SMD_HEADER": None,
             "CC": "/nonexistent-compiler", "SMD_TORCH_BACKEND": None}
    # From an empty directory, with only the installed package on the path
    # and no compiler to preprocess a header with.
    status, out = run_job([PYTHON, "-c", check], cwd=tmp_path, env=clean)
    assert status == 0, out
    assert "sum [1. 1. 1.]" in out, out
    status, out = run_job([PYTHON, "-c", "import torch"], cwd=tmp_path, env=clean)
    if status != 0 or not list((REPO / "build" / "bindings" / "torch").glob("_smd_c10d*")):
        pytest.skip("no torch, or no torch backend built: smd.torch not checked")
    status, out = run_job([PYTHON, "-c", "import smd, smd.torch, "
                           "smdistributed.dataparallel.torch.torch_smddp as m; "
                           "print('torch', smd.torch.EXTENSION_PATH, m.BACKEND)"],
                          cwd=tmp_path, env=clean)
    assert status == 0, out
    assert f"torch {target}" in out and "smddp" in out, out


def test_meson_installs_every_module(solo):
    """bindings/python/meson.build lists the package's files for meson
    install: none may be missing."""
    listed = (PYTHON_DIR / "meson.build").read_text()
    for package in ("smd", "smdistributed"):
        for path in (PYTHON_DIR / package).rglob("*.py"):
            relative = path.relative_to(PYTHON_DIR)
            folder, name = relative.parent.as_posix(), relative.name
            entry = re.search(rf"'{re.escape(folder)}': \[([^\]]*)\]", listed)
            assert entry and f"'{name}'" in entry.group(1), f"{relative} is not in meson.build"
