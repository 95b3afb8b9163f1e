"""Turn include/smd.h into the declarations cffi reads.

The binding never retypes a declaration: the C preprocessor expands smd.h in
the mode the header provides for this (SMD_NO_SYSTEM_INCLUDES and SMD_CDEF:
no system headers, no attributes), which cffi's ``cdef`` parses as-is. The
preprocessor drops ``#define`` constants, so they are recovered separately:
every object-like ``SMD_*`` macro the header defines is expanded by the same
preprocessor and kept when it is an integer constant expression
(SMD_TAG_MAX, SMD_UNDEFINED, SMD_RANK_INFO_VERSION, ...). Brace initializers
such as SMD_INIT_OPTIONS_INIT are not integers and are left out; the
``*_init()`` functions fill those structs instead.

Used twice, with the same code: by setup.py, which writes the result as
``smd/_cdef.h`` into the installed package, and by ``smd._ffi`` when the
package runs from the source tree, where no generated file exists.

This module imports nothing from the package, so setup.py can load it by
path without importing ``smd`` (which would need the library).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

# The switches smd.h offers for exactly this use (see tests/abi/cffi_parse.py).
_MODE = ["-DSMD_NO_SYSTEM_INCLUDES", "-DSMD_CDEF"]
_MODE_NAMES = {"SMD_NO_SYSTEM_INCLUDES", "SMD_CDEF"}

# "#define SMD_NAME body" for object-like macros only: a function-like
# macro has "(" right after its name, not a space.
_OBJECT_MACRO = re.compile(r"^#define (SMD_\w+) (.+)$", re.MULTILINE)
_PROBE = re.compile(r"^__smd_probe_(\d+) = (.*) ;$", re.MULTILINE)
_INT_SUFFIX = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")

GENERATED_MARK = "generated from smd.h by smd/_cdefgen.py"


class CdefError(RuntimeError):
    """The header could not be turned into declarations."""


def find_cc() -> List[str]:
    """The C compiler to preprocess with: $CC (may carry arguments), else the
    first of cc, gcc, clang on PATH."""
    env = os.environ.get("CC", "").strip()
    if env:
        return shlex.split(env)
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    raise CdefError("no C compiler found to preprocess smd.h (tried $CC, cc, gcc, clang); "
                    "install the package (pip install bindings/python), which ships the "
                    "declarations already generated, or set CC")


def _preprocess(cc: List[str], args: List[str], stdin: str | None = None) -> str:
    try:
        done = subprocess.run(cc + args, input=stdin, capture_output=True, text=True, check=False)
    except OSError as e:
        raise CdefError(f"cannot run {' '.join(cc)}: {e}") from e
    if done.returncode != 0:
        raise CdefError(f"{' '.join(cc + args)} failed ({done.returncode}):\n{done.stderr.strip()}")
    return done.stdout


def _int_value(expr: str) -> int | None:
    """The value of an integer constant expression made of literals, + - *
    and parentheses; None for anything else (strings, initializers, casts)."""
    text = _INT_SUFFIX.sub(r"\1", expr.strip())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = value(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = value(node.left), value(node.right)
            return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
        raise ValueError(ast.dump(node))

    try:
        return value(tree.body)
    except ValueError:
        return None


def _expand(header: Path, cc: List[str]) -> Tuple[str, Dict[str, int]]:
    """The header's declarations after the preprocessor, and every
    object-like SMD_* macro of it whose expansion is an integer constant,
    with its value, sorted by name."""
    defines = _preprocess(cc, ["-E", "-dM", *_MODE, str(header)])
    names = sorted(n for n, _ in _OBJECT_MACRO.findall(defines) if n not in _MODE_NAMES)
    # One more pass expands the header and, after it, each macro (macros may
    # refer to others): the declarations come first, then the probe lines.
    probe = f'#include "{header.name}"\n' + "".join(
        f"__smd_probe_{i} = {name} ;\n" for i, name in enumerate(names))
    expanded = _preprocess(cc, ["-E", "-P", *_MODE, "-I", str(header.parent), "-x", "c", "-"],
                           stdin=probe)
    first = _PROBE.search(expanded)
    declarations = expanded[:first.start()] if first else expanded
    values: Dict[str, int] = {}
    for index, expr in _PROBE.findall(expanded):
        v = _int_value(expr)
        if v is not None:
            values[names[int(index)]] = v
    return declarations, values


def generate(header: str | os.PathLike, cc: List[str] | None = None) -> str:
    """The text to hand to ``ffi.cdef``: smd.h's declarations after the
    preprocessor, followed by its integer constants as ``#define`` lines."""
    path = Path(header).resolve()
    if not path.is_file():
        raise CdefError(f"{path}: no such header")
    declarations, constants = _expand(path, cc or find_cc())
    if "smd_comm_init" not in declarations or "SMD_VERSION_MAJOR" not in constants:
        raise CdefError(f"{path} does not look like smd.h after preprocessing")
    lines = [f"/* {GENERATED_MARK}; do not edit. */", declarations.strip(), ""]
    lines += [f"#define {name} {value}" for name, value in constants.items()]
    return "\n".join(lines) + "\n"


_DEFINE = re.compile(r"^#define (SMD_\w+) (-?\d+)$", re.MULTILINE)


def constants_of(cdef: str) -> Dict[str, int]:
    """The ``#define`` constants of a text made by generate()."""
    return {name: int(value) for name, value in _DEFINE.findall(cdef)}


def split_version(constants: Dict[str, int]) -> Tuple[int, int, int]:
    """The header's version, from its SMD_VERSION_MAJOR/MINOR/PATCH."""
    return (constants["SMD_VERSION_MAJOR"], constants["SMD_VERSION_MINOR"],
            constants["SMD_VERSION_PATCH"])


if __name__ == "__main__":  # python3 smd/_cdefgen.py include/smd.h > _cdef.h
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: _cdefgen.py path/to/smd.h")
    sys.stdout.write(generate(sys.argv[1]))
