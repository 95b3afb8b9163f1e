"""Shared fixtures and helpers of the suite. It runs on every rank of a
job (smdrun -n N python3 -m pytest ...); the world, the skips that keep
the ranks in step (solo, pair) and free_port are rank_fixtures', shared
with bindings/jax/tests."""

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import smd
from rank_fixtures import free_port, pair, solo, world_fixture  # noqa: F401 (fixtures)

world = world_fixture(smd.init)

PYTHON_DIR = Path(__file__).resolve().parent.parent   # bindings/python
REPO = PYTHON_DIR.parent.parent


@contextlib.contextmanager
def sigint_after(seconds):
    """Send SIGINT to this process after `seconds` (like Ctrl-C), unless the
    block ended first. Python's own handler is installed meanwhile (a
    launcher may have started us with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)


def shared_free_port(world):
    """A TCP port free on this machine, the same on every rank."""
    port = np.array([free_port() if world.rank == 0 else 0], np.int32)
    return int(world.broadcast(port, root=0)[0])


def smdrun():
    path = os.environ.get("SMDRUN") or str(REPO / "build" / "tools" / "smdrun")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no smdrun at {path}")
    return path


LAUNCHER_VARIABLES = {
    "SMD_RANK", "SMD_WORLD_SIZE", "SMD_LOCAL_RANK", "SMD_LOCAL_SIZE", "SMD_MASTER_ADDR",
    "SMD_MASTER_PORT", "SMD_JOB_TOKEN", "SMD_NODE_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK",
    "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}


def run_job(args, timeout=60, env=None, cwd=None):
    """Run a command (a job of its own), return (status, stdout+stderr).
    `env` adds variables (None removes one); this package comes first on
    PYTHONPATH unless `env` sets it."""
    # The job forms its own world: drop the launcher variables of this one.
    full_env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(PYTHON_DIR)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
        else:
            full_env[name] = value
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=cwd)
    return done.returncode, done.stdout + done.stderr


PYTHON = sys.executable
JOBS = Path(__file__).resolve().parent / "jobs"
