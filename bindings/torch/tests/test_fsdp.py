"""torch's own sharding over smd: FullyShardedDataParallel, FSDP2
(fully_shard) and HSDP (fully_shard over a 2-D device mesh, replicated
across smdrun's fake nodes) train tests/gpt.py's GPT-style model on 4
ranks over "smd", and FSDP over "smddp" with SageMaker's recipe (its two
lines, nothing else changed), to the same losses and parameters as the
same script over gloo. One job per backend (jobs/fsdp_gpt.py) trains every
wrapper; they run once, in the one-rank suite. torch 1.13 has no FSDP2 or
DeviceMesh: these tests need torch >= 2 (scripts/test.sh runs the suite
under a torch 2.x interpreter too)."""

import pytest
import torch
import torch.distributed as dist

from conftest import launch

TORCH = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
pytestmark = pytest.mark.skipif(TORCH < (2, 0), reason=f"torch {torch.__version__} has no "
                                "FSDP2 (fully_shard) or DeviceMesh: needs torch >= 2")

RANKS, NODES, STEPS = 4, 2, 4
WRAPPERS = ("fsdp", "fsdp2", "hsdp")
TOLERANCE = 1e-6  # float32: only the order of the reductions may differ


def run(backend, wrappers, tmp_path):
    out = tmp_path / f"{backend}.pt"
    status, text = launch(RANKS, "fsdp_gpt.py", backend, ",".join(wrappers), out, STEPS,
                          timeout=400, options=["--nodes", str(NODES)])
    assert status == 0, text
    saved = torch.load(out)
    assert saved["backend"] == backend, saved["backend"]
    return saved["results"]


@pytest.fixture(scope="module")
def over_gloo(world, tmp_path_factory):
    # Module-scoped fixtures are set up before `solo`: skip here too.
    if dist.get_world_size() != 1:
        pytest.skip("launches its own jobs: runs in the one-rank suite")
    return run("gloo", WRAPPERS, tmp_path_factory.mktemp("gloo"))


def assert_equal_runs(got, reference, label):
    assert len(got["losses"]) == RANKS
    for rank, (mine, ref) in enumerate(zip(got["losses"], reference["losses"])):
        assert len(mine) == STEPS
        for step, (a, b) in enumerate(zip(mine, ref)):
            assert abs(a - b) <= TOLERANCE * max(1.0, abs(b)), \
                f"{label}: rank {rank} step {step}: loss {a} vs gloo's {b}"
    assert got["state"].keys() == reference["state"].keys()
    for name, value in reference["state"].items():
        torch.testing.assert_close(got["state"][name], value, rtol=TOLERANCE, atol=TOLERANCE,
                                   msg=lambda m, name=name: f"{label}: {name}: {m}")


def test_fsdp_fsdp2_hsdp_over_smd_equal_gloo(solo, over_gloo, tmp_path):
    """FSDP, FSDP2 and HSDP over smd: gloo's losses and parameters."""
    got = run("smd", WRAPPERS, tmp_path)
    for wrapper in WRAPPERS:
        assert_equal_runs(got[wrapper], over_gloo[wrapper], f"{wrapper} over smd")


def test_fsdp_over_smddp_equals_gloo(solo, over_gloo, tmp_path):
    """SageMaker's FSDP recipe with SMDDP's two lines: gloo's results."""
    got = run("smddp", ("fsdp", "fsdp2"), tmp_path)
    for wrapper in ("fsdp", "fsdp2"):
        assert_equal_runs(got[wrapper], over_gloo[wrapper], f"{wrapper} over smddp")


def test_functional_all_gather(world, rank, size):
    """torch 2.x's functional all-gathers (what DTensor's redistribute and
    distributed checkpoint's full state dicts call) reach the backend's
    allgather_into_tensor_coalesced: every rank's tensors, in rank order."""
    import torch.distributed._functional_collectives as funcol
    # The newer names where this torch has them, else the older ones.
    gather_one = getattr(funcol, "all_gather_single", None) or funcol.all_gather_tensor
    gather_many = getattr(funcol, "all_gather_single_coalesced", None) \
        or funcol.all_gather_into_tensor_coalesced
    one = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 100 * rank
    got = gather_one(one, 0, world)
    expected = torch.cat([torch.arange(6, dtype=torch.float32).reshape(2, 3) + 100 * r
                          for r in range(size)])
    torch.testing.assert_close(torch.as_tensor(got) + 0, expected, rtol=0, atol=0)
    pair = [torch.full((3,), float(rank)), torch.arange(4, dtype=torch.int64) * (rank + 1)]
    gathered = gather_many(pair, world)
    torch.testing.assert_close(gathered[0] + 0, torch.arange(size, dtype=torch.float32)
                               .repeat_interleave(3), rtol=0, atol=0)
    torch.testing.assert_close(gathered[1] + 0, torch.cat([torch.arange(4) * (r + 1)
                                                           for r in range(size)]), rtol=0, atol=0)
