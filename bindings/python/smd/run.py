"""Launch local ranks of a Python program: a thin wrapper over smdrun.

::

    python -m smd.run -n 4 train.py --epochs 3
    python -m smd.run -n 2 --timeout 60 -m pytest tests/
    python -m smd.run -n 2 -c "import smd; print(smd.init())"

The options before the program are smdrun's (``-n``, ``--timeout``,
``--grace``, ``--nodes``, ``--no-tag-output``, ...; see ``smdrun --help``);
then comes what Python runs: a script, ``-m module`` or ``-c code``, with
its arguments. Every rank runs this same interpreter (sys.executable), with
this smd package first on PYTHONPATH.

smdrun is looked for in this order: $SMD_SMDRUN; next to the libsmd the
package would load (``../tools/smdrun`` in a build tree, ``../bin`` or
``../../bin`` in an installation, ``smd/_bin`` in a wheel); the source tree's ``build/tools/smdrun``;
PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from . import _ffi

# smdrun's options that take no value; every other option takes one (as
# "--opt value", "--opt=value" or "-n4"), and smdrun itself checks them.
_FLAGS = {"--tag-output", "--no-tag-output", "-h", "--help"}


def find_smdrun() -> str:
    """The path of smdrun (FileNotFoundError naming the places tried)."""
    explicit = os.environ.get("SMD_SMDRUN")
    if explicit:
        return explicit
    tried: List[str] = []
    for path, _ in _ffi.library_candidates():
        lib = Path(path)
        if not lib.is_absolute():
            continue
        libdir = lib.resolve().parent
        for candidate in (libdir.parent / "tools" / "smdrun", libdir.parent / "bin" / "smdrun",
                          libdir.parent.parent / "bin" / "smdrun",
                          libdir.parent / "_bin" / "smdrun"):  # a wheel: smd/_lib, smd/_bin
            tried.append(str(candidate))
            if os.access(candidate, os.X_OK):
                return str(candidate)
    source_build = _ffi.SOURCE_ROOT / "build" / "tools" / "smdrun"
    tried.append(str(source_build))
    if os.access(source_build, os.X_OK):
        return str(source_build)
    on_path = shutil.which("smdrun")
    if on_path:
        return on_path
    raise FileNotFoundError("smdrun not found (tried $SMD_SMDRUN, " + ", ".join(tried) +
                            ", PATH); set SMD_SMDRUN")


def split_args(argv: Sequence[str]) -> Tuple[List[str], List[str]]:
    """(smdrun's options, the Python command line after them)."""
    options: List[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return options, list(argv[i + 1:])
        if arg in ("-m", "-c") or not arg.startswith("-") or arg == "-":
            return options, list(argv[i:])
        options.append(arg)
        takes_value = arg not in _FLAGS and "=" not in arg and not (
            arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--"))
        if takes_value and i + 1 < len(argv):
            options.append(argv[i + 1])
            i += 1
        i += 1
    return options, []


def command(argv: Sequence[str]) -> List[str]:
    """The smdrun command line for `argv` (this module's arguments)."""
    options, program = split_args(argv)
    if any(o in ("-h", "--help") for o in options):
        return [find_smdrun(), "--help"]
    if not program:
        print("usage: python -m smd.run [smdrun options] (script.py | -m module | -c code) "
              "[args...]\n(smdrun's options: python -m smd.run --help)", file=sys.stderr)
        raise SystemExit(2)  # as smdrun for bad usage
    return [find_smdrun(), *options, "--", sys.executable, *program]


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Replace this process with smdrun running the ranks."""
    args = command(sys.argv[1:] if argv is None else argv)
    # The ranks import this very package, wherever it came from.
    package_parent = str(_ffi.PACKAGE_DIR.parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([package_parent] + [p for p in paths
                                                                   if p != package_parent])
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(args[0], args)
    except OSError as e:
        raise SystemExit(f"smd.run: cannot run {args[0]}: {e}") from e


if __name__ == "__main__":
    main()
