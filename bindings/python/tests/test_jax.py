"""smd.jax: the plan of each collective (shapes, attributes), which needs
no jax. The collectives themselves run in suite 'jax' (bindings/jax/tests,
with the python that has jax)."""

import numpy as np
import pytest

import smd
import smd.jax as sj

SUM, AVG = int(smd.Op.SUM), int(smd.Op.AVG)
F32 = int(smd.Datatype.FLOAT32)


def test_plans():
    p = sj.plan("allreduce", (2, 3), np.float32, 4, 0x10, op="avg")
    assert p == sj.Plan("smd_allreduce", (2, 3), np.dtype(np.float32),
                        (("comm", 0x10), ("datatype", F32), ("op", AVG)))
    assert sj.plan("allgather", (3,), np.int64, 4, 1).shape == (4, 3)
    assert sj.plan("reduce_scatter", (4, 5), np.float32, 4, 1).shape == (5,)
    assert sj.plan("reduce_scatter", (2, 6), np.float32, 4, 1).shape == (3,)
    b = sj.plan("broadcast", (7,), np.float64, 2, 1, root=1)
    assert b.attrs[-1] == ("root", 1) and b.shape == (7,)
    assert sj.plan("alltoall", (8,), np.uint8, 4, 1).shape == (8,)


def test_plans_refuse_what_cannot_run():
    with pytest.raises(smd.InvalidArgumentError, match="equal blocks"):
        sj.plan("reduce_scatter", (5,), np.float32, 4, 1)
    with pytest.raises(smd.InvalidArgumentError, match="equal blocks"):
        sj.plan("alltoall", (5,), np.float32, 2, 1)
    with pytest.raises(smd.InvalidArgumentError, match="root 2"):
        sj.plan("broadcast", (5,), np.float32, 2, 1, root=2)
    with pytest.raises(smd.InvalidArgumentError, match="no collective"):
        sj.plan("gather", (5,), np.float32, 2, 1)
    with pytest.raises(smd.InvalidArgumentError):
        sj.plan("allreduce", (5,), np.complex64, 2, 1)


def test_comm_address_is_the_handle(world):
    assert sj.comm_address(world) != 0
    assert sj.comm_address(world) == sj.comm_address(world)
