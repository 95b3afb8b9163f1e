#!/usr/bin/env python3
"""libsmd must not link CUDA: one library serves machines with and without
it, and CUDA is opened at run time (docs/GPU.md). Fails naming any
DT_NEEDED entry on a CUDA library or any undefined dynamic symbol of
CUDA's (cuda*, cu[A-Z]*), read with readelf.

usage: check_no_cuda_link.py LIBSMD_SO
"""
import re
import subprocess
import sys


def main() -> int:
    lib = sys.argv[1]
    dynamic = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    problems = [f"DT_NEEDED {n}" for n in needed if re.match(r"lib(cuda|cudart|nvidia|nvrtc)", n)]
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True, capture_output=True,
                             text=True).stdout
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[6] == "UND" and re.match(r"(cuda|cu[A-Z])", fields[7]):
            problems.append(f"undefined symbol {fields[7]}")
    for p in problems:
        print(f"{lib}: {p}")
    print(f"check_no_cuda_link: {len(needed)} DT_NEEDED ({', '.join(needed)}), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
