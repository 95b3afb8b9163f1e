"""The plugin template builds out of tree against an installed smd and
passes the conformance suite, the way an interconnect vendor would use it:

1. `meson install --destdir TMP`: smd as installed (headers, libsmd,
   smd.pc, tools, plugins); install paths from `meson introspect`.
2. A copy of examples/plugin-template, far from the source tree, built
   with its own Makefile and nothing but pkg-config's answers (smd.pc
   relocated into TMP with --define-variable=prefix).
3. `make check`: the installed smd-transport-check on the built plugin,
   2 processes, passing without warnings (it exports only its entry).
4. `make install` into pkg-config's plugindir, then an installed program
   (smdrun + smd-bench, two fake nodes, SMD_TRANSPORT=tcp, no
   SMD_PLUGIN_PATH) must load the plugin from there.

usage: out_of_tree_build.py MESON BUILD_ROOT SOURCE_ROOT PREFIX
Exit 0 = pass, 1 = fail, 77 = skipped (no pkg-config, make or cc)."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def run(cmd, env=None, cwd=None, timeout=600):
    start = time.monotonic()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - start
    print(f"$ {' '.join(shlex.quote(c) for c in cmd)}  ({took:.1f} s, exit {done.returncode})")
    if done.returncode != 0:
        print(done.stdout[-4000:])
        print(done.stderr[-4000:])
        raise SystemExit(f"FAIL: {cmd[0]} exited {done.returncode}")
    return done


def main():
    meson, build, source, prefix = sys.argv[1:5]
    for tool in ("pkg-config", "make", "cc"):
        if not shutil.which(tool):
            print(f"{tool} is not installed")
            return SKIP

    with tempfile.TemporaryDirectory(prefix="smd-oot-") as tmp:
        dest = os.path.join(tmp, "dest")
        run([meson, "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest])
        installed = json.loads(run([meson, "introspect", build, "--installed"]).stdout)

        def where(name):
            hits = [p for p in installed.values() if os.path.basename(p) == name]
            if len(hits) != 1:
                raise SystemExit(f"FAIL: meson introspect --installed lists {hits} for {name}")
            return dest + hits[0]

        pc = where("smd.pc")
        libsmd_dir = os.path.dirname(where("libsmd.so"))
        smdrun = where("smdrun")
        bench = where("smd-bench")
        relocated = dest + prefix

        env = dict(os.environ)
        for leak in ("SMD_PLUGIN_PATH", "PKG_CONFIG_LIBDIR", "LD_LIBRARY_PATH"):
            env.pop(leak, None)
        env["PKG_CONFIG_PATH"] = os.path.dirname(pc)
        env["PKG_CONFIG"] = f"pkg-config --define-variable=prefix={relocated}"
        env["PKG_CONFIG_DISABLE_UNINSTALLED"] = "1"

        def pkg(*args):
            cmd = shlex.split(env["PKG_CONFIG"]) + list(args) + ["smd"]
            return run(cmd, env=env).stdout.strip()

        cflags = pkg("--cflags")
        plugindir = pkg("--variable=plugindir")
        for what, value in (("--cflags", cflags), ("plugindir", plugindir),
                            ("bindir", pkg("--variable=bindir"))):
            if relocated not in value:
                raise SystemExit(f"FAIL: pkg-config {what} gives {value!r}, not under {relocated}")

        template = os.path.join(tmp, "vendor", "plugin-template")
        shutil.copytree(os.path.join(source, "examples", "plugin-template"), template)
        built = run(["make", "-C", template], env=env)
        if "warning:" in built.stderr:
            print(built.stderr)
            raise SystemExit("FAIL: the template does not build cleanly with -Wall -Wextra")
        plugin = os.path.join(template, "libsmd-transport-tcp.so")
        check = run(["make", "-C", template, "check", "NPROCS=2"], env=env, timeout=900)
        print(check.stdout.strip())
        if "warning:" in check.stdout:
            raise SystemExit("FAIL: smd-transport-check warns about the template (exports?)")

        run(["make", "-C", template, "install"], env=env)
        target = os.path.join(plugindir, "libsmd-transport-tcp.so")
        with open(plugin, "rb") as a, open(target, "rb") as b:
            if a.read() != b.read():
                raise SystemExit(f"FAIL: make install did not put the plugin at {target}")

        # An installed program finds it next to the installed libsmd, by name.
        run_env = dict(env, LD_LIBRARY_PATH=libsmd_dir, SMD_TRANSPORT="tcp", SMD_DEBUG="info",
                       SMD_DEBUG_SUBSYS="plugin")
        out = run([smdrun, "-n", "2", "--nodes", "2", "--timeout", "120", bench, "allreduce",
                   "-b", "8", "-e", "64K", "-n", "2", "-w", "1"], env=run_env, timeout=180)
        text = out.stdout + out.stderr
        if f"loaded tcp transport from {target}" not in text:
            print(text[-4000:])
            raise SystemExit(f"FAIL: the installed smd did not load {target}")
        print("PASS: built out of tree, conformance passed, installed plugin loaded from", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
