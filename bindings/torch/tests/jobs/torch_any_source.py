"""torch 1.13's own distributed tests of receiving from any source
(test_send_recv_any_source*, from torch/testing/_internal/distributed/
distributed_test.py) with backend "smd". torch's MultiProcessTestCase starts
the ranks itself (spawn) and forms the group through a file:// store, so
this runs as a plain program, not under smdrun. Needs BACKEND=smd,
WORLD_SIZE and TEMP_DIR in the environment (test_jobs.py sets them)."""

import importlib.util
import sys
import unittest
from pathlib import Path

if importlib.util.find_spec("expecttest") is None:
    sys.path.append(str(Path(__file__).resolve().parent / "stubs"))

import smd.torch  # noqa: F401  (registers "smd", in the spawned ranks too)
from torch.testing._internal.distributed.distributed_test import DistributedTest, TestDistBackend


class TestSmdAnySource(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    # argv[1]: which tests, as unittest's -k pattern (default: all three).
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_send_recv_any_source"
    unittest.main(argv=[sys.argv[0], "-v", "-k", pattern])
