"""Shared fixtures of the JAX suite (suite 'jax'). It runs on every rank of
smdrun jobs (1, 2 and 4 ranks, and 4 ranks on 2 pretend nodes) with the
python that has jax: every test issues the same collectives in the same
order on every rank. 64-bit types are on, so that every dtype smd has is
a JAX dtype here. The world and solo are bindings/python/tests'
rank_fixtures (the meson test puts that folder on PYTHONPATH)."""

import jax
from rank_fixtures import solo, world_fixture  # noqa: F401 (fixtures)

import smd.jax as sj

jax.config.update("jax_enable_x64", True)

world = world_fixture(sj.initialize)
