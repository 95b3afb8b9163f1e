"""smd-info flight on dumps smd did not write: crafted sizes, ranks and
entries are refused with a message naming the file and the field, fast
(a comm_size of 2e9 once ran for seconds or ended in bad_alloc), and a
FIFO or device named like a dump is not read.

usage: flight_dump_test.py SMD_INFO
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

SMD_INFO = sys.argv[1]


def dump(**changes):
    """A dump as the flight recorder writes one (2 ranks, one call), with changes."""
    d = {"smd_flight_recorder": 1, "reason": "abort", "pid": 1, "world_rank": 0,
         "world_size": 2, "comm": 0, "comm_first_member": 0, "comm_rank": 0,
         "comm_size": 2, "capacity": 16, "calls": 1, "now_ns": 1,
         "entries": [{"seq": 0, "kind": "allreduce", "datatype": "float32", "op": "sum",
                      "count": 8, "root": 0, "algorithm": "ring", "state": "done",
                      "queued_ns": 0, "start_ns": 1, "end_ns": 2, "result": "SMD_SUCCESS"}]}
    d.update(changes)
    return d


class CraftedDumps(unittest.TestCase):
    def flight(self, dumps, seconds=10):
        with tempfile.TemporaryDirectory() as dir:
            for i, d in enumerate(dumps):
                with open(os.path.join(dir, f"smd-flight.rank{i}.comm0-0.json"), "w") as f:
                    json.dump(d, f)
            t0 = time.monotonic()
            done = subprocess.run([SMD_INFO, "flight", dir], capture_output=True, text=True,
                                  timeout=seconds)
            self.assertLess(time.monotonic() - t0, seconds)
            return done

    def test_a_real_dump_is_read(self):
        done = self.flight([dump(), dump(world_rank=1, comm_rank=1)])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("mismatched calls: none", done.stdout)

    def test_crafted_numbers_are_refused_by_name(self):
        entry = dump()["entries"][0]
        cases = {
            "comm_size 2000000000": dump(comm_size=2000000000),
            "comm_size -4": dump(comm_size=-4),
            "comm_rank 7": dump(comm_rank=7),
            "world_rank -1": dump(world_rank=-1),
            "world_size 0": dump(world_size=0),
            "comm_first_member 9": dump(comm_first_member=9),
            "has root 5": dump(entries=[dict(entry, root=5)]),
            "negative or missing seq or count": dump(entries=[dict(entry, count=-1)]),
            "entries is not a list": dump(entries=3),
        }
        for want, d in cases.items():
            with self.subTest(want):
                done = self.flight([d])
                self.assertNotEqual(done.returncode, 0, done.stdout)
                self.assertIn("not a flight recorder dump smd wrote: ", done.stderr)
                self.assertIn(want, done.stderr)
                self.assertNotIn("Traceback", done.stderr)
                self.assertNotIn("bad_alloc", done.stderr)

    def test_one_bad_dump_does_not_hide_the_others(self):
        done = self.flight([dump(), dump(world_rank=1, comm_rank=1, comm_size=3)])
        self.assertEqual(done.returncode, 1)
        self.assertIn("comm_size 3 differs", done.stderr)
        self.assertIn("comm 0 (first member world rank 0, 2 ranks): dumps from 1", done.stdout)

    def test_a_fifo_named_like_a_dump_is_not_read(self):
        with tempfile.TemporaryDirectory() as dir:
            os.mkfifo(os.path.join(dir, "smd-flight.rank0.comm0-0.json"))
            done = subprocess.run([SMD_INFO, "flight", dir], capture_output=True, text=True,
                                  timeout=10)
            self.assertEqual(done.returncode, 1)
            self.assertIn("not a regular file", done.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
