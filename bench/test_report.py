#!/usr/bin/python3
"""Unit test of bench/report.py: the traffic model, the reference rate derived from it,
how a run's placement and checking are read, and the table it prints from a
small made-up results directory (no benchmark runs; meson test, suite bench).

usage: bench/test_report.py [unittest options]
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "report.py")
MIB = 1 << 20


def load_report():
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    spec = importlib.util.spec_from_file_location("report", REPORT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


report = load_report()


class Traffic(unittest.TestCase):
    N = 16 * MIB

    def total(self, coll, p, in_place=False):
        return report.traffic(coll, self.N, p, in_place)[0]

    def test_allreduce_reads_and_writes_the_vector_on_every_rank(self):
        for p in (2, 3, 4, 8):
            self.assertEqual(self.total("allreduce", p), 2 * p * self.N)
            self.assertEqual(self.total("allreduce", p, True), 2 * p * self.N)

    def test_allgather_and_reduce_scatter(self):
        for p in (2, 4):
            self.assertEqual(self.total("allgather", p), (p + 1) * self.N)
            self.assertEqual(self.total("reduce_scatter", p), (p + 1) * self.N)
            # In place an allgather's own block is already in its output.
            self.assertEqual(self.total("allgather", p, True), p * self.N)

    def test_broadcast_in_place_root_writes_nothing(self):
        # Root reads N once; the p-1 receivers write N each: pN in all.
        for p in (2, 4):
            self.assertEqual(self.total("broadcast", p, True), p * self.N)
            self.assertEqual(report.traffic("broadcast", self.N, p, True)[1], self.N)
            # Out of place the root also writes its own output.
            self.assertEqual(self.total("broadcast", p), (p + 1) * self.N)

    def test_unknown_collective(self):
        self.assertEqual(report.traffic("alltoall", self.N, 2), (None, None))
        self.assertIsNone(report.busbw_reference("alltoall", self.N, 2, 30.0))


class Reference(unittest.TestCase):
    B = 30.0  # GB/s of total traffic

    def bound(self, coll, p, in_place=False):
        return report.busbw_reference(coll, 64 * MIB, p, self.B, in_place)

    def test_closed_forms(self):
        for p in (2, 4):
            self.assertAlmostEqual(self.bound("allreduce", p), (p - 1) * self.B / p ** 2)
            self.assertAlmostEqual(self.bound("allgather", p), (p - 1) * self.B / (p * (p + 1)))
            self.assertAlmostEqual(self.bound("reduce_scatter", p), (p - 1) * self.B / (p * (p + 1)))
            self.assertAlmostEqual(self.bound("broadcast", p, True), self.B / p)
            self.assertAlmostEqual(self.bound("broadcast", p, False), self.B / (p + 1))

    def test_in_place_broadcast_bound_is_higher_by_p_plus_1_over_p(self):
        # The case: a fraction computed with (p+1)N was overstated by (p+1)/p.
        for p in (2, 4):
            self.assertAlmostEqual(self.bound("broadcast", p, True) / self.bound("broadcast", p, False),
                                   (p + 1) / p)

    def test_no_rate_no_reference(self):
        self.assertIsNone(report.busbw_reference("allreduce", MIB, 2, None))


class CacheSize(unittest.TestCase):
    def test_l3_from_the_meta_of_compare_sh(self):
        self.assertEqual(report.l3_bytes([{"meta": "compare", "l3_bytes": 32 * MIB}]), 32 * MIB)
        self.assertIsNone(report.l3_bytes([{"meta": "compare"}]))
        self.assertIsNone(report.l3_bytes([]))

    def test_in_cache_limit_is_half_the_l3_and_none_when_unknown(self):
        self.assertEqual(report.in_cache_limit(32 * MIB), 16 * MIB)
        self.assertEqual(report.in_cache_limit(260 * MIB), 130 * MIB)
        self.assertIsNone(report.in_cache_limit(None))


class Records(unittest.TestCase):
    def test_placement_from_the_json_else_the_default(self):
        self.assertTrue(report.ran_in_place([{"in_place": 1}], "allreduce"))
        self.assertFalse(report.ran_in_place([{"in_place": 0}], "broadcast"))
        self.assertTrue(report.ran_in_place([{}], "broadcast"))
        self.assertFalse(report.ran_in_place([], "allgather"))

    def test_unchecked_counts_runs_with_checked_0(self):
        self.assertEqual(report.unchecked([{"checked": 1}, {"checked": 0}, {}]), 1)


def bench_line(coll, p, nbytes, time_us, errors=0, checked=1, in_place=0):
    factor = report.BUSBW_FACTOR[coll](p)
    algbw = nbytes / time_us / 1e3
    return json.dumps({"collective": coll, "bytes": nbytes, "count": nbytes // 4 // (1 if coll in
                       ("allreduce", "broadcast") else p), "dtype": "float32", "op": "sum", "ranks": p,
                       "time_us": time_us, "algbw_gbps": algbw, "busbw_gbps": algbw * factor,
                       "errors": errors, "checked": checked, "in_place": in_place})


class Table(unittest.TestCase):
    """report.py on made-up results: the reference column and the markers."""

    def run_report(self, files):
        with tempfile.TemporaryDirectory() as d:
            for name, lines in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write("\n".join(lines) + "\n")
            proc = subprocess.run([sys.executable, REPORT, d], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True)
        return proc.returncode, proc.stdout

    def membw(self):
        return ["r0_membw.jsonl", [json.dumps({"probe": "membw", "kernel": "add", "threads": 2, "bytes": b,
                                               "best_gbps": rate / 3, "median_gbps": rate / 3,
                                               "best_traffic_gbps": rate})
                                   for b, rate in ((256 * MIB, 30.0), (4 * MIB, 120.0))]]

    def row(self, out, coll, p, size):
        for line in out.splitlines():
            f = line.split()
            if f[:4] == [coll, str(p)] + size.split():
                return line
        self.fail("no %s np=%d %s row in:\n%s" % (coll, p, size, out))

    def meta(self, l3):
        return ["meta.jsonl", [json.dumps({"meta": "compare", "host": "h", "nproc": 2, "cpu": "Some CPU",
                                           "l3_bytes": l3, "git": "abc", "impls": "smd mpi"})]]

    def test_broadcast_reference_counts_in_place_traffic(self):
        n = 16 * MIB
        # busbw 10 GB/s; in place T = 2N = 32 MiB > 16 MiB, so DRAM B = 30: reference 15, 66.7%.
        t = n / 10.0 / 1e3
        name, lines = self.membw()
        rc, out = self.run_report({
            name: lines,
            "r0_smd_broadcast_np2_big.jsonl": [bench_line("broadcast", 2, n, t, in_place=1)],
            "r0_mpi_broadcast_np2_big.jsonl": [bench_line("broadcast", 2, n, 2 * t, in_place=1)],
        })
        self.assertEqual(rc, 0, out)
        row = self.row(out, "broadcast", 2, "16 MiB")
        self.assertIn(" 15.0 ", row)
        self.assertIn("66.7%", row)
        self.assertIn("(in place: broadcast)", out)
        self.assertNotIn("not the same work", out)
        self.assertIn("NOT a bound", out)

    def allreduce_1mib(self, l3):
        # busbw 1 GB/s at np=2: T = 4 MiB of user buffers. In cache (B = 120) the
        # reference is 30 GB/s (3.3%); from DRAM (B = 30) 7.5 GB/s (13.3%).
        n = 1 * MIB
        t = n / 1.0 / 1e3
        files = dict([self.membw(), ("r0_smd_allreduce_np2_mid.jsonl", [bench_line("allreduce", 2, n, t)])])
        if l3 is not None:
            files.update([self.meta(l3)])
        rc, out = self.run_report(files)
        self.assertEqual(rc, 0, out)
        return self.row(out, "allreduce", 2, "1 MiB"), out

    def test_in_cache_rate_only_with_a_measured_l3_that_holds_the_probe(self):
        row, out = self.allreduce_1mib(32 * MIB)  # the probe's 3 x 4 MiB fit, and T <= 16 MiB
        self.assertIn(" 30.0 ", row)
        self.assertIn("3.3%", row)
        self.assertIn("Some CPU, L3 32 MiB", out)
        row, out = self.allreduce_1mib(None)  # no L3 recorded: DRAM rate everywhere
        self.assertIn(" 7.50 ", row)
        self.assertIn("13.3%", row)
        self.assertIn("L3 size is unknown", out)
        row, out = self.allreduce_1mib(8 * MIB)  # T = 4 MiB fits in half, but the probe's 12 MiB do not
        self.assertIn(" 7.50 ", row)
        self.assertIn("No probe point fits in the L3 of 8 MiB", out)

    def test_mixed_placement_is_noted(self):
        n = 1 * MIB
        name, lines = self.membw()
        rc, out = self.run_report({
            name: lines,
            "r0_smd_broadcast_np2_mid.jsonl": [bench_line("broadcast", 2, n, 100.0, in_place=1)],
            "r0_gloo_broadcast_np2_mid.jsonl": [bench_line("broadcast", 2, n, 900.0, in_place=0)],
        })
        self.assertEqual(rc, 0, out)
        self.assertIn("broadcast ran in place for smd and out of place for gloo", out)

    def test_best_mpi_column_for_reduce_scatter_only(self):
        n = 1 * MIB
        name, lines = self.membw()
        rc, out = self.run_report({
            name: lines,
            "r0_smd_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 100.0)],
            "r0_mpi_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 1000.0)],
            "r0_mpirs1_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 800.0)],
            "r0_mpirs3_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 400.0)],
            "r0_smd_allreduce_np2_mid.jsonl": [bench_line("allreduce", 2, n, 100.0)],
            "r0_mpi_allreduce_np2_mid.jsonl": [bench_line("allreduce", 2, n, 200.0)],
        })
        self.assertEqual(rc, 0, out)
        row = self.row(out, "reduce_scatter", 2, "1 MiB")
        # The fastest of default (1000 us), alg 1 (800) and alg 3 (400): alg 3.
        self.assertIn("alg 3", row)
        f = row.split()
        self.assertIn("10.0", f)  # smd/MPI: 100 us against the default's 1000
        self.assertIn("4.00", f)  # smd/best: against alg 3's 400
        f = self.row(out, "allreduce", 2, "1 MiB").split()
        # collective np size(2) smd "smd mem" "Open MPI" "MPI best" Gloo smd/MPI smd/best ...
        self.assertEqual(f[9], "2.00")
        self.assertEqual((f[7], f[10]), ("-", "-"))  # no forced runs for allreduce: "-", not n/a

    def test_best_mpi_may_be_the_default_and_forced_errors_count(self):
        n = 1 * MIB
        name, lines = self.membw()
        rc, out = self.run_report({
            name: lines,
            "r0_smd_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 100.0)],
            "r0_mpi_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 300.0)],
            "r0_mpirs2_reduce_scatter_np2_mid.jsonl": [bench_line("reduce_scatter", 2, n, 900.0, errors=2)],
        })
        self.assertEqual(rc, 1, out)  # a forced algorithm's wrong result fails the report too
        self.assertIn("default", self.row(out, "reduce_scatter", 2, "1 MiB"))
        self.assertIn("mpirs2 reduce_scatter np=2 1 MiB rep 0: 2 wrong elements", out)

    def test_unchecked_and_wrong_runs_are_marked(self):
        n = 256 * MIB
        name, lines = self.membw()
        rc, out = self.run_report({
            name: lines,
            "r0_smd_allreduce_np2_large.jsonl": [bench_line("allreduce", 2, n, 50000.0)],
            "r1_smd_allreduce_np2_large.jsonl": [bench_line("allreduce", 2, n, 51000.0, checked=0)],
            "r0_mpi_allreduce_np2_large.jsonl": [bench_line("allreduce", 2, n, 90000.0, errors=3)],
        })
        self.assertEqual(rc, 1, out)  # wrong results fail the report
        row = self.row(out, "allreduce", 2, "256 MiB")
        self.assertRegex(row, r"\] u ")
        self.assertIn(" E ", row)
        self.assertIn("smd allreduce np=2 256 MiB: 1 of 2 runs", out)
        self.assertIn("mpi allreduce np=2 256 MiB rep 0: 3 wrong elements", out)


if __name__ == "__main__":
    unittest.main()
