"""Surviving a lost rank (docs/ELASTIC.md): revoke, agree and shrink on a
healthy communicator at any job size, and the example whose job loses a
rank to SIGKILL and goes on at three."""

import re

import numpy as np
import pytest

import smd

from conftest import PYTHON, REPO, run_job, smdrun


def test_revoke_ends_later_calls_and_shrink_keeps_everyone(world):
    comm = world.dup()
    comm.revoke()
    with pytest.raises(smd.RevokedError):
        comm.allreduce(np.ones(4, np.float32))
    flag, failed = comm.agree(0xFFFFFFFF & ~(1 << (world.rank % 32)))
    want = 0xFFFFFFFF
    for r in range(world.size):
        want &= ~(1 << (r % 32))
    assert (flag, failed) == (want, [])
    shrunk, old_to_new = comm.shrink()
    try:
        assert old_to_new == list(range(world.size))
        assert (shrunk.size, shrunk.rank) == (world.size, world.rank)
        out = shrunk.allreduce(np.array([world.rank], np.int64))
        assert out[0] == world.size * (world.size - 1) // 2
    finally:
        shrunk.destroy()
        comm.destroy()


def test_grow_by_none_and_a_refused_joiner(world):
    """grow(0) forms a successor of the same ranks; a joiner with a wrong
    token is refused by the store and disturbs nobody. A world of one
    formed without a store cannot grow."""
    if world.size == 1:
        with pytest.raises(smd.InvalidUsageError, match="without a store"):
            world.grow(1)
        return
    if world.rank == world.size - 1:
        with pytest.raises(smd.BootstrapError, match="token mismatch"):
            smd.join(token="not-the-job-token", timeout=10)
    grown = world.grow(0)
    try:
        assert (grown.size, grown.rank) == (world.size, world.rank)
        out = grown.allreduce(np.array([world.rank + 1], np.int64))
        assert out[0] == world.size * (world.size + 1) // 2
    finally:
        grown.destroy()


def test_agree_checks_its_flag(world):
    with pytest.raises(smd.InvalidArgumentError):
        world.agree(-1)
    assert smd.Result.ERR_REVOKED.name == "ERR_REVOKED"


def test_example_train_elastic(solo):
    """examples/elastic: rank 2 of 4 dies mid-step; the survivors shrink, redo
    the step at 3, grow back to 4 with a replacement process at step 20 and
    end with the parameters of an uninterrupted run."""
    status, out = run_job([smdrun(), "-n", "4", "--grace", "60", PYTHON,
                           str(REPO / "examples" / "elastic" / "train_elastic.py"), "--steps", "30"],
                          env={"SMD_TIMEOUT": "60"}, timeout=120)
    # World ranks 0, 1, 3 become 0, 1, 2 (each learnt of the loss by
    # PeerFailureError, or RevokedError when another survivor revoked first).
    moves = re.findall(r"^\[([013])\] step 10: (?:PeerFailure|Revoked)Error; going on as rank ([012]) "
                       r"of 3 from step 10$", out, re.M)
    assert sorted(moves) == [("0", "0"), ("1", "1"), ("3", "2")], out
    # The survivors keep their ranks; the replacement (rank 0's child, so
    # its lines carry [0]) is rank 3 and starts at step 20.
    grown = re.findall(r"^\[([013])\] step 20: grown to 4 ranks, rank ([012])$", out, re.M)
    assert sorted(grown) == [("0", "0"), ("1", "1"), ("3", "2")], out
    assert "replacement: joined as rank 3 of 4 at step 20" in out, out
    assert "4 ranks at the end" in out and "FAIL" not in out, out
    assert out.count("elastic check passed") == 4, out
    assert "replacement: elastic check passed" in out, out
    assert status == 128 + 9, out  # smdrun reports the killed rank


def test_sharded_set_rebuilt_after_a_killed_rank(solo, tmp_path):
    """jobs/sharded_after_shrink.py: rank 2 of 4 is SIGKILLed; the survivors
    rebuild the sharded set from their shards and its checkpoint
    (ShardedParameters.rebuild) and fetch the exact parameters."""
    status, out = run_job([smdrun(), "-n", "4", "--grace", "60", PYTHON,
                           str(REPO / "bindings" / "python" / "tests" / "jobs" / "sharded_after_shrink.py")],
                          env={"SMD_TIMEOUT": "60", "CKPT_DIR": str(tmp_path)}, timeout=120)
    checked = re.findall(r"rank ([013]) -> ([012]) of 3: rebuilt set checked", out)
    assert sorted(checked) == [("0", "0"), ("1", "1"), ("3", "2")], out
    assert "FAIL" not in out and "no error" not in out, out
    assert status == 128 + 9, out  # smdrun reports the killed rank
