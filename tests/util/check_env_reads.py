#!/usr/bin/env python3
"""smd reads the environment only through its parameter registry: every
getenv/secure_getenv under src/core must be in one of the places allowed
below (the registry itself, the reader of other launchers' variables, and
the plugins' get_param, which serves the names a plugin declares in its
table). Fails naming any other call.

usage: check_env_reads.py SOURCE_ROOT
"""
import pathlib
import re
import sys

# file -> the function its one allowed read is in
ALLOWED = {
    "src/core/util/params.cc": "param_env",
    "src/core/bootstrap/launcher_env.cc": "foreign_env",
    "src/core/plugin/transport.cc": "get_param",
    "src/core/coll/calibrate/calibration_cache.cc": "runtime_dir",
}


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    call = re.compile(r"\b(secure_)?getenv\s*\(")
    problems, reads = [], 0
    for path in sorted((root / "src" / "core").rglob("*")):
        if path.suffix not in (".cc", ".h", ".cpp", ".c"):
            continue
        rel = path.relative_to(root).as_posix()
        function = None
        for no, line in enumerate(path.read_text().splitlines(), 1):
            m = re.match(r"^[A-Za-z].*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\([^;]*\)\s*(const\s*)?\{\s*$", line.strip())
            if m:
                function = m.group(1)
            if not call.search(line.split("//")[0]):
                continue
            reads += 1
            if ALLOWED.get(rel) != function:
                problems.append(f"{rel}:{no}: reads the environment outside the registry "
                                f"(in {function or '?'}): use param_env() and declare the variable in params.cc")
    for p in problems:
        print(p)
    print(f"check_env_reads: {reads} environment read(s) under src/core, {len(problems)} outside the allowed places")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
