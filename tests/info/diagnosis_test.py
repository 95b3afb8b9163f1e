"""smd-info's diagnosis commands end to end (doctor, plugins, version,
params' effective values), smdrun --version, and the warning libsmd gives
at init for an SMD_* variable it does not know.

usage: diagnosis_test.py SMD_INFO SMDRUN VERSION   (SMD_PLUGIN_PATH from meson)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SMD_INFO, SMDRUN, VERSION = sys.argv[1:4]


def run(args, env_extra=None, drop=(), timeout=120):
    env = dict(os.environ)
    for name in drop:
        env.pop(name, None)
    env.update(env_extra or {})
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


class Doctor(unittest.TestCase):
    def test_passes_on_this_machine(self):
        done = run([SMD_INFO, "doctor"])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        for item in ("plugins", "transport shm", "transport tcp", "/dev/shm",
                     "cross-memory attach", "hwloc", "cuda", "store port"):
            self.assertIn(f"  {item}: ", done.stdout)
        self.assertNotIn("FAIL", done.stdout)
        self.assertIn("0 failed", done.stdout)

    def test_json(self):
        done = run([SMD_INFO, "doctor", "--json"])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        items = json.loads(done.stdout)
        by_check = {i["check"]: i for i in items}
        self.assertEqual(by_check["transport tcp"]["verdict"], "OK")
        for i in items:
            self.assertIn(i["verdict"], ("OK", "WARN"))
            self.assertEqual(set(i), {"check", "verdict", "detail", "fix"})

    def test_plugin_path_pointing_nowhere_fails(self):
        done = run([SMD_INFO, "doctor"], {"SMD_PLUGIN_PATH": "/nonexistent/smd-plugins"})
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("FAIL  SMD_PLUGIN_PATH: /nonexistent/smd-plugins: No such file or directory",
                      done.stdout)
        self.assertIn("fix: point SMD_PLUGIN_PATH at", done.stdout)

    def test_unloadable_plugin_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "libsmd-transport-broken.so"), "w") as f:
                f.write("not a shared object\n")
            env = {"SMD_PLUGIN_PATH": tmp + ":" + os.environ["SMD_PLUGIN_PATH"]}
            done = run([SMD_INFO, "doctor", "--json"], env)
            self.assertEqual(done.returncode, 1, done.stdout)
            items = {i["check"]: i for i in json.loads(done.stdout)}
            self.assertEqual(items["plugin broken"]["verdict"], "FAIL")
            self.assertIn("libsmd-transport-broken.so", items["plugin broken"]["detail"])
            listed = run([SMD_INFO, "plugins"], env)
            self.assertEqual(listed.returncode, 1)
            self.assertIn("does not load", listed.stdout)


class Plugins(unittest.TestCase):
    def test_lists_the_built_plugins(self):
        done = run([SMD_INFO, "plugins", "--json"])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        found = {p["name"]: p for p in json.loads(done.stdout)}
        for name in ("shm", "tcp"):
            self.assertTrue(found[name]["loads"])
            self.assertTrue(found[name]["path"].endswith(f"libsmd-transport-{name}.so"))
            self.assertEqual(found[name]["abi_version"], 1)
        text = run([SMD_INFO, "plugins"]).stdout
        self.assertRegex(text, r"\nshm +1 +loads +/")


class Version(unittest.TestCase):
    def test_smd_info_and_smdrun_agree(self):
        info = run([SMD_INFO, "version"])
        self.assertEqual(info.returncode, 0)
        self.assertIn(f"library: {VERSION} (", info.stdout)
        self.assertIn(f"version: {VERSION}\n", info.stdout)
        self.assertIn("abi: libsmd.so.0", info.stdout)
        self.assertRegex(info.stdout, r"plugins built: shm tcp")
        launcher = run([SMDRUN, "--version"])
        self.assertEqual(launcher.returncode, 0)
        # The build lines are the same; smd-info adds the library it loaded.
        self.assertEqual(launcher.stdout.split("\n", 1)[1], info.stdout.split("\n", 1)[1])
        as_json = json.loads(run([SMD_INFO, "--version", "--json"]).stdout)
        self.assertEqual(as_json["version"], VERSION)
        self.assertIn("git", as_json)


class Params(unittest.TestCase):
    def test_effective_values_and_origin(self):
        env = {"SMD_TIMEOUT": "42", "SMD_TCP_ADDR": "lo"}
        rows = {r["name"]: r for r in json.loads(run([SMD_INFO, "params", "--json"], env,
                                                     drop=("SMD_ALGO",)).stdout)}
        self.assertEqual((rows["SMD_TIMEOUT"]["value"], rows["SMD_TIMEOUT"]["origin"]),
                         ("42", "environment"))
        self.assertEqual(rows["SMD_TIMEOUT"]["default"], "300")
        self.assertEqual((rows["SMD_ALGO"]["value"], rows["SMD_ALGO"]["origin"]), ("auto", "default"))
        self.assertEqual((rows["SMD_TCP_ADDR"]["value"], rows["SMD_TCP_ADDR"]["origin"],
                          rows["SMD_TCP_ADDR"]["source"]), ("lo", "environment", "tcp"))
        text = run([SMD_INFO, "params"], env).stdout
        self.assertRegex(text, r"\nSMD_TIMEOUT +42 +environment +seconds +300 +core ")

    def test_tuning_file_values(self):
        with tempfile.NamedTemporaryFile("w", suffix=".tune") as f:
            f.write("# measured\nnet_gbps = 3.5\n")
            f.flush()
            rows = {r["name"]: r for r in json.loads(
                run([SMD_INFO, "params", "--json"], {"SMD_TUNING_FILE": f.name}).stdout)}
        self.assertEqual((rows["tuning: net_gbps"]["value"], rows["tuning: net_gbps"]["origin"],
                          rows["tuning: net_gbps"]["default"]), ("3.5", "tuning file", "1.25"))
        self.assertEqual(rows["tuning: net_alpha_us"]["origin"], "default")
        self.assertEqual(rows["SMD_TUNING_FILE"]["origin"], "environment")


class UnknownVariables(unittest.TestCase):
    def world(self, env):
        # smd-info topology forms a world: libsmd's init under smdrun.
        return run([SMDRUN, "-n", "2", "--timeout", "60", SMD_INFO, "topology"], env)

    def test_misspelled_name_suggests_the_known_one(self):
        done = self.world({"SMD_TRANSPORTT": "shm"})
        self.assertEqual(done.returncode, 0, done.stderr)
        want = "SMD_TRANSPORTT is not a variable smd reads; did you mean SMD_TRANSPORT?"
        self.assertEqual(done.stderr.count(want), 1, done.stderr)

    def test_malformed_debug_level_names_the_levels(self):
        done = self.world({"SMD_DEBUG": "bogus"})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("SMD_DEBUG=bogus is not one of none, off, warn, info or trace", done.stderr)

    def test_known_names_are_quiet(self):
        done = self.world({"SMD_TIMEOUT": "60", "SMD_TCP_ADDR": "127.0.0.1", "SMD_TEST_ANYTHING": "1"})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("is not a variable smd reads", done.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
