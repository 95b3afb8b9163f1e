"""Shared fixtures of the torch backend's tests (suite 'torch').

The suite runs on every rank of an smdrun job:
``smdrun -n N python3 -m pytest bindings/torch/tests``. smdrun sets what
torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), so the default
process group forms through env://, as in a torchrun job. Every test issues
the same operations in the same order on every rank, and skips depend only
on the world size, so the ranks stay in step. Tests that start jobs of their
own (init methods, a killed rank, a timeout, the example) run only in the
one-rank world, once per suite.
"""

import ctypes
import mmap
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

import smd.torch  # noqa: F401  (registers "smd")

TESTS = Path(__file__).resolve().parent
JOBS = TESTS / "jobs"
REPO = TESTS.parent.parent.parent
PYTHON = sys.executable
# SMD_TEST_HEAVY=1: larger tensors and a longer example run (the normal
# suite stays within about 1.5 minutes on 2 cores).
HEAVY = os.environ.get("SMD_TEST_HEAVY") == "1"


@pytest.fixture(scope="session")
def world():
    """The default process group: backend smd, from the launcher's env://."""
    dist.init_process_group("smd", timeout=timedelta(seconds=60))
    yield dist.group.WORLD
    dist.destroy_process_group()


@pytest.fixture(scope="session")
def gloo(world):
    """A gloo group over the same ranks: the reference results come from it."""
    group = dist.new_group(backend="gloo")
    yield group
    # torch 1.13's gloo group can deadlock if destroyed while a worker still
    # releases a finished operation's tensors (it waits for the GIL the
    # destroying thread holds; examples/torch/train_ddp.py): let them go idle.
    dist.barrier(group=group)
    time.sleep(0.2)


@pytest.fixture
def rank(world):
    return dist.get_rank()


@pytest.fixture
def size(world):
    return dist.get_world_size()


@pytest.fixture
def pair(world):
    """Skip in a one-rank world (the test needs a peer)."""
    if dist.get_world_size() < 2:
        pytest.skip("needs at least two ranks")


@pytest.fixture(scope="module")
def dev(world):
    """This rank's CUDA device (test_cuda*.py), once the backend is known to
    take CUDA tensors (every rank makes the same probe, so all skip or
    none). Ranks outnumbering GPUs share them, which smd supports."""
    device = torch.device("cuda", dist.get_rank() % torch.cuda.device_count())
    torch.cuda.set_device(device)
    try:
        dist.all_reduce(torch.ones(1, device=device))
    except Exception as e:  # noqa: BLE001  (the backend's refusal, whatever its class)
        if "built without CUDA torch" in str(e):
            pytest.skip(f"the backend was built without CUDA torch: {e}")
        raise
    return device


@pytest.fixture
def solo(world):
    """Skip unless the world has one rank (tests that launch jobs)."""
    if dist.get_world_size() != 1:
        pytest.skip("launches its own job: runs in the one-rank suite")


def smdrun():
    path = os.environ.get("SMDRUN") or str(REPO / "build" / "tools" / "smdrun")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no smdrun at {path}")
    return path


# What the launcher of this suite set for its own job: a job started from
# a test forms its own world, so these must not leak into it.
LAUNCHER_VARIABLES = ("SMD_RANK", "SMD_WORLD_SIZE", "SMD_LOCAL_RANK", "SMD_LOCAL_SIZE",
                      "SMD_MASTER_ADDR", "SMD_MASTER_PORT", "SMD_JOB_TOKEN", "SMD_NODE_ID",
                      "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                      "MASTER_PORT")


def launch(ranks, script, *args, timeout=120, env=None, options=()):
    """Run `script` (a path, or a name in jobs/) on `ranks` ranks under
    smdrun (with smdrun's `options`, such as --nodes); returns (exit
    status, stdout and stderr)."""
    job_env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    job_env.update(env or {})
    command = [smdrun(), "-n", str(ranks), "--timeout", str(timeout - 10), *options, PYTHON,
               str(JOBS / script), *map(str, args)]  # JOBS / absolute = absolute
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=job_env)
    return done.returncode, done.stdout + done.stderr


def resident_elements(module):
    """Elements the module's parameters hold in memory now (a freed
    parameter keeps its shape over an empty storage)."""
    return sum(p.data.storage().size() if not hasattr(p, "untyped_storage")
               else p.untyped_storage().nbytes() // p.element_size()
               for p in module.parameters())


def resident_pages(address, nbytes):
    """Pages of [address, address + nbytes) in memory now (mincore, over
    the pages the range touches; Linux)."""
    page = mmap.PAGESIZE
    first = address // page * page
    pages = (address + nbytes - first + page - 1) // page
    vec = (ctypes.c_ubyte * pages)()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    assert libc.mincore(first, pages * page, vec) == 0, os.strerror(ctypes.get_errno())
    return sum(v & 1 for v in vec)


def assert_same(sharded, reference, tol=1e-5):
    """(losses, state) of two trainings agree within tol."""
    (losses, state), (ref_losses, ref_state) = sharded, reference
    assert len(losses) == len(ref_losses)
    for a, b in zip(losses, ref_losses):
        assert abs(a - b) <= tol * max(1.0, abs(b)), (losses, ref_losses)
    assert state.keys() == ref_state.keys()
    for name in ref_state:
        torch.testing.assert_close(state[name], ref_state[name], rtol=tol, atol=tol,
                                   msg=lambda m, name=name: f"{name}: {m}")
