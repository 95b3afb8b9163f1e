"""The console scripts of a wheel (``pip install .`` at the repository
root): smdrun, smd-info, smd-bench and smd-transport-check are programs
in ``smd/_bin``; each script replaces itself with its program."""

from __future__ import annotations

import os
import sys

from ._ffi import PACKAGE_DIR


def _exec(name: str) -> None:
    program = PACKAGE_DIR / "_bin" / name
    if not os.access(program, os.X_OK):
        sys.exit(f"{name}: {program} is missing: this smd package was not installed as a "
                 "wheel with its tools (pip install . at the repository root)")
    os.execv(str(program), [name, *sys.argv[1:]])


def smdrun() -> None:
    _exec("smdrun")


def smd_info() -> None:
    _exec("smd-info")


def smd_bench() -> None:
    _exec("smd-bench")


def smd_transport_check() -> None:
    _exec("smd-transport-check")
