"""Shared fixtures of the JAX suite (suite 'jax'). It runs on every rank of
smdrun jobs (1, 2 and 4 ranks, and 4 ranks on 2 pretend nodes) with the
python that has jax: every test issues the same collectives in the same
order on every rank. 64-bit types are on, so that every dtype smd has is
a JAX dtype here."""

import jax
import pytest

import smd
import smd.jax as sj

jax.config.update("jax_enable_x64", True)


@pytest.fixture(scope="session")
def world():
    comm = sj.initialize()
    yield comm
    comm.destroy()


@pytest.fixture
def solo(world):
    """Skip unless the world has one rank (for tests that launch jobs)."""
    if world.size != 1:
        pytest.skip("launches its own jobs: runs in the one-rank run")
    return world
