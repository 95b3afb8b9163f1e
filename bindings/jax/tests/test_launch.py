"""smd.jax's world formed without smdrun: from torchrun's environment and
from jax.distributed.initialize's arguments (2 processes each, started
here from the one-rank run of the suite)."""

import os
import subprocess
import sys
from pathlib import Path

from rank_fixtures import free_port

JOB = Path(__file__).resolve().parent / "jobs" / "sum_of_ranks.py"


def run_pair(argv_of, env_of):
    base = {k: v for k, v in os.environ.items() if not k.startswith("SMD_") or k in (
        "SMD_LIBRARY", "SMD_JAX_LIBRARY", "SMD_PLUGIN_PATH", "SMD_TIMEOUT")}
    base.pop("RANK", None), base.pop("WORLD_SIZE", None)
    procs = [subprocess.Popen([sys.executable, str(JOB)] + argv_of(r), env={**base, **env_of(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out
        assert f"rank {r} of 2 sum 3" in out, out


def test_torchrun_environment(solo):
    port = free_port()
    run_pair(lambda r: ["env"],
             lambda r: {"RANK": str(r), "WORLD_SIZE": "2", "LOCAL_RANK": str(r),
                        "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": str(port - 1)})


def test_jax_distributed_arguments(solo):
    address = f"127.0.0.1:{free_port()}"
    run_pair(lambda r: ["args", address, "2", str(r)], lambda r: {})
