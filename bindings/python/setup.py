"""Build step of the smd package: generate smd/_cdef.h from smd.h.

The declarations are never written by hand: smd/_cdefgen.py runs the C
preprocessor over smd.h (the same code the package uses when it runs from
the source tree) and the result is written into the built package, so an
installed smd needs no compiler and no header at run time.

The header is $SMD_HEADER, else the source tree's include/smd.h (this file
lives in bindings/python), else an installed one (pkg-config smd, then
/usr/local/include and /usr/include). Where pkg-config knows libsmd, its
directory is recorded too (smd/_libdir.txt), so the installed package finds
the library without LD_LIBRARY_PATH.

Nothing is written into the source tree: the build and egg-info
directories live in a temporary directory removed at exit.
"""

import atexit
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _load_cdefgen():
    # By path: importing the smd package would try to load the library.
    spec = importlib.util.spec_from_file_location("_smd_cdefgen", HERE / "smd" / "_cdefgen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pkg_config_dir(variable):
    """A directory pkg-config knows for smd (includedir, libdir), or None."""
    try:
        out = subprocess.run(["pkg-config", f"--variable={variable}", "smd"], capture_output=True,
                             text=True, check=False)
    except OSError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def _pkg_config_header():
    found = _pkg_config_dir("includedir")
    return found / "smd.h" if found else None


def find_header() -> Path:
    candidates = []
    if os.environ.get("SMD_HEADER"):
        candidates.append(Path(os.environ["SMD_HEADER"]))
    candidates.append(HERE.parent.parent / "include" / "smd.h")
    found = _pkg_config_header()
    if found:
        candidates.append(found)
    candidates += [Path("/usr/local/include/smd.h"), Path("/usr/include/smd.h")]
    for path in candidates:
        if path.is_file():
            return path
    raise SystemExit("smd: cannot find smd.h (tried " + ", ".join(map(str, candidates)) +
                     "); set SMD_HEADER")


CDEFGEN = _load_cdefgen()
HEADER = find_header()
CDEF = CDEFGEN.generate(HEADER)
VERSION = "{}.{}.{}".format(*CDEFGEN.split_version(CDEFGEN.constants_of(CDEF)))


class BuildPyWithCdef(build_py):
    """build_py, plus smd/_cdef.h generated from the header."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "smd" / "_cdef.h"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(CDEF, encoding="utf-8")
        print(f"generated {target} from {HEADER}")
        libdir = _pkg_config_dir("libdir")
        if libdir and (libdir / "libsmd.so.0").exists():
            (target.parent / "_libdir.txt").write_text(str(libdir), encoding="utf-8")
        for extension in torch_backends():
            shutil.copy2(extension, target.parent / "torch" / extension.name)
            print(f"included the torch backend {extension}")

    def get_outputs(self, include_bytecode=True):
        generated = [Path(self.build_lib) / "smd" / name for name in ("_cdef.h", "_libdir.txt")]
        generated += [Path(self.build_lib) / "smd" / "torch" / e.name for e in torch_backends()]
        return super().get_outputs(include_bytecode) + [str(p) for p in generated if p.exists()]


def torch_backends():
    """The compiled torch backend meson built, to ship inside smd.torch:
    $SMD_TORCH_BACKEND, else the source tree's build/bindings/torch."""
    explicit = os.environ.get("SMD_TORCH_BACKEND")
    if explicit:
        return [Path(explicit)]
    return sorted((HERE.parent.parent / "build" / "bindings" / "torch").glob("_smd_c10d*.so"))


# Out-of-tree: pip builds in the source directory, and setuptools would
# leave build/ and smd.egg-info there.
SCRATCH = tempfile.mkdtemp(prefix="smd-python-build-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)

setup(version=VERSION, cmdclass={"build_py": BuildPyWithCdef},
      options={"build": {"build_base": str(Path(SCRATCH) / "build")},
               "egg_info": {"egg_base": SCRATCH}})
