#!/usr/bin/env bash
# scripts/demo.sh - smd's first command: install what is missing, build, then
# run the main job (4 local processes train a small model data-parallel
# through libsmd and check that it equals the single-process model, in C,
# then in Python, then through the Rust binding when cargo is installed),
# train with PyTorch DDP over smd and over gloo when torch is installed
# (torch 2.x from .venv when scripts/test.sh made it, else Debian's 1.13),
# and finish with a short allreduce/allgather benchmark.
#
# Works from any directory; a second run installs nothing and reuses build/.
# Environment: SMD_NO_INSTALL=1 (never apt-get), SMD_JOBS=N (build jobs),
# SMD_DEMO_RANKS=N (ranks of the training job and benchmark, default 4).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SMD_ROOT"

build=build
ranks="${SMD_DEMO_RANKS:-4}"
start=$SECONDS

smd_log_section "dependencies"
smd_install_deps

smd_log_section "building ($build/)"
smd_configure_build "$build"
smd_build "$build"

smd_log_section "training: $ranks ranks, data-parallel MLP ($build/tools/smdrun -n $ranks $build/examples/train_dp)"
# train_dp exits non-zero if the loss did not fall or the distributed model
# differs from the single-process one; set -e then stops the demo here.
"$build/tools/smdrun" -n "$ranks" --timeout 120 "$build/examples/train_dp"

# The same training from Python (numpy and the smd package, used straight
# from the source tree), with the same checks. It needs what the python
# part of the build needs; without it the demo says so and goes on.
py=/usr/bin/python3
smd_log_section "training from Python: $ranks ranks ($build/tools/smdrun -n $ranks $py examples/python/train_dp.py)"
if "$py" -c 'import numpy' 2>/dev/null; then  # cffi is optional: ctypes serves without it
  PYTHONPATH="$SMD_ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}" \
    SMD_LIBRARY="$SMD_ROOT/$build/src/libsmd.so.0" \
    "$build/tools/smdrun" -n "$ranks" --timeout 120 "$py" examples/python/train_dp.py
  python_demo="; the Python twin did too"
else
  smd_log "skipped: $py cannot import numpy (Debian: python3-numpy)"
  python_demo="; the Python twin was skipped (no numpy)"
fi

# The same kind of job through the Rust binding (bindings/rust), when cargo
# is installed: examples/train_dp.rs checks its data-parallel linear
# regression against a single-process run the same way. Cargo works offline
# and builds where `meson test --suite rust` does, so the two share a build.
if command -v cargo >/dev/null 2>&1; then
  rust_target="$build/bindings/rust/target"
  smd_log_section "training through the Rust binding: $ranks ranks, data-parallel linear regression"
  CARGO_TARGET_DIR="$rust_target" SMD_LIB_DIR="$SMD_ROOT/$build/src" \
    cargo build --offline --quiet --manifest-path bindings/rust/Cargo.toml -p smd --example train_dp \
    || smd_die "building the Rust example failed"
  LD_LIBRARY_PATH="$SMD_ROOT/$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$build/tools/smdrun" -n "$ranks" --timeout 60 "$rust_target/debug/examples/train_dp"
else
  smd_log_section "Rust binding: skipped (cargo not installed)"
fi

# PyTorch: DistributedDataParallel over the c10d backend "smd" and over
# gloo, side by side on the same ranks; the example checks that losses
# and final parameters agree. With torch 2.x in .venv (scripts/test.sh
# makes it; the demo installs no torch) the backend is built against it in
# build-torch2/; else build/'s, against Debian's torch 1.13 (python3-torch,
# libtorch-dev, pybind11-dev; meson's summary line 'torch' says).
torch_build="$build"
if smd_torch2_ready; then
  py="$SMD_VENV_PY"
  torch_build=build-torch2
  smd_log_section "building the backend against .venv's torch 2.x ($torch_build/)"
  smd_configure_torch2_build "$torch_build"
  smd_build "$torch_build"
fi
torch_ext="$(find "$torch_build/bindings/torch" -maxdepth 1 -name '_smd_c10d*.so' 2>/dev/null | head -n 1)"
if [[ -n "$torch_ext" ]] && "$py" -c 'import torch' 2>/dev/null; then
  torch_version="$("$py" -c 'import torch; print(torch.__version__)')"
  smd_log_section "PyTorch $torch_version DDP, backend smd vs gloo: $ranks ranks ($py examples/torch/train_ddp.py)"
  PYTHONPATH="$SMD_ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}" \
    SMD_LIBRARY="$SMD_ROOT/$torch_build/src/libsmd.so.0" SMD_TORCH_BACKEND="$SMD_ROOT/$torch_ext" \
    "$torch_build/tools/smdrun" -n "$ranks" --timeout 300 "$py" examples/torch/train_ddp.py
  torch_demo="; DDP over smd matched gloo (torch $torch_version)"
else
  smd_log_section "PyTorch backend: skipped (not built: see the 'torch' line of meson's summary)"
  torch_demo="; the PyTorch example was skipped"
fi

# Up to 16 MiB, x8 per row: a small table that still shows the latency end
# and the bandwidth end. Only rank 0 prints; --no-tag-output keeps the table
# free of "[0] " prefixes.
bench() {
  "$build/tools/smdrun" -n "$ranks" --timeout 60 --no-tag-output \
    "$build/tools/smd-bench" "$@" -e 16M -f 8 -n 10 -w 2
}
smd_log_section "benchmark: allreduce float32 sum, $ranks ranks"
bench allreduce -b 8
smd_log_section "benchmark: allgather float32, $ranks ranks"
# allgather sizes count the whole output, so 8 B would be 0 elements per
# rank: start at 64 B.
bench allgather -b 64

smd_log_section "summary"
smd_log "demo OK: $ranks-rank data-parallel training matched the single-process model$python_demo$torch_demo; benchmarks ran ($((SECONDS - start)) s)"
