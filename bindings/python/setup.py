"""Build step of the smd package: generate smd/_cdef.h from smd.h.

The declarations are never written by hand: smd/_cdefgen.py runs the C
preprocessor over smd.h (the same code the package uses when it runs from
the source tree) and the result is written into the built package, so an
installed smd needs no compiler and no header at run time.

The header is $SMD_HEADER, else the source tree's include/smd.h (this file
lives in bindings/python), else an installed one (pkg-config smd, then
/usr/local/include and /usr/include).
"""

import importlib.util
import os
import subprocess
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


def _pkg_config_header():
    try:
        out = subprocess.run(["pkg-config", "--variable=includedir", "smd"], capture_output=True,
                             text=True, check=False)
    except OSError:
        return None
    return Path(out.stdout.strip()) / "smd.h" if out.returncode == 0 and out.stdout.strip() else None


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

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [
            str(Path(self.build_lib) / "smd" / "_cdef.h")]


setup(version=VERSION, cmdclass={"build_py": BuildPyWithCdef})
