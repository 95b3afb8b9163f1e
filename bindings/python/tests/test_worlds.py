"""Several worlds in one process, and worlds formed again after they are
destroyed, as smd.init's docstring promises (runs on every rank)."""

import numpy as np

import smd


def total(comm, value):
    out = np.zeros(2)
    comm.allreduce(np.full(2, float(value)), out=out)
    return out[0]


def test_worlds_beside_the_first(world):
    expected = world.size * (world.size + 1) / 2
    prefixed = smd.init(store_prefix="library-a/")
    plain = smd.init()
    try:
        assert smd.world() is world  # the first world stays the default one
        for _ in range(3):
            for comm in (prefixed, world, plain):
                assert total(comm, comm.rank + 1) == expected
    finally:
        prefixed.destroy()
    assert total(plain, plain.rank + 1) == expected
    plain.destroy()


def test_init_destroy_init(world):
    expected = world.size * (world.size + 1) / 2
    for _ in range(5):
        comm = smd.init()
        assert total(comm, comm.rank + 1) == expected
        comm.destroy()
    assert total(world, world.rank + 1) == expected
