"""The smd.pc that meson generates (and installs) parses with pkg-config,
and a C program built with exactly the flags it gives links against
libsmd and runs. The installed paths do not exist in a build tree, so
libdir and includedir are pointed at the build's library and the source
headers with --define-variable: the Cflags/Libs formulas themselves are
the installed file's.

usage: pkgconfig_link.py CC PC_DIR LIBSMD INCLUDE_DIR PROBE_C VERSION
Exit 0 = pass, 1 = fail, 77 = skipped (pkg-config not installed)."""

import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    cc, pc_dir, lib, include_dir, probe, version = sys.argv[1:7]
    pkg_config = shutil.which("pkg-config")
    if not pkg_config:
        print("pkg-config is not installed")
        return SKIP
    pc_file = os.path.join(pc_dir, "smd.pc")
    if not os.path.isfile(pc_file):
        print(f"FAIL: meson generated no {pc_file}")
        return 1
    lib_dir = os.path.dirname(os.path.abspath(lib))
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir)
    # Never pick up an smd-uninstalled.pc or an installed smd.pc elsewhere.
    env.pop("PKG_CONFIG_LIBDIR", None)
    env["PKG_CONFIG_DISABLE_UNINSTALLED"] = "1"

    def pkg(*args):
        done = subprocess.run([pkg_config, *args, "smd"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"FAIL: pkg-config {' '.join(args)} smd: {done.stderr.strip()}")
        return done.stdout.strip()

    problems = []
    as_installed = shlex.split(pkg("--cflags", "--libs"))
    if "-lsmd" not in as_installed or not any(a.startswith("-I") for a in as_installed):
        problems.append(f"smd.pc gives {as_installed}: expected -I<includedir> and -lsmd")
    if pkg("--modversion") != version:
        problems.append(f"smd.pc says version {pkg('--modversion')}, the project is {version}")
    if not pkg("--variable=plugindir").endswith("/smd"):
        problems.append(f"plugindir is {pkg('--variable=plugindir')!r}, expected <libdir>/smd")

    flags = shlex.split(pkg(f"--define-variable=libdir={lib_dir}",
                            f"--define-variable=includedir={include_dir}", "--cflags", "--libs"))
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "probe")
        build = subprocess.run([cc, "-std=c99", probe, "-o", exe, *flags],
                               capture_output=True, text=True)
        if build.returncode != 0:
            print(build.stderr)
            problems.append(f"cannot build a program with the flags of smd.pc: {flags}")
        else:
            run_env = dict(os.environ, LD_LIBRARY_PATH=lib_dir)
            done = subprocess.run([exe], env=run_env, capture_output=True, text=True)
            if done.returncode != 0 or done.stdout.strip() != version:
                problems.append(f"the probe exited {done.returncode} printing "
                                f"{done.stdout.strip()!r}, expected {version!r}")

    for p in problems:
        print("FAIL:", p)
    print("pkg-config flags:", " ".join(flags))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
