#!/usr/bin/env bash
# wheel_install.sh PYTHON SOURCE_ROOT WORK_DIR WHEEL_BUILD_DIR - what `pip
# install .` at the repository root gives a user: builds the wheel offline
# (meson-python over the project's own Meson build, with the torch backend
# where PYTHON has torch), installs it into a fresh virtual environment and,
# from outside the source tree with no SMD_LIBRARY, SMD_PLUGIN_PATH,
# PYTHONPATH or LD_LIBRARY_PATH, imports smd, smd.jax and smd.torch and runs
# a 2-rank job with the wheel's smdrun (fresh_venv.sh). Then, where the base
# interpreter has a torch of another version, that smd.torch refuses it
# with an ImportError naming both versions. PYTHON has meson-python (and
# jax, for smd.jax). WORK_DIR holds the wheel and the environments;
# WHEEL_BUILD_DIR, the wheel's Meson build directory, is kept between runs
# and sits beside the normal build (SOURCE_ROOT/build-wheel), so that
# ccache, where it is set up, serves the objects that build compiled (same
# relative paths).
set -euo pipefail
py="$1" src="$2" work="$3" wheel_build="$4"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/fresh_venv.sh"

if ! "$py" -c 'import mesonpy' 2>/dev/null; then
  echo "SKIP: $py has no meson-python (scripts/lib.sh installs it into .venv)"
  exit 77
fi
# The torch backend is built where meson's probe finds torch with its C++
# headers (bindings/torch/probe_torch.py; pip's torch has them).
with_torch=0 torch_version=
if probe=$("$py" "$src/bindings/torch/probe_torch.py"); then
  with_torch=1 torch_version=$(sed -n 's/^version=//p' <<<"$probe")
fi
echo "torch backend in the wheel: ${torch_version:-no ($py: $probe)}"
mkdir -p "$work"
rm -rf "$work/dist"

start=$SECONDS
"$py" -m pip wheel -q --no-build-isolation --no-deps --no-index \
  -w "$work/dist" --config-settings=build-dir="$wheel_build" "$src"
wheel=$(ls "$work"/dist/smd-*.whl)
echo "built $(basename "$wheel") in $((SECONDS - start)) s"
if [ "$with_torch" = 1 ]; then
  # Whole listings into grep: `unzip | grep -q` ends unzip with SIGPIPE
  # when grep stops early, which pipefail counts as a failure.
  grep -q 'smd/torch/_smd_c10d\..*\.so$' <<<"$(unzip -l "$wheel")" ||
    { echo "the wheel lacks the torch backend"; exit 1; }
  grep -qxF "$torch_version" <<<"$(unzip -p "$wheel" smd/torch/_smd_c10d.torch_version)" ||
    { echo "the wheel's backend is not stamped with torch $torch_version"; exit 1; }
fi

fresh_venv "$py" "$work/venv"
in_venv "$work/venv" python -m pip install -q --no-index --no-deps "$wheel"
(smoke "$work/venv" "$with_torch")

# The wheel under another torch: the base interpreter's own packages.
base=$("$py" -c 'import sys; print(sys._base_executable)')
other=$("$base" -c 'import torch; print(torch.__version__)' 2>/dev/null || true)
mm() { cut -d+ -f1 <<<"$1" | cut -d. -f1,2; }
if [ "$with_torch" = 1 ] && [ -n "$other" ] && [ "$(mm "$other")" != "$(mm "$torch_version")" ]; then
  rm -rf "$work/venv-other"
  "$base" -m venv --system-site-packages "$work/venv-other"
  in_venv "$work/venv-other" python -m pip install -q --no-index --no-deps "$wheel"
  out=$(cd "$work" && in_venv "$work/venv-other" python -c '
import smd.torch' 2>&1) && { echo "smd.torch imported under torch $other:"; echo "$out"; exit 1; }
  printf '%s\n' "$out" | tail -4
  grep -q "^ImportError: smd.torch: " <<<"$out"
  grep -qF "built for torch $torch_version, this is torch $other" <<<"$out"
  echo "under torch $other: a clear ImportError"
else
  echo "not checked: smd.torch under another torch (the base python has none of another version)"
fi
echo "the wheel works"
