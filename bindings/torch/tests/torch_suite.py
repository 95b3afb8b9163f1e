"""torch's own distributed test suite (DistributedTest._DistTestBase, from
torch/testing/_internal/distributed/distributed_test.py, shipped with torch)
with smd as a strict drop-in for gloo: the suite is told BACKEND=gloo, and
with --backend smd every process group it makes (init_process_group, new_group,
the subgroups of its helpers) is smd's, because gloo's registration in
torch.distributed.Backend is replaced by smd's. --backend gloo runs gloo
itself, to find the tests gloo passes.

torch's MultiProcessTestCase starts the ranks (spawn) and forms the groups
through a file:// store: run this as a plain program, not under smdrun.

    torch_suite.py --backend gloo --world-size 2 --record passed-gloo-2.txt
    torch_suite.py --backend smd --world-size 2 --tests passed-gloo-2.txt
    torch_suite.py --backend smd --world-size 3 -k test_all_gather

Exit status 0 when every selected test passed (or was skipped by the suite
itself); the summary names the others. Needs torch >= 2.1 (gloo registered
through Backend.register_backend) for --backend smd.
"""

import argparse
import importlib.util
import os
import sys
import tempfile
import time
import unittest
from pathlib import Path

# Read before torch's test modules import: they read BACKEND, WORLD_SIZE and
# TEMP_DIR at import time, in the spawned ranks too (which re-import this
# module as __mp_main__ with the parent's environment).
if __name__ == "__main__":
    _parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _parser.add_argument("--backend", choices=["gloo", "smd"], default="smd")
    _parser.add_argument("--world-size", type=int, default=2)
    _parser.add_argument("--tests", help="file of test names (one a line, # comments) to run")
    _parser.add_argument("-k", dest="pattern", help="only tests whose name contains this")
    _parser.add_argument("--record", help="write the names of the tests that passed here")
    ARGS = _parser.parse_args()
    os.environ["SMD_SUITE_BACKEND"] = ARGS.backend
    os.environ["WORLD_SIZE"] = str(ARGS.world_size)
    os.environ["BACKEND"] = "gloo"
    os.environ.setdefault("TEMP_DIR", tempfile.mkdtemp(prefix="smd-torch-suite-"))

if importlib.util.find_spec("expecttest") is None:  # Debian has no expecttest
    sys.path.append(str(Path(__file__).resolve().parent / "jobs" / "stubs"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest,
    TestDistBackend,
)


def _use_smd_for_gloo():
    """Every group with backend "gloo" becomes smd's."""
    import smd.torch

    # torch 2.x registers its built-in backends on first use (through its
    # entry points): make it register gloo now, then take gloo's place.
    ensure = getattr(dist.Backend, "_ensure_backend_registered", None)
    if ensure is not None:
        ensure("gloo")
    plugins = getattr(dist.Backend, "_plugins", {})
    if "GLOO" not in plugins:
        sys.exit("torch_suite.py: this torch does not register gloo as a plugin "
                 "(needs torch >= 2.1); --backend smd cannot replace it")

    def create(opts, backend_options=None):
        return smd.torch.ProcessGroupSmd(opts.store, opts.group_rank, opts.group_size,
                                         opts.timeout, "gloo")

    plugins["GLOO"] = type(plugins["GLOO"])(create, True)


if os.environ.get("SMD_SUITE_BACKEND") == "smd":
    _use_smd_for_gloo()


class TorchSuite(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        # fork, not spawn (torch 2.x's suite dropped its fork helper): a
        # spawned rank imports torch again, 10-40 s a test on a loaded
        # 2-core machine. No CUDA here, so fork is safe.
        if hasattr(self, "_fork_processes"):
            self._fork_processes()
        else:
            self._start_processes(torch.multiprocessing.get_context("fork").Process)


def _selected(loader):
    names = loader.getTestCaseNames(TorchSuite)
    if ARGS.tests:
        wanted = []
        for line in Path(ARGS.tests).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                wanted.append(line)
        missing = sorted(set(wanted) - set(names))
        if missing:
            sys.exit(f"torch_suite.py: not tests of this torch: {' '.join(missing)}")
        names = wanted
    if ARGS.pattern:
        names = [n for n in names if ARGS.pattern in n]
    return names


class _Outcomes(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = []
        self.started = {}
        self.seconds = {}

    def startTest(self, test):
        self.started[test._testMethodName] = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        name = test._testMethodName
        self.seconds[name] = time.monotonic() - self.started.get(name, time.monotonic())
        super().stopTest(test)

    def addSuccess(self, test):
        self.passed.append(test._testMethodName)
        super().addSuccess(test)


def main():
    loader = unittest.TestLoader()
    names = _selected(loader)
    suite = unittest.TestSuite(TorchSuite(n) for n in names)
    print(f"torch_suite.py: {len(names)} tests, backend {ARGS.backend} "
          f"(the suite is told gloo), {ARGS.world_size} ranks", flush=True)
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_Outcomes)
    start = time.monotonic()
    result = runner.run(suite)
    if ARGS.record:
        Path(ARGS.record).write_text("".join(n + "\n" for n in sorted(result.passed)))
    slow = sorted(result.seconds.items(), key=lambda kv: -kv[1])[:5]
    print(f"torch_suite.py: {len(result.passed)} passed, {len(result.skipped)} skipped, "
          f"{len(result.failures)} failed, {len(result.errors)} errors of {len(names)} "
          f"in {time.monotonic() - start:.0f} s; slowest: "
          + ", ".join(f"{n} {s:.0f} s" for n, s in slow), flush=True)
    for test, _ in result.failures + result.errors:
        print(f"  not passed: {test._testMethodName}")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
