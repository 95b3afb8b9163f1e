"""A job of 4 ranks with a sharded set: each rank checkpoints its shards
into CKPT_DIR, rank 2 SIGKILLs itself, and the survivors shrink, rebuild
the set from their shards and rank 2's checkpoint
(ShardedParameters.rebuild) and check every full parameter."""

import os
import signal
import sys

import numpy as np

import smd

LOST = 2
SHAPES = [(10,), (7, 3), (33,)]


def trained(pid):
    """Parameter pid's values after the "optimizer step" below."""
    n = int(np.prod(SHAPES[pid]))
    return (100 * pid + np.arange(n, dtype=np.float32) + 0.5).reshape(SHAPES[pid])


def main():
    ckpt = os.environ["CKPT_DIR"]
    world = smd.init()
    sp = smd.ShardedParameters(world, param_persistence_threshold=0)
    for shape in SHAPES:
        sp.register(np.zeros(shape, np.float32))
    for pid in range(len(SHAPES)):  # an optimizer step on each shard, then its checkpoint
        lay = sp.layout(pid)
        flat = trained(pid).reshape(-1)
        real = max(0, min(lay.count, flat.size - lay.offset))
        sp.shard(pid)[:real] = flat[lay.offset:lay.offset + real]
        np.save(os.path.join(ckpt, f"{world.rank}.{pid}.npy"), sp.shard(pid))
    try:
        world.barrier()  # every checkpoint is written
        if world.rank == LOST:
            os.kill(os.getpid(), signal.SIGKILL)
        sp.reduce_grads([], [])  # ends the round: fetches see the shards
        sp.fetch([0])
        print(f"rank {world.rank}: no error with a killed peer", flush=True)
        return 1
    except (smd.PeerFailureError, smd.RevokedError):
        pass
    world.revoke()
    shrunk, old_to_new = world.shrink()
    lost = {LOST: [np.load(os.path.join(ckpt, f"{LOST}.{pid}.npy")) for pid in range(len(SHAPES))]}
    rebuilt = sp.rebuild(shrunk, old_to_new, lost, param_persistence_threshold=0)
    sp.close()
    ok = True
    for pid in range(len(SHAPES)):
        (full,) = rebuilt.fetch([pid])
        ok = ok and full.shape == SHAPES[pid] and np.array_equal(full, trained(pid))
        rebuilt.release([pid])
    ok = ok and rebuilt.layout(2).count == 11  # 33 elements over 3 ranks
    rebuilt.close()
    flags = shrunk.allreduce(np.array([1 if ok else 0], np.int32), op="min")
    shrunk.barrier()  # world rank 0 serves the store: nobody leaves before all are done
    print(f"rank {world.rank} -> {shrunk.rank} of {shrunk.size}: "
          f"{'rebuilt set checked' if flags[0] else 'FAIL'}", flush=True)
    shrunk.destroy()
    world.destroy()
    return 0 if flags[0] else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except smd.Error as e:
        print(f"smd error: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
