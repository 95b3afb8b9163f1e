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
SMD_REQUIRED_PKGS=(meson ninja-build pkg-config gcc g++ libgtest-dev libgmock-dev)
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
