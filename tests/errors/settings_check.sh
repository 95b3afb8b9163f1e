#!/usr/bin/env bash
# Settings that must agree across ranks (src/core/coll/agree/settings_agreement.h),
# with real processes: one rank with another SMD_ALGO, SMD_FUSION_BYTES, SMD_GPU_IPC,
# SMD_GPU_IPC_ONESHOT_BYTES, SMD_GPU_DIRECT or tuning file makes init fail at
# once with SMD_ERR_MISMATCH on every rank, naming the variable (before this check such a job waited for SMD_TIMEOUT);
# the default written out on one rank only, or the same tuning numbers
# under two paths, agree.
# usage: settings_check.sh SMDRUN SMD_BENCH
set -u
smdrun=$1 bench=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "settings_check: $*"; exit 1; }

# run NP VAR VALUE: VAR=VALUE on the last rank only (VALUE "@file": a copy of
# a tuning file under a path of that rank's own); prints the job's output.
run() {
  cat >"$dir/wrap" <<WRAP
#!/usr/bin/env bash
if [[ \$SMD_RANK == $(($1 - 1)) ]]; then
  v='$3'
  [[ \$v == @* ]] && { cp "${dir}/\${v#@}" "${dir}/mine.\$SMD_RANK"; v="${dir}/mine.\$SMD_RANK"; }
  export $2="\$v"
fi
exec "\$@"
WRAP
  chmod +x "$dir/wrap"
  SMD_TIMEOUT=120 "$smdrun" -n "$1" --timeout 100 "$dir/wrap" "$bench" allreduce -b 4K -e 4K -n 2 -w 0 2>&1
}

# expect_mismatch NP VAR VALUE
expect_mismatch() {
  local start=$SECONDS out
  out=$(run "$@") && fail "$2 differing between ranks was accepted: $out"
  local n
  n=$(echo "$out" | grep -c "SMD_ERR_MISMATCH: smd_comm_init: $2 differs between ranks")
  [[ $n == "$1" ]] || fail "expected the mismatch on all $1 ranks, got $n: $out"
  ((SECONDS - start < 60)) || fail "$2: the mismatch took $((SECONDS - start)) s"
  echo "$2 differing at np=$1: SMD_ERR_MISMATCH on every rank"
}

expect_mismatch 2 SMD_ALGO allreduce=ring
expect_mismatch 3 SMD_FUSION_BYTES 4096
expect_mismatch 2 SMD_GPU_IPC 1
expect_mismatch 2 SMD_GPU_IPC_ONESHOT_BYTES 0
expect_mismatch 2 SMD_GPU_DIRECT on
expect_mismatch 2 SMD_GPU_STAGE_CHUNK_BYTES 1000
printf 'arena_gbps = 5\n' >"$dir/tuning"
printf 'arena_gbps = 6\n' >"$dir/other"
export SMD_TUNING_FILE=$dir/tuning
expect_mismatch 2 SMD_TUNING_FILE @other

# Agreeing: the same numbers under another path; a default written out.
out=$(run 2 SMD_TUNING_FILE @tuning) || fail "the same tuning file under two paths: $out"
unset SMD_TUNING_FILE
out=$(run 2 SMD_ALGO auto) || fail "SMD_ALGO=auto on one rank only: $out"
out=$(run 3 SMD_HIER_CHUNK_BYTES 1048576) || fail "the default chunk written out: $out"
out=$(run 2 SMD_GPU_IPC false) || fail "SMD_GPU_IPC's default written out: $out"
out=$(run 2 SMD_GPU_DIRECT AUTO) || fail "SMD_GPU_DIRECT's default written out: $out"
# A value that is no setting at all: a clear error at init, not a hang.
out=$(SMD_GPU_DIRECT=maybe run 2 SMD_GPU_DIRECT maybe) && fail "SMD_GPU_DIRECT=maybe was accepted: $out"
[[ $(echo "$out" | grep -c "SMD_GPU_DIRECT must be auto, on or off") == 2 ]] ||
  fail "SMD_GPU_DIRECT=maybe: expected the error on both ranks: $out"
echo "settings_check: ok"
