#!/bin/sh
# Runs a heavy test variant only when SMD_TEST_HEAVY=1; otherwise the test
# is reported as skipped (77 is Meson's skip status). Heavy variants (the
# whole collective suite with megabyte messages over a network transport at
# every world size, 1 GiB conformance runs at every size) keep a plain
# `meson test` quick; a quick variant of each runs there. scripts/test.sh
# (and so CI) sets SMD_TEST_HEAVY=1 and runs them all: about 2.5 minutes
# together on the 2-core development machine.
# Usage: heavy_only.sh PROGRAM [ARGS...]
if [ "${SMD_TEST_HEAVY:-0}" != "1" ]; then
  echo "heavy variant: skipped (set SMD_TEST_HEAVY=1 to run it)"
  exit 77
fi
exec "$@"
