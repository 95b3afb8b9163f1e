"""Tests that start jobs of their own: the init methods, a killed rank, a
timeout, the DDP example. They run once, in the one-rank suite."""

import json
import os
import re
import shutil
import socket
import subprocess

import pytest

from conftest import HEAVY, JOBS, LAUNCHER_VARIABLES, PYTHON, REPO, launch, smdrun  # noqa: F401


def free_port_pair():
    """A free port whose successor is free too (smd serves on MASTER_PORT + 1)."""
    for _ in range(100):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            try:
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    pytest.fail("no pair of free ports")


def test_smd_init_under_torchrun(solo, tmp_path):
    """A real torch.distributed.run (1.13 spelling, static rendezvous): its
    agent holds MASTER_PORT; smd.init() forms its worlds beside it and
    beside init_process_group's gloo group, with a token it drew itself."""
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    env["SMD_RENDEZVOUS_DIR"] = str(tmp_path / "notes")
    command = [PYTHON, str(JOBS / "torchrun.py"), "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port_pair()),
               str(JOBS / "torchrun_smd.py")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=150, env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    for r in range(2):
        assert f"ok torchrun {r}" in out, out


@pytest.mark.parametrize("method", ["env", "tcp", "file"])
def test_init_method(solo, tmp_path, method):
    status, out = launch(2, "init_methods.py", method, tmp_path / "store")
    assert status == 0, out
    for r in range(2):
        assert f"ok {method} {r}" in out, out


@pytest.mark.skipif(tuple(int(v) for v in __import__("torch").__version__.split(".")[:2]) < (2, 2),
                    reason="device-qualified backend names and init_device_mesh are torch 2.x's")
def test_backend_names_and_reinit(solo):
    """"cpu:smd", "smddp" (with new_group and a DeviceMesh) and "smd" again,
    one after another in one process: each forms, reduces and titles its
    events with its own name."""
    status, out = launch(2, "backend_names.py", timeout=150)
    assert status == 0, out
    for r in range(2):
        assert f"ok names {r}" in out, out


def test_killed_rank_ends_pending_works(solo):
    """One rank of three dies (SIGKILL); every pending Work of the other two
    ends with PeerFailureError naming it, within seconds, not at the
    group's 60 s timeout."""
    status, out = launch(3, "killed_rank.py", timeout=100)
    reports = re.findall(r"^\[([01])\] (\w+) after ([0-9.]+) s: (.*)$", out, re.M)
    assert len(reports) == 6, out
    assert any(kind == "PeerFailureError" and "rank 2 " in message
               for _, kind, _, message in reports), out
    assert all(float(seconds) < 20 for _, _, seconds, _ in reports), out
    assert status == 128 + 9, out  # smdrun: the first rank to fail died of SIGKILL


def test_elastic_example_shrinks_and_grows_the_default_group(solo):
    """examples/elastic/torch_elastic.py: rank 2 of 3 dies; the survivors'
    all_reduce fails, smd.torch.elastic's shrink rebuilds the default group
    over the two (they reduce at 2), then a replacement joins through grow
    and all three reduce and broadcast on the default group."""
    status, out = launch(3, REPO / "examples" / "elastic" / "torch_elastic.py", timeout=100,
                         env={"SMD_TIMEOUT": "30"}, options=("--grace", "60"))
    assert sorted(re.findall(r"^\[([01])\] rank \1: (PeerFailure|Revoked)Error$", out, re.M)) in (
        [("0", "PeerFailure"), ("1", "PeerFailure")], [("0", "PeerFailure"), ("1", "Revoked")],
        [("0", "Revoked"), ("1", "PeerFailure")]), out
    assert sorted(re.findall(r"^\[([01])\] shrunk: rank ([01]) of 2$", out, re.M)) == [
        ("0", "0"), ("1", "1")], out
    assert "replacement: joined as rank 2 of 3" in out, out
    oks = re.findall(r"^\[[01]\] (replacement: )?rank ([012]) of 3: torch elastic ok$", out, re.M)
    assert sorted(oks) == [("", "0"), ("", "1"), ("replacement: ", "2")], out
    assert status == 128 + 9, out  # smdrun reports the killed rank


def test_timeout_ends_pending_works(solo):
    status, out = launch(2, "timeout.py", timeout=100)
    first = re.findall(r"^\[0\] (\w+) after ([0-9.]+) s: (.*)$", out, re.M)
    assert len(first) == 2, out
    assert first[0][0] == "TimeoutError", out
    assert all(2.5 < float(seconds) < 15 for _, seconds, _ in first), out
    # torch's own test_barrier_timeout_* match gloo's wording.
    assert re.search(" (Timed out|closed|timeout) ", first[0][2]), first[0][2]
    late = re.findall(r"^\[1\] late: (\w+) after", out, re.M)
    assert late and late[0] != "no error", out
    assert status == 0, out


def test_smd_trace_covers_torch_jobs(solo, tmp_path):
    """SMD_TRACE works under torch.distributed: the backend calls the C
    library, so each rank writes its Chrome trace with the job's
    allreduces, closed as valid JSON even if the world outlives the script."""
    trace = tmp_path / "t.json"
    status, out = launch(2, "init_methods.py", "env", env={"SMD_TRACE": str(trace)})
    assert status == 0, out
    for r in range(2):
        with open(tmp_path / f"t.rank{r}.json") as f:
            events = json.load(f)["traceEvents"]
        assert {e["pid"] for e in events} == {r}
        assert sum(e["name"] == "allreduce" and e["ph"] == "X" for e in events) >= 2, events


def test_example_train_ddp(solo):
    """examples/torch/train_ddp.py: DDP over smd matches DDP over gloo."""
    ranks, steps = (4, 60) if HEAVY else (2, 30)
    status, out = launch(ranks, REPO / "examples" / "torch" / "train_ddp.py", "--steps", steps,
                         timeout=200)
    assert status == 0, out
    assert re.search(rf"train_ddp: {ranks} ranks, {steps} steps", out), out


def test_example_train_sharded(solo):
    """examples/torch/train_sharded.py: a model 3x the per-rank budget
    (parameters + Adam state) trains on 4 ranks within the budget."""
    steps = 60 if HEAVY else 20
    status, out = launch(4, REPO / "examples" / "torch" / "train_sharded.py", "--steps", steps,
                         timeout=200)
    assert status == 0, out
    assert re.search(rf"train_sharded: 4 ranks, \d+ parameters .*, {steps} steps", out), out
    assert "bound holds" in out, out


def test_torch_own_any_source_tests(solo, tmp_path):
    """torch 1.13's distributed tests test_send_recv_any_source* (its own
    test file; its MultiProcessTestCase starts 3 ranks itself, not smdrun)
    pass with backend smd: recv(src=None) and irecv(...)._source_rank()."""
    import importlib.util
    import os
    import subprocess
    if importlib.util.find_spec("torch.testing._internal.distributed") is None:
        pytest.skip("this torch has no torch.testing._internal.distributed")
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    env.update(BACKEND="smd", WORLD_SIZE="3", TEMP_DIR=str(tmp_path))
    # The plain test normally; with SMD_TEST_HEAVY=1 the profiler variants too.
    # (unittest -k: a substring, or an fnmatch pattern of the full name.)
    pattern = "test_send_recv_any_source" if HEAVY else "*.test_send_recv_any_source"
    done = subprocess.run([PYTHON, str(JOBS / "torch_any_source.py"), pattern],
                          capture_output=True, text=True, timeout=400, env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    ran = re.search(r"^Ran (\d+) tests? in", out, re.M)
    assert ran and int(ran.group(1)) == (3 if HEAVY else 1), out
    assert re.search(r"^OK$", out, re.M), out


def _launched_ranks(out):
    """The JSON objects launcher_init.py prints, by rank. mpirun forwards
    each rank's output as it comes, so two ranks' lines may share one line."""
    rows = []
    for text in re.findall(r'\{"rank": [^{}]*\}', out):
        rows.append(json.loads(text))
    return {row["rank"]: row for row in rows}


@pytest.mark.parametrize("backend", ["smd", "smddp"])
def test_init_under_mpirun(solo, tmp_path, backend):
    """mpirun -np 2 python train.py with init_process_group("smd") or
    SMDDP's init_process_group(): rank, size and the store come from Open
    MPI's variables through smd, not torch's "RANK expected" error."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("no mpirun (Debian: openmpi-bin)")
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    env.update(SMD_RENDEZVOUS_DIR=str(tmp_path / "notes"), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_plm="isolated",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    command = [mpirun, "-np", "2", "--oversubscribe", "-x", "PYTHONPATH", "-x", "SMD_LIBRARY",
               "-x", "SMD_TORCH_BACKEND", "-x", "SMD_PLUGIN_PATH", "-x", "SMD_RENDEZVOUS_DIR",
               "-x", "OMP_NUM_THREADS", PYTHON, str(JOBS / "launcher_init.py"), backend]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    ranks = _launched_ranks(out)
    assert sorted(ranks) == [0, 1], out
    for rank, row in ranks.items():
        assert row["size"] == 2 and row["sum_ok"] and row["backend"] == backend, out
        if backend == "smddp":
            assert row["local_rank"] == rank, out


def test_init_under_slurm_variables(solo, tmp_path):
    """Two ranks with only Slurm's variables (as srun sets them on one
    node): init_process_group("smd") forms the group from them."""
    base = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    base.update(SMD_RENDEZVOUS_DIR=str(tmp_path / "notes"), SLURM_NTASKS="2",
                SLURM_TASKS_PER_NODE="2", SLURM_JOB_ID=str(os.getpid()), SLURM_STEP_ID="0",
                SLURM_NODEID="0", SLURM_STEP_NODELIST=socket.gethostname())
    procs = []
    for rank in range(2):
        env = dict(base, SLURM_PROCID=str(rank), SLURM_LOCALID=str(rank))
        procs.append(subprocess.Popen([PYTHON, str(JOBS / "launcher_init.py"), "smd"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=300)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    out = "".join(outs)
    assert all(p.returncode == 0 for p in procs), out
    ranks = _launched_ranks(out)
    assert sorted(ranks) == [0, 1], out
    assert all(row["size"] == 2 and row["sum_ok"] for row in ranks.values()), out
