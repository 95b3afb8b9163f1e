#!/usr/bin/env bash
# sdist_install.sh PYTHON SOURCE_ROOT WORK_DIR - `pip install` of the
# source distribution, offline: the sdist is made as a user makes it from a
# fresh clone of SOURCE_ROOT's HEAD (meson-python's build_sdist, that is
# `meson dist`, which needs a git checkout: committed files only), then,
# unpacked as pip unpacks it, built and installed with --no-build-isolation
# and --no-index into a fresh virtual environment whose build tools
# (meson-python) are PYTHON's, and given the smoke test of the wheel
# (fresh_venv.sh). The unpacked tree and its build directory (build-wheel)
# lie under WORK_DIR, and PYTHON's packages are seen through a link .venv
# inside it, so that ccache, where it is set up, serves the objects the
# wheel's build compiled (the same relative paths); a cold build compiles
# everything.
set -euo pipefail
py="$1" src="$2" work="$3"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fresh_venv.sh"

if ! "$py" -c 'import mesonpy' 2>/dev/null; then
  echo "SKIP: $py has no meson-python (scripts/lib.sh installs it into .venv)"
  exit 77
fi
if ! command -v git >/dev/null || ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  echo "SKIP: an sdist is made by meson dist from a git checkout: $src is none, or no git"
  exit 77
fi
with_torch=0
"$py" "$src/bindings/torch/probe_torch.py" >/dev/null && with_torch=1  # as meson decides
mkdir -p "$work"
rm -rf "$work/clone" "$work/dist" "$work/sdist-setup"

start=$SECONDS
git clone -q "$src" "$work/clone"
sdist=$(cd "$work/clone" && "$py" -c '
import sys, mesonpy
print(mesonpy.build_sdist(sys.argv[1], {"build-dir": sys.argv[2]}))
' "$work/dist" "$work/sdist-setup" | tail -1)
echo "made $sdist from a fresh clone at $(git -C "$work/clone" rev-parse --short HEAD) in $((SECONDS - start)) s"

name="${sdist%.tar.gz}"
unpacked="$work/$name"
rm -rf "$unpacked"
tar -xzf "$work/dist/$sdist" -C "$work"
[ -f "$unpacked/PKG-INFO" ] && [ -f "$unpacked/pyproject.toml" ]
[ ! -e "$unpacked/.git" ] || { echo "the sdist holds a .git"; exit 1; }
prefix=$("$py" -c 'import sys; print(sys.prefix)')
ln -s "$prefix" "$unpacked/.venv"
sites=$("$py" -c '
import os, site, sys
print("\n".join(os.path.join(sys.argv[1], os.path.relpath(p, sys.prefix)) for p in site.getsitepackages()))
' "$unpacked/.venv")
fresh_venv "$py" "$work/venv" "$sites"

start=$SECONDS
env -u PYTHONPATH -u SMD_LIBRARY -u SMD_PLUGIN_PATH -u LD_LIBRARY_PATH \
  "$work/venv/bin/python" -m pip install -q --no-build-isolation --no-index --no-deps \
  --config-settings=build-dir="$unpacked/build-wheel" "$unpacked"
echo "built and installed from $sdist in $((SECONDS - start)) s"
(smoke "$work/venv" "$with_torch")
echo "the sdist works"
