#!/usr/bin/env bash
# bench/codegen_diff.sh: does a refactor change the machine code? Compiles
# the named sources of src/ as they are at REV and as they are in the work
# tree, each with the flags build/'s compile_commands.json gives it (and the
# headers of its own tree), and compares the disassembly, addresses left out.
# "identical" means the change cannot make that code slower; otherwise the
# counts of differing instructions say where to look (or what to time).
#
# usage: bench/codegen_diff.sh REV FILE... (paths under src/, e.g.
#        core/reduce/reduce_avx2.cc); BUILD=DIR for another build directory
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
[ $# -ge 2 ] || { echo "usage: $0 REV FILE..." >&2; exit 2; }
REV=$1
shift
[ -f "$BUILD/compile_commands.json" ] || { echo "codegen_diff: no $BUILD/compile_commands.json (build first)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'git -C "$ROOT" worktree remove --force "$WORK/old" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
git -C "$ROOT" worktree add -q --detach "$WORK/old" "$REV"
# The old tree compiles in a build directory of its own whose generated
# files are build/'s, so relative include paths reach its own sources.
mkdir "$WORK/old/build"
for entry in "$BUILD"/*; do ln -s "$entry" "$WORK/old/build/"; done
python3 - "$BUILD" "$ROOT" "$WORK" "$@" <<'EOF'
import json, os, re, shlex, subprocess, sys

build, root, work, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
commands = json.load(open(os.path.join(build, "compile_commands.json")))
status = 0
for name in files:
    entry = next((e for e in commands if e["file"].endswith("src/" + name)), None)
    if entry is None:
        print(f"{name}: not in compile_commands.json")
        status = 1
        continue
    args, skip = [], False
    for a in shlex.split(entry["command"]):
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MQ"):
            skip = True
        elif a not in ("-MD", "-c") and not a.endswith(name):
            args.append(a)
    listings = []
    for tree, cwd in (("old", os.path.join(work, "old", "build")), ("new", build)):
        source = os.path.join(work, "old", "src", name) if tree == "old" else \
            os.path.join(root, "src", name)
        obj = os.path.join(work, f"{tree}.o")
        subprocess.run(args + ["-c", source, "-o", obj], cwd=cwd, check=True)
        dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], check=True,
                              capture_output=True, text=True).stdout
        # Branch targets print as "4f <f+0x4f>": keep the symbol only.
        listings.append([re.sub(r"\b[0-9a-f]+ <([^>+]*)(\+0x[0-9a-f]+)?>", r"<\1>",
                                line.split(":", 1)[1].strip())
                         for line in dump.splitlines() if ":" in line and line.startswith(" ")])
    old, new = listings
    if old == new:
        print(f"{name}: identical ({len(new)} instructions)")
    else:
        for tree, lines in (("old", old), ("new", new)):
            with open(os.path.join(work, f"{tree}.s"), "w") as f:
                f.write("\n".join(lines) + "\n")
        diff = subprocess.run(["diff", os.path.join(work, "old.s"), os.path.join(work, "new.s")],
                              capture_output=True, text=True).stdout
        changed = sum(1 for line in diff.splitlines() if line[:1] in "<>")
        print(f"{name}: differs: {len(old)} -> {len(new)} instructions, {changed} lines differ")
sys.exit(status)
EOF
