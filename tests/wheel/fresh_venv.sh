# fresh_venv.sh - sourced by wheel_install.sh and sdist_install.sh: a fresh
# virtual environment that sees the building python's packages, and the
# smoke test a user's first minutes amount to, run from there.
#
# The environment is made by the building python's base interpreter and
# reads the building python's site-packages (numpy, torch, jax, and
# meson-python for an sdist's build) through a .pth file, read-only: that
# works offline, and gives it the very torch the package was built
# against. (--system-site-packages would give it the base interpreter's
# packages instead, where Debian's torch may be another version.)

# fresh_venv PYTHON DIR [SITE_DIRS]: DIR, a new virtual environment of
# PYTHON's base interpreter that sees SITE_DIRS (default: PYTHON's
# site-packages).
fresh_venv() {
  local py="$1" dir="$2" sites="${3:-}" base site
  base=$("$py" -c 'import sys; print(sys._base_executable)')
  rm -rf "$dir"
  "$base" -m venv "$dir"
  [ -n "$sites" ] || sites=$("$py" -c 'import site; print("\n".join(site.getsitepackages()))')
  site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  printf '%s\n' "$sites" > "$site/smd_test_deps.pth"
}

# in_venv DIR CMD...: CMD with nothing of the build's environment: no
# SMD_LIBRARY, SMD_PLUGIN_PATH, PYTHONPATH or LD_LIBRARY_PATH.
in_venv() {
  local dir="$1"; shift
  env -i PATH="$dir/bin:/usr/bin:/bin" HOME="${HOME:-/tmp}" OMP_NUM_THREADS=1 "$@"
}

# smoke DIR WITH_TORCH: from outside the source tree, DIR's python imports
# smd, smd.jax and (WITH_TORCH=1) smd.torch from DIR, and a 2-rank job
# started by DIR's smdrun runs an allreduce through smd's numpy API, a
# jitted smd.jax.allreduce and (WITH_TORCH=1) torch.distributed over the
# backend "smd".
smoke() {
  local dir="$1" with_torch="$2" out
  cd "$(dirname "$dir")"
  in_venv "$dir" python - "$with_torch" <<'EOF'
import sys
import smd, smd.jax
with_torch = sys.argv[1] == "1"
version = ".".join(map(str, smd.version()))  # loads libsmd
paths = [smd.__file__, smd.jax.load_library(), smd._ffi.lib.path]
if with_torch:
    import smd.torch
    paths.append(str(smd.torch.EXTENSION_PATH))
for path in paths:
    assert path.startswith(sys.prefix), f"{path} is not in the new environment {sys.prefix}"
print("imported from", sys.prefix, "version", version)
print("\n".join(paths[1:]))
EOF
  in_venv "$dir" smd-info version
  out=$(in_venv "$dir" smdrun -n 2 --timeout 180 python -c "$SMOKE_JOB" "$with_torch")
  printf '%s\n' "$out"
  local rank
  for rank in 0 1; do
    grep -q "^\[$rank\] rank $rank of 2 ok: .* with .*/smd/_lib/libsmd.so.0$" <<<"$out"
    if [ "$with_torch" = 1 ]; then grep -q "^\[$rank\] rank $rank of 2 ok: .*torch" <<<"$out"; fi
  done
}

# The 2-rank job of smoke (ranks read stdin from /dev/null: it goes by -c).
SMOKE_JOB=$(cat <<'EOF'
import sys
import jax, jax.numpy as jnp, numpy as np
import smd, smd.jax as sj
world = sj.initialize()
x = np.arange(4, dtype=np.float32) + world.rank
total = x.copy()
world.allreduce(total)
want = 2 * np.arange(4) + 1
jitted = jax.jit(lambda a: sj.allreduce(a) * 2)(jnp.asarray(x))
assert np.array_equal(total, want) and np.array_equal(np.asarray(jitted), 2 * want)
done = ["numpy", "jax"]
if sys.argv[1] == "1":
    import torch, torch.distributed as dist
    import smd.torch
    dist.init_process_group("smd")
    t = torch.arange(4, dtype=torch.float32) + dist.get_rank()
    dist.all_reduce(t)
    assert torch.equal(t, torch.from_numpy(want.astype(np.float32))), t
    dist.destroy_process_group()
    done.append(f"torch {torch.__version__}")
print("rank", world.rank, "of", world.size, "ok:", ", ".join(done), "with", smd._ffi.lib.path)
EOF
)
