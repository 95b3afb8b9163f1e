"""The functions a public header declares: every `SMD_API <type> smd_xxx(`
declaration, in header order. Shared by the ABI checks in this folder."""

import re

# SMD_API, then the return type (which may span words and '*'), then the
# name right before '('. Declarations may wrap over several lines.
_DECLARATION = re.compile(r"^\s*SMD_API\s+[^;()]*?\b(smd_\w+)\s*\(", re.MULTILINE)


def declared_functions(header_path):
    with open(header_path, encoding="utf-8") as f:
        text = f.read()
    # Comments may mention SMD_API; strip them before matching.
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", "", text)
    names = _DECLARATION.findall(text)
    if not names:
        raise SystemExit(f"{header_path}: no SMD_API declarations found: has the style changed?")
    return names
