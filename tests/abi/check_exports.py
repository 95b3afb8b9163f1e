"""libsmd.so exports exactly the public ABI: every dynamic symbol it defines
is smd_* under the version node of src/smd.map, every function smd.h
declares is among them, and the SONAME carries the ABI major.

usage: check_exports.py LIBSMD SMD_H EXPECTED_SONAME VERSION_NODE
Exit 0 = pass, 1 = fail, 77 = skipped (no nm and no readelf)."""

import re
import shutil
import subprocess
import sys

from header_functions import declared_functions

SKIP = 77


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def defined_symbols_nm(lib):
    """(name, version) of each defined dynamic symbol, from nm -D."""
    out = run(["nm", "-D", "--defined-only", "--with-symbol-versions", lib])
    symbols = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        kind, full = fields[-2], fields[-1]
        name, _, version = full.partition("@")
        version = version.lstrip("@")
        # A version node is itself listed as an absolute symbol (SMD_0).
        if kind == "A" and (not version or version == name):
            continue
        symbols.append((name, version))
    return symbols


def defined_symbols_readelf(lib):
    """(name, version) of each defined dynamic symbol, from readelf."""
    out = run(["readelf", "--dyn-syms", "--wide", lib])
    symbols = []
    for line in out.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) < 8 or not fields[0].rstrip(":").isdigit():
            continue
        kind, ndx, full = fields[3], fields[6], fields[7]
        if ndx == "UND":
            continue
        name, _, version = full.partition("@")
        version = version.lstrip("@")
        if ndx == "ABS" and kind == "OBJECT" and (not version or version == name):
            continue  # the version node
        symbols.append((name, version))
    return symbols


def soname(lib):
    out = run(["readelf", "-d", "--wide", lib])
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else None


def main():
    lib, header, want_soname, node = sys.argv[1:5]
    if shutil.which("nm"):
        symbols = defined_symbols_nm(lib)
    elif shutil.which("readelf"):
        symbols = defined_symbols_readelf(lib)
    else:
        print("neither nm nor readelf is installed")
        return SKIP

    problems = []
    names = {name for name, _ in symbols}
    for name, version in sorted(set(symbols)):
        if not name.startswith("smd_"):
            problems.append(f"exported symbol outside the smd_ namespace: {name}")
        elif version != node:
            problems.append(f"{name} is exported under version '{version}', expected '{node}'")

    declared = declared_functions(header)
    for fn in declared:
        if fn not in names:
            problems.append(f"{fn} is declared in {header} but not exported")
    for name in sorted(names - set(declared)):
        if name.startswith("smd_"):
            problems.append(f"{name} is exported but not declared in {header}")

    if shutil.which("readelf"):
        got = soname(lib)
        if got != want_soname:
            problems.append(f"SONAME is {got!r}, expected {want_soname!r}")
    else:
        print("readelf missing: SONAME not checked")

    print(f"{len(names)} exported symbols, {len(declared)} functions declared in the header")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
