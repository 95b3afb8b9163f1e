# Shared by the check_selection.sh scripts of the network plugins: checks
# on the output ($out), exit status ($status) and description ($what) of
# the last run, counting mismatches in $failures. Source it.
failures=0

# expect PATTERN: the last run's output has a line matching PATTERN.
expect() {
  if ! printf '%s\n' "$out" | grep -q -- "$1"; then
    printf '%s\n' "$out"
    echo "check_selection: $what: no line matches '$1'"
    failures=$((failures + 1))
  fi
}

# expect_status ok|fail
expect_status() {
  if { [ "$1" = ok ] && [ $status -ne 0 ]; } || { [ "$1" = fail ] && [ $status -eq 0 ]; }; then
    printf '%s\n' "$out"
    echo "check_selection: $what: expected the run to $1 (status $status)"
    failures=$((failures + 1))
  fi
}
