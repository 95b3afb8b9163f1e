#!/bin/sh
# gen-bindings.sh - regenerate src/bindings.rs from include/smd.h.
#
#   bindings/rust/smd-sys/gen-bindings.sh [OUTPUT]   (default: src/bindings.rs)
#
# This is the one place the bindgen command is written down: the committed
# src/bindings.rs is its output, and tests/bindings_fresh.rs runs it again
# into a temporary file and fails on any difference. BINDGEN names the
# bindgen command (default: bindgen on PATH); its output is formatted with
# rustfmt, which must be on PATH too.
#
# Choices:
# - only smd_* functions and types and SMD_*/smd_* constants (macros such as
#   SMD_TAG_MAX and SMD_UNDEFINED become consts; function-like macros and
#   the *_INIT initialisers do not);
# - C enums become newtypes (`smd_result(pub c_uint)` with associated
#   consts): a code that a newer libsmd returns and this header does not
#   know is still a valid value, which a Rust enum would not be;
# - size_t is usize; structs derive Default (all zero bytes) so that the
#   safe crate can hand them to the *_init() functions without unsafe;
# - no header comment: the file depends only on smd.h, these flags and the
#   generator below. Other bindgen versions format the same bindings
#   differently, so the freshness test compares only when the installed
#   bindgen is this one (it says so and skips otherwise).
#
# generator: bindgen 0.60.1
set -eu
command -v rustfmt >/dev/null || { echo "gen-bindings.sh: rustfmt not found on PATH" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/src/bindings.rs"}
"${BINDGEN:-bindgen}" \
  --disable-header-comment \
  --allowlist-function 'smd_.*' \
  --allowlist-type 'smd_.*' \
  --allowlist-var '(smd|SMD)_.*' \
  --blocklist-type '__.*' \
  --default-enum-style newtype \
  --size_t-is-usize \
  --with-derive-default \
  --rustfmt-bindings \
  --output "$out" \
  "$here/../../../include/smd.h"
