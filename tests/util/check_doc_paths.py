#!/usr/bin/env python3
"""Docs name files of this tree only where those files exist.

Every `backticked` word in the project's Markdown that looks like a file of
the tree (a path under one of its top folders, or a bare source file name)
must name a tracked file or folder; `a.{h,cc}` and `a.*` name every match.
Prints each stale name with where it stands; exit 1 if any."""

import fnmatch
import re
import subprocess
import sys
from pathlib import Path

TOP = ("src/", "include/", "tools/", "bindings/", "tests/", "bench/", "scripts/",
       "docs/", "examples/", ".ci/")
SOURCE = re.compile(r"^[\w.+-]+\.(cc|h|c|py|sh|rs|md|build|toml|map)$")
# Names in backticks that are not this tree's files: other projects' files
# the docs discuss, and files smd writes at run time.
ELSEWHERE = {
    "distributed_test.py", "distributed_c10d.py", "conftest.py", "setup.py",
    "Cargo.toml", "lib.rs", "build.rs", "__init__.py", "ProcessGroupGloo.cpp",
    "example.c",  # README's quick start: the file the reader saves
}
# A path segment in capitals (`corpus/TARGET`) is a placeholder.
PLACEHOLDER = re.compile(r"(?<![\w.])[A-Z][A-Z_]+(?![\w.])")


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        files = [f for f in out if f]
    except (OSError, subprocess.CalledProcessError):  # an unpacked sdist
        skip = ("build", ".git", ".venv")
        files = [str(p.relative_to(root)) for p in root.rglob("*")
                 if p.is_file() and not p.relative_to(root).parts[0].startswith(skip)]
    folders = {str(Path(f).parent) + "/" for f in files}
    for f in list(folders):
        parts = f.rstrip("/").split("/")
        for i in range(1, len(parts)):
            folders.add("/".join(parts[:i]) + "/")
    return files, folders


def expand(name):
    m = re.search(r"\{([^}]*)\}", name)
    if not m:
        return [name]
    return [n for alt in m.group(1).split(",")
            for n in expand(name[:m.start()] + alt + name[m.end():])]


def exists(name, files, folders, basenames):
    for n in expand(name):
        if "/" in n:
            n = n.lstrip("./") if n.startswith("./") else n
            if n.endswith("/"):
                if n not in folders:
                    return False
            elif not (n in files or n + "/" in folders or
                      any(fnmatch.fnmatchcase(f, n) for f in files) or
                      any(fnmatch.fnmatchcase(f, n + ".*") for f in files)):
                return False
        elif not any(fnmatch.fnmatchcase(b, n) for b in basenames):
            return False
    return True


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
    files, folders = tracked(root)
    basenames = {Path(f).name for f in files}
    stale = []
    for doc in sorted(f for f in files if f.endswith(".md")):
        for lineno, line in enumerate((root / doc).read_text().splitlines(), 1):
            for token in re.findall(r"`([^`\s]+)`", line):
                token = token.rstrip(".,:;)")
                token = re.sub(r":\d+(-\d+)?$", "", token)  # file:line
                token = PLACEHOLDER.sub("*", token)
                is_path = token.startswith(TOP) and not any(c in token for c in "<>$=")
                is_name = SOURCE.match(token) and token not in ELSEWHERE
                if (is_path or is_name) and not exists(token, files, folders, basenames):
                    stale.append(f"{doc}:{lineno}: `{token}`")
    for s in stale:
        print(s)
    print(f"check_doc_paths: {len(stale)} stale file names", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
