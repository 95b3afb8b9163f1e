#!/usr/bin/env python3
"""The core's folders are layers: a file may include headers of its own
folder (subfolders included) and of folders below it, never above. The order is the one
docs/ARCHITECTURE.md draws (its first diagram lists src/core/<folder>
lines top to bottom; folders on one line, "a, b", are one level and may
not include each other). Fails naming every edge that runs upwards or
sideways, and any folder the diagram does not place. Also fails when a
tool's meson.build names a file under src/ (tools link libsmd and the
smd_tool_support library instead), a tool's source includes one under
tests/ (shared helpers live in src/tool_support/), or a tool's source
includes a core header other than through src/tool_support/core_interface.h.

usage: check_layers.py SOURCE_ROOT
"""
import pathlib
import re
import sys


def documented_levels(architecture: str) -> list:
    """[["api"], ["groups"], ...] from the first code block's src/core lines."""
    block = architecture.split("```")[1]
    levels = []
    for line in block.splitlines():
        m = re.match(r"src/core/([a-z_, /]+?)\s{2,}", line + "  ")
        if m:
            names = [n.strip().replace("src/core/", "") for n in m.group(1).split(",")]
            levels.append([n for n in names if n])
    return levels


def tool_problems(root: pathlib.Path) -> list:
    """Tools that compile a core file, include a test helper, or include a core
    header directly (src/tool_support/core_interface.h is their one way in)."""
    core_header = re.compile(r'^\s*#\s*include\s+[<"](?:[./]*src/)?core/')
    problems = []
    for path in sorted((root / "tools").rglob("*")):
        if path.name == "meson.build":
            for no, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"['\"][^'\"]*src/[^'\"]*\.cc['\"]", line):
                    problems.append(f"{path.relative_to(root)}:{no}: a tool compiles a file of src/")
        elif path.suffix in (".h", ".cc"):
            for no, line in enumerate(path.read_text().splitlines(), 1):
                if re.match(r'^\s*#\s*include\s+"[^"]*tests/', line):
                    problems.append(f"{path.relative_to(root)}:{no}: a tool includes a test helper")
                if core_header.match(line):
                    problems.append(f"{path.relative_to(root)}:{no}: a tool includes a core header; "
                                    "include tool_support/core_interface.h instead")
    return problems


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    levels = documented_levels((root / "docs" / "ARCHITECTURE.md").read_text())
    level_of = {name: i for i, names in enumerate(levels) for name in names}
    core = root / "src" / "core"
    folders = sorted(p.name for p in core.iterdir() if p.is_dir())
    problems = [f"src/core/{f} is not placed in docs/ARCHITECTURE.md's diagram"
                for f in folders if f not in level_of]
    include = re.compile(r'^\s*#\s*include\s+"core/([a-z_]+)/([^"]+)"')
    edges = 0
    for path in sorted(core.rglob("*")):
        if path.suffix not in (".h", ".cc", ".cpp", ".c") or path.parent == core:
            continue
        here = path.relative_to(core).parts[0]
        for no, line in enumerate(path.read_text().splitlines(), 1):
            m = include.match(line)
            if not m or m.group(1) == here:
                continue
            edges += 1
            there = m.group(1)
            if here in level_of and there in level_of and level_of[there] <= level_of[here]:
                problems.append(f"{path.relative_to(root)}:{no}: {here} includes {there}/{m.group(2)}, "
                                f"which is not below it in docs/ARCHITECTURE.md's order")
    problems += tool_problems(root)
    for p in problems:
        print(p)
    print(f"check_layers: {len(folders)} folders, {edges} cross-folder includes, "
          f"{len(problems)} problem(s); order: {' > '.join(', '.join(l) for l in levels)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
