"""smd.h parses as-is with bindgen and an smd_.* allowlist (the Rust
smd-sys route), and the bindings declare every SMD_API function.

usage: bindgen_parse.py SMD_H
Exit 0 = pass, 1 = fail, 77 = skipped (bindgen not installed)."""

import re
import shutil
import subprocess
import sys

from header_functions import declared_functions

SKIP = 77


def main():
    header = sys.argv[1]
    bindgen = shutil.which("bindgen")
    if not bindgen:
        print("bindgen is not installed")
        return SKIP
    done = subprocess.run([bindgen, header, "--allowlist-function", "smd_.*"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stderr)
        print(f"FAIL: bindgen exited with {done.returncode}")
        return 1
    rust = done.stdout
    bound = set(re.findall(r"pub fn (smd_\w+)\s*\(", rust))

    problems = []
    if "smd_allreduce" not in bound:
        problems.append("the bindings do not mention smd_allreduce")
    for fn in declared_functions(header):
        if fn not in bound:
            problems.append(f"bindgen produced no binding for {fn}")
    for ty in ("smd_init_options", "smd_store_ops"):
        if not re.search(rf"pub struct {ty}\b", rust):
            problems.append(f"bindgen produced no struct {ty}")
    if done.stderr.strip():
        print("bindgen said:", done.stderr.strip())

    for p in problems:
        print("FAIL:", p)
    print(f"{len(bound)} functions bound")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
