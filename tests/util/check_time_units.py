#!/usr/bin/env python3
"""SMD_TIMEOUT is in seconds while the API's timeout_ms is in milliseconds:
every passage (a comment, a paragraph, a table row, a registry entry) of
the public headers, README.md, docs/ and the parameter registry that names
SMD_TIMEOUT beside a millisecond quantity (timeout_ms, "ms", 300000) must
spell out both units, so that no reader takes one for the other. Fails
naming each passage that does not.

usage: check_time_units.py SOURCE_ROOT
"""
import pathlib
import re
import sys

SECONDS = re.compile(r"(?<!milli)\bseconds?\b")
MILLISECONDS = re.compile(r"\bmilliseconds?\b|\bms\b")
MS_QUANTITY = re.compile(r"timeout_ms|\bms\b|millisecond|\b300000\b")


def passages(path: pathlib.Path):
    """(first line, text) of each comment block or paragraph/table row."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".h", ".cc"):
        for m in re.finditer(r"/\*.*?\*/|(?://[^\n]*\n\s*)+|\{\"SMD_[^\n]*", text, re.S):
            yield text.count("\n", 0, m.start()) + 1, m.group(0)
    else:
        line = 1
        for block in re.split(r"(\n\s*\n)", text):
            rows = block.split("\n") if block.lstrip().startswith("|") else [block]
            for row in rows:
                yield line, row
                line += row.count("\n") + (1 if len(rows) > 1 else 0)
            if len(rows) > 1:
                line -= 1


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    files = sorted((root / "include").glob("*.h")) + [root / "README.md"]
    files += sorted((root / "docs").glob("*.md")) + [root / "src/core/util/params.cc"]
    problems, checked = [], 0
    for path in files:
        for line, text in passages(path):
            if "SMD_TIMEOUT" not in text or not MS_QUANTITY.search(text):
                continue
            checked += 1
            if not SECONDS.search(text) or not MILLISECONDS.search(text):
                problems.append(f"{path.relative_to(root)}:{line}: names SMD_TIMEOUT beside a "
                                f"millisecond quantity without spelling out both units (seconds, "
                                f"milliseconds): {' '.join(text.split())[:160]}")
    for p in problems:
        print(p)
    print(f"check_time_units: {checked} passages checked, {len(problems)} problems")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
