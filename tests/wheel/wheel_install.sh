#!/usr/bin/env bash
# wheel_install.sh PYTHON SOURCE_ROOT WORK_DIR WHEEL_BUILD_DIR - what `pip install .` at the
# repository root gives a user: builds the wheel offline (meson-python over
# the project's own Meson build), installs
# it into a fresh virtual environment and, from outside the source tree with
# no SMD_LIBRARY, SMD_PLUGIN_PATH, PYTHONPATH or LD_LIBRARY_PATH, imports
# smd and smd.jax and runs a 2-rank job with the wheel's smdrun. The torch
# backend is left out of this wheel (it builds only against the torch of
# the python that builds the wheel, and is the slowest part). PYTHON has
# meson-python (and jax, for smd.jax); the new environment sees PYTHON's
# packages (numpy, jax) through a .pth file, read-only, so nothing is
# downloaded. WORK_DIR holds the wheel and the environment; WHEEL_BUILD_DIR,
# the wheel's Meson build directory, is kept between runs and sits beside
# the normal build (SOURCE_ROOT/build-wheel), so that ccache, where it is
# set up, serves the objects that build compiled (same relative paths).
set -euo pipefail
py="$1" src="$2" work="$3" wheel_build="$4"

if ! "$py" -c 'import mesonpy' 2>/dev/null; then
  echo "SKIP: $py has no meson-python (scripts/lib.sh installs it into .venv)"
  exit 77
fi
mkdir -p "$work"
rm -rf "$work/dist" "$work/venv"

start=$SECONDS
"$py" -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$work/dist" \
  --config-settings=build-dir="$wheel_build" --config-settings=setup-args=-Dtorch=disabled "$src"
wheel=$(ls "$work"/dist/smd-*.whl)
echo "built $(basename "$wheel") in $((SECONDS - start)) s"

base=$("$py" -c 'import sys; print(sys._base_executable)')
"$base" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
"$py" -c 'import site; print("\n".join(site.getsitepackages()))' > "$site/smd_test_deps.pth"

cd "$work"  # not the source tree
run() {
  env -i PATH="$work/venv/bin:/usr/bin:/bin" HOME="${HOME:-/tmp}" "$@"
}
run python -c '
import sys, smd, smd.jax
where = smd.__file__
assert where.startswith(sys.prefix), f"smd imported from {where}, not the new environment"
print("imported", where, "version", ".".join(map(str, smd.version())))
print("libsmd_jax:", smd.jax.load_library())
'
run smd-info version
out=$(run smdrun -n 2 --timeout 120 python -c '
import jax, jax.numpy as jnp, numpy as np, smd, smd.jax as sj
world = sj.initialize()
x = np.arange(4, dtype=np.float32) + world.rank
total = x.copy()
world.allreduce(total)
jitted = jax.jit(lambda a: sj.allreduce(a) * 2)(jnp.asarray(x))
assert np.array_equal(total, 2 * np.arange(4) + 1) and np.array_equal(np.asarray(jitted), 2 * total)
print("rank", world.rank, "of", world.size, "ok", smd._ffi.lib.path)
')
printf '%s\n' "$out"
grep -q '^\[0\] rank 0 of 2 ok .*/smd/_lib/libsmd.so.0$' <<<"$out"
grep -q '^\[1\] rank 1 of 2 ok .*/smd/_lib/libsmd.so.0$' <<<"$out"
echo "the wheel works"
