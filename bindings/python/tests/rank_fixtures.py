"""What every pytest suite that runs on the ranks of an smdrun job shares
(this package's, suite 'python', and bindings/jax/tests, suite 'jax', whose
meson test puts this folder on PYTHONPATH): the world fixture, the skips
that keep the ranks in step, and a free port for the jobs a test starts.

Every test issues the same collectives in the same order on every rank,
and every skip depends only on what all ranks agree on (the world size).
Tests that start jobs of their own (a killed peer, the launcher, pip) run
only in a one-rank world, so that they run once per suite."""

import socket

import pytest


def world_fixture(init):
    """The session's world: made by `init` (smd.init, smd.jax.initialize)
    before the first test that asks for it, destroyed after the last."""

    @pytest.fixture(scope="session", name="world")
    def world():
        comm = init()
        yield comm
        comm.destroy()

    return world


@pytest.fixture
def solo(world):
    """Skip unless the world has one rank (for tests that launch jobs)."""
    if world.size != 1:
        pytest.skip("launches its own jobs: runs in the one-rank run")
    return world


@pytest.fixture
def pair(world):
    """Skip in a one-rank world (the test needs a peer)."""
    if world.size < 2:
        pytest.skip("needs at least two ranks")
    return world


def free_port():
    """A TCP port free on this machine now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
