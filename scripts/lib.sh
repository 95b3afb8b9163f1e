# shellcheck shell=bash
# scripts/lib.sh - what scripts/demo.sh and scripts/test.sh share: installing
# the Debian packages smd needs, configuring and building a build directory,
# and printing section headers. Source it from bash; it defines functions and
# variables only and changes neither the shell options nor the directory.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   smd_install_deps                  # apt-get what is missing (once)
#   smd_configure_build build -Dcuda=disabled
#   smd_build build
#
# Environment:
#   SMD_NO_INSTALL=1   never install; only report missing packages (missing
#                      required ones are then an error)
#   SMD_NO_OPTIONAL=1  leave the optional packages alone
#   SMD_JOBS=N         parallel build jobs (default: the number of CPUs)

# The repository root, from this file's own location, so callers work from
# any current directory.
SMD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Needed to build and test the core.
# clang-format: the test 'format' (scripts/format.sh --check).
SMD_REQUIRED_PKGS=(meson ninja-build pkg-config gcc g++ libgtest-dev libgmock-dev
  nlohmann-json3-dev libcli11-dev clang-format)
# Each turns on an optional part (meson's summary() says which are on):
# network transports (UCX, libfabric), hwloc topology, the Python binding,
# the PyTorch backend (torch 1.13 with its C++ headers, and pybind11; about
# 180 packages, a minute to unpack on a 2-core machine after the download),
# the bench smoke tests (suite bench: bench/compare.sh builds mpi_bench with
# mpicc and gloo_bench against libgloo, and runs Open MPI's mpirun), and
# bindgen for the Rust bindings' freshness check (test bindgen-parse),
# clang with its libFuzzer runtime for the fuzzers (tests/fuzz/run.sh).
SMD_OPTIONAL_PKGS=(libucx-dev ucx-utils libfabric-dev libfabric-bin
  libhwloc-dev python3-cffi python3-numpy python3-pytest
  python3-torch libtorch-dev pybind11-dev
  openmpi-bin libopenmpi-dev libgloo-dev bindgen iproute2
  clang libclang-rt-14-dev)

# Section headers carry the seconds since the script started, so a log
# shows where the time went (CI has a budget).
smd_log_section() {
  printf '\n== [+%ss] %s\n' "$SECONDS" "$*"
}

smd_log() {
  printf '%s\n' "$*"
}

smd_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# Prints the given packages that are not installed, one per line. dpkg-query
# reads the local database only: no network, so a second run stays offline.
smd_missing_pkgs() {
  local pkg status
  for pkg in "$@"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || printf '%s\n' "$pkg"
  done
}

# Runs a command as root: directly when we are root, else through sudo.
_smd_as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    printf "error: not root and no sudo: cannot run '%s'\n" "$*" >&2
    return 1
  fi
}

_smd_apt_install() {
  _smd_as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "$@"
}

# Installs the missing required and optional packages with apt-get. Does
# nothing (and touches no network) when all are installed. A required
# package that cannot be installed is fatal; an optional one only a warning,
# since the build then leaves its part out.
smd_install_deps() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    smd_log "not a Debian system (no dpkg-query): skipping package checks;"
    smd_log "  needed: ${SMD_REQUIRED_PKGS[*]}"
    return 0
  fi

  local -a req opt
  mapfile -t req < <(smd_missing_pkgs "${SMD_REQUIRED_PKGS[@]}")
  if [[ "${SMD_NO_OPTIONAL:-0}" == 1 ]]; then
    opt=()
  else
    mapfile -t opt < <(smd_missing_pkgs "${SMD_OPTIONAL_PKGS[@]}")
  fi

  if (( ${#req[@]} + ${#opt[@]} == 0 )); then
    smd_log "all packages present"
    return 0
  fi
  if [[ "${SMD_NO_INSTALL:-0}" == 1 ]]; then
    (( ${#opt[@]} == 0 )) ||
      smd_log "optional packages missing (their parts stay off): ${opt[*]}"
    (( ${#req[@]} == 0 )) ||
      smd_die "required packages missing and SMD_NO_INSTALL=1: ${req[*]}"
    return 0
  fi

  smd_log "installing: ${req[*]} ${opt[*]}"
  # One apt-get for everything; if that fails (offline, not root, a package
  # missing from this mirror), retry with the required ones alone: without
  # the optional ones the build only leaves their parts out.
  if _smd_as_root apt-get update -q && _smd_apt_install "${req[@]}" "${opt[@]}"; then
    return 0
  fi
  (( ${#opt[@]} == 0 )) || smd_log "warning: optional packages not installed: ${opt[*]}"
  if (( ${#req[@]} > 0 )); then
    _smd_apt_install "${req[@]}" || smd_die "cannot install required packages: ${req[*]}"
  fi
}

# smd_configure_build BUILD_DIR [meson options...]
# Configures BUILD_DIR (relative to the current directory, or absolute) for
# this source tree, or reuses it when it is already configured; options given
# then are applied with `meson configure`.
smd_configure_build() {
  local dir="${1:?smd_configure_build: BUILD_DIR missing}"
  shift
  if [[ -f "$dir/meson-private/coredata.dat" ]]; then
    smd_log "reusing $dir (already configured)"
    if (( $# > 0 )); then
      meson configure "$dir" "$@" || smd_die "meson configure $dir failed"
    fi
  else
    meson setup "$dir" "$SMD_ROOT" "$@" || smd_die "meson setup $dir failed"
  fi
}

# smd_build BUILD_DIR [ninja targets...]
smd_build() {
  local dir="${1:?smd_build: BUILD_DIR missing}"
  shift
  ninja -C "$dir" -j "${SMD_JOBS:-$(nproc)}" "$@" || smd_die "build in $dir failed"
}

# ---- torch 2.x: the virtual environment .venv ------------------------------
# Debian's python3-torch is torch 1.13; the torch 2.x backend and its tests
# use a virtual environment at the repository root (.venv, ignored by git)
# made from Debian's python3 with the newest torch 2.x that pip finds.
# The light install (docs/TORCH.md has the sizes and times): the torch wheel
# without its dependencies, its plain-Python requirements, numpy, pytest,
# expecttest, and only the CUDA wheels scripts/torch2_requirements.py names;
# if torch then does not import, torch's full requirements.
SMD_VENV="$SMD_ROOT/.venv"
SMD_VENV_PY="$SMD_VENV/bin/python"

# True when .venv imports torch 2.x and everything its tests need (and
# jax, jaxlib and meson-python: suites jax and wheel use .venv too).
smd_torch2_ready() {
  [[ -x "$SMD_VENV_PY" ]] && "$SMD_VENV_PY" -c '
import sys, numpy, pytest, expecttest, torch, torch.distributed, jax, jaxlib, mesonpy
sys.exit(int(torch.__version__.split(".")[0]) < 2 or not torch.distributed.is_available())' \
    >/dev/null 2>&1
}

# pip install into .venv. pip complains about torch's requirements that the
# light install leaves out on purpose ("torch X requires nvidia-..., which
# is not installed"): those lines are dropped, every other line is kept.
_smd_venv_pip() {
  local rc
  { "$SMD_VENV_PY" -m pip install -q --disable-pip-version-check "$@" 2>&1 1>&3 |
      grep -v -E "^torch [^ ]+ requires |dependency resolver does not currently" >&2
    rc="${PIPESTATUS[0]}"; } 3>&1
  return "$rc"
}

# Makes .venv when smd_torch2_ready says no; prints why and returns 1 when
# it cannot (offline, SMD_NO_INSTALL=1): the callers then skip their
# torch 2.x parts. A second run finds .venv ready and installs nothing.
smd_setup_torch2_venv() {
  if smd_torch2_ready; then
    smd_log ".venv ready: torch $("$SMD_VENV_PY" -c 'import torch; print(torch.__version__)')"
    return 0
  fi
  if [[ "${SMD_NO_INSTALL:-0}" == 1 ]]; then
    smd_log "no torch 2.x in .venv and SMD_NO_INSTALL=1: the torch 2.x parts are skipped"
    return 1
  fi
  local base=/usr/bin/python3
  [[ -x "$base" ]] || base="$(command -v python3)"
  if [[ ! -x "$SMD_VENV_PY" ]]; then
    "$base" -m venv "$SMD_VENV" || {
      smd_log "cannot make .venv with $base -m venv (Debian: python3-venv): the torch 2.x parts are skipped"
      return 1
    }
  fi
  local started=$SECONDS
  if ! "$SMD_VENV_PY" -c 'import importlib.metadata as m, sys; sys.exit(int(m.version("torch").split(".")[0]) < 2)' 2>/dev/null; then
    smd_log "installing torch 2.x into .venv (the wheel alone, about 540 MB)"
    # Few retries and a short timeout: offline, this is where it fails.
    _smd_venv_pip --retries 1 --timeout 30 --no-deps 'torch>=2,<3' || {
      smd_log "cannot install torch 2.x from the package index (offline?): the torch 2.x parts are skipped"
      return 1
    }
  fi
  local -a pure light
  mapfile -t pure < <("$SMD_VENV_PY" "$SMD_ROOT/scripts/torch2_requirements.py" python)
  mapfile -t light < <("$SMD_VENV_PY" "$SMD_ROOT/scripts/torch2_requirements.py" cuda)
  _smd_venv_pip "${pure[@]}" numpy pytest expecttest "${light[@]}" jax jaxlib meson-python || {
    smd_log "cannot install torch's requirements into .venv: the torch 2.x parts are skipped"
    return 1
  }
  if ! smd_torch2_ready; then
    smd_log "torch does not import with the light install:"
    "$SMD_VENV_PY" -c 'import torch' 2>&1 | tail -n 1
    local version
    version="$("$SMD_VENV_PY" -c 'import importlib.metadata as m; print(m.version("torch"))')"
    smd_log "installing torch $version with all its requirements (several GB)"
    _smd_venv_pip "torch==$version" || {
      smd_log "cannot install torch's full requirements: the torch 2.x parts are skipped"
      return 1
    }
    smd_torch2_ready || {
      smd_log "torch 2.x in .venv does not import: the torch 2.x parts are skipped"
      return 1
    }
  fi
  smd_log ".venv made in $((SECONDS - started)) s: torch $("$SMD_VENV_PY" -c 'import torch; print(torch.__version__)'), $(du -sh "$SMD_VENV" | cut -f1)"
}

# smd_configure_torch2_build BUILD_DIR: a build directory whose c10d backend
# is built against .venv's torch 2.x (the same sources as build/'s, which
# uses Debian's torch 1.13). Only what the torch suites need is on: the
# other parts are built and tested in build/ already. -Dtorch_cuda stays
# auto: with .venv's CUDA torch and the CUDA toolkit's headers the backend
# takes CUDA tensors (SMD_TORCH_CUDA), which needs none of the core's nvcc
# kernels (-Dcuda=disabled here).
smd_configure_torch2_build() {
  smd_configure_build "${1:?smd_configure_torch2_build: BUILD_DIR missing}" \
    -Dtorch_python="$SMD_VENV_PY" -Dtorch=enabled \
    -Dtests=disabled -Dcuda=disabled -Drust=disabled -Djax=disabled -Dpython=disabled
}
