"""SageMaker compatibility: SMDDP's two lines and SMP's rank API run on
smd (jobs of their own, in the one-rank suite), and the rank tables of
SMP's documentation (the seed smd was made from) come out at 8 ranks."""

import json
import re

import pytest

from conftest import HEAVY, launch

KINDS = ("tp", "pp", "dp", "rdp", "mp")


def test_smddp_two_lines(solo):
    status, out = launch(2, "smddp_two_lines.py", timeout=120)
    assert status == 0, out
    for r in range(2):
        assert (f"backend=smddp rank={r} size=2 local_rank={r} local_size=2 "
                "sum=[3.0, 3.0, 3.0]") in out, out


def smp_job(config):
    """Run jobs/smp_ranks.py on 8 ranks; {rank: {"tp_rank": .., "tp": (members), ...}}."""
    status, out = launch(8, "smp_ranks.py", json.dumps(config), timeout=240)
    assert status == 0, out
    table = {}
    for line in re.findall(r"^\[\d\] (rank=\d .*size=.*)$", out, re.M):
        fields = dict(item.split("=") for item in line.split())
        table[int(fields["rank"])] = {
            k: tuple(map(int, v.split(","))) if k in KINDS else int(v)
            for k, v in fields.items()}
    assert sorted(table) == list(range(8)), out
    assert len(re.findall(r"not implemented: smp.DistributedModel", out)) == 8, out
    return table


# SMP's documentation, "Placement Strategy with Tensor Parallelism": 8
# devices, tp = pp = rdp = 2, placement "PTD": (rdp_rank, pp_rank, tp_rank)
# of ranks 0..7.
PTD = [(0, 0, 0), (1, 0, 0), (0, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 0), (0, 1, 1), (1, 1, 1)]


def test_smp_ranks_tensor_parallel_ptd(solo):
    table = smp_job({"tensor_parallel_degree": 2, "pipeline_parallel_degree": 2,
                     "placement_strategy": "PTD", "ddp": True})
    for rank, (rdp, pp, tp) in enumerate(PTD):
        row = table[rank]
        assert (row["rdp_rank"], row["pp_rank"], row["tp_rank"]) == (rdp, pp, tp), row
        assert (row["tp_size"], row["pp_size"], row["rdp_size"]) == (2, 2, 2), row
        assert (row["dp_size"], row["mp_size"]) == (4, 4), row
        assert (row["size"], row["local_size"], row["local_rank"]) == (8, 8, rank), row
        # Every group is the ranks sharing the other coordinates.
        for kind, same in (("tp", (0, 1)), ("pp", (0, 2)), ("rdp", (1, 2)), ("dp", (1,)),
                           ("mp", (0,))):
            want = tuple(r for r, c in enumerate(PTD) if all(c[i] == PTD[rank][i] for i in same))
            assert row[kind] == want, (rank, kind, row)


@pytest.mark.skipif(not HEAVY, reason="a second 8-rank torch job: SMD_TEST_HEAVY=1 "
                    "(tests/groups checks the same layout without a job)")
def test_smp_ranks_partitions_spread(solo):
    """"Ranking Basics without Tensor Parallelism": 8 processes,
    partitions=2, placement "spread": mp groups [0,4] [1,5] [2,6] [3,7],
    dp groups [0,1,2,3] [4,5,6,7]; the dp_rank of process 6 is 2."""
    table = smp_job({"partitions": 2, "placement_strategy": "spread"})
    for rank, row in table.items():
        assert row["mp"] == (rank % 4, rank % 4 + 4), row
        assert row["dp"] == tuple(range(rank // 4 * 4, rank // 4 * 4 + 4)), row
        assert row["mp_rank"] == rank // 4, row
    assert table[6]["dp_rank"] == 2


def test_smp_config_errors(world):
    import smd
    import smd.smp as smp

    with pytest.raises(smd.InvalidArgumentError, match="name the same degree"):
        smp._resolve({"partitions": 2, "pipeline_parallel_degree": 4})
    with pytest.raises(smd.InvalidArgumentError, match="positive integer"):
        smp._resolve({"tensor_parallel_degree": 0})
    config = smp._resolve({"partitions": 2, "microbatches": 4})
    assert config["pipeline_parallel_degree"] == 2 and config["microbatches"] == 4
    with pytest.raises(smd.InvalidUsageError, match="smp.init"):
        smp.tp_rank()
    with pytest.raises(NotImplementedError, match="DistributedOptimizer"):
        smp.DistributedOptimizer
