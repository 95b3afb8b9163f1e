"""smd-bench's and smd-transport-check's command lines as a user meets them
(both read through CLI11, tools/common/cli_args.h): help exits 0, and each
bad usage exits 2 with one line that names the problem, then the usage.

usage: tool_usage_test.py SMD_BENCH SMD_TRANSPORT_CHECK
"""
import subprocess
import sys
import unittest

SMD_BENCH, TRANSPORT_CHECK = sys.argv[1], sys.argv[2]


def run(program, args):
    return subprocess.run([program] + args, capture_output=True, text=True, timeout=30)


class Usage(unittest.TestCase):
    def expect_usage_error(self, program, name, args, message):
        with self.subTest(args=args):
            done = run(program, args)
            self.assertEqual(done.returncode, 2, done.stderr)
            first_line = done.stderr.split("\n")[0]
            if message.endswith(".."):  # a bound of the build follows
                first_line = first_line[:len(name) + 2 + len(message)]
            self.assertEqual(first_line, f"{name}: {message}", done.stderr)
            self.assertIn(f"usage: {name}", done.stderr)
            self.assertEqual(done.stdout, "")

    def expect_help(self, program, args, words):
        with self.subTest(args=args):
            done = run(program, args)
            self.assertEqual(done.returncode, 0, done.stderr)
            for word in words:
                self.assertIn(word, done.stdout)

    def test_bench(self):
        self.expect_help(SMD_BENCH, ["--help"], ["COLLECTIVE", "--tensors", "--tune FILE"])
        self.expect_help(SMD_BENCH, ["allreduce", "-n", "3", "-h"], ["busbw"])
        for args, message in [
                ([], "no collective given"),
                (["frob"], "unknown collective 'frob'"),
                (["allreduce", "-x"], "unknown option '-x'"),
                (["allreduce", "extra"], "unknown option 'extra'"),
                (["allreduce", "-n"], "-n needs a value"),
                (["allreduce", "-n", "4x"], "bad value for -n: expected an integer, got '4x'"),
                (["allreduce", "-f="], "bad value for -f: expected a number, got '='"),
                (["allreduce", "-b", "1Q"], "bad value for -b: bad size '1Q'"),
                (["allreduce", "-d", "float8"], "unknown datatype 'float8'"),
                (["allreduce", "-o", "xor"], "unknown op 'xor'"),
                (["allreduce", "--json=1"], "option '--json' takes no value"),
                (["allreduce", "--tune", "f"], "--tune takes one argument, the file to write"),
                (["--tune"], "--tune needs a value"),
                (["broadcast", "--tensors", "2"], "--tensors and --model need allreduce"),
                (["allreduce", "-b", "1M", "-e", "1K"], "-b is larger than -e"),
                (["allreduce", "--tensors", "2", "--grouped", "--single"],
                 "--grouped and --single exclude each other")]:
            self.expect_usage_error(SMD_BENCH, "smd-bench", args, message)

    def test_transport_check(self):
        self.expect_help(TRANSPORT_CHECK, ["-h"], ["--only", "--timeout S", "Exit status"])
        self.expect_help(TRANSPORT_CHECK, ["--list", "-v"], ["connect_all"])
        for args, message in [
                ([], "no plugin given"),
                (["-n", "1", "p.so"], "-n 1: expected 2.."),  # ..kMaxRanks
                (["-n"], "-n needs a value"),
                (["--timeout", "0", "p.so"], "--timeout 0: expected seconds"),
                (["--timeout=", "p.so"], "--timeout : expected seconds"),
                (["-x", "p.so"], "unknown option -x"),
                (["a.so", "b.so"], "more than one plugin given"),
                (["--list=1"], "option '--list' takes no value")]:
            self.expect_usage_error(TRANSPORT_CHECK, "smd-transport-check", args, message)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
