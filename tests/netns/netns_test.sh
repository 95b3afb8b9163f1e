#!/usr/bin/env bash
# Two "nodes" at real addresses: network namespaces A and B joined by a veth
# pair (10.211.0.1/24 in A, 10.211.0.2/24 in B; nothing else is reachable
# from either), two ranks in each, so the rendezvous store (served by rank 0
# at A's address) and the network transport cross a real interface. Each
# node has its own SMD_NODE_ID (the boot id is the same on one machine).
#
#   netns_test.sh tcp   hier_test and the coll_test cross-section over
#                       SMD_TRANSPORT=shm+tcp, SMD_TCP_ADDR = the veth address
#   netns_test.sh ucx   the same over auto (shm+ucx; the plugin path given
#                       by meson has only those two), UCX_TLS=tcp and
#                       UCX_NET_DEVICES = the veth
#   netns_test.sh cut   the link is cut (ip link set <A's veth> down) while
#                       netns_worker runs allreduces across the nodes
#   netns_test.sh tbf   the veths limited to 2 Gbit/s (tc tbf): smd-bench
#                       allreduce flat (SMD_ALGO=ring) against automatic,
#                       smd-bench allreduce --json -b 1M -e 16M -f 4 -n 5 -w 1;
#                       prints the table and asserts that automatic chose
#                       the hierarchy at every size, sent at most half the
#                       ring's bytes across the link, and took less time
#                       over all sizes together (the link is the bottleneck)
#   netns_test.sh shrink
#                       netns_shrink_worker over SMD_TRANSPORT=tcp: rank 3
#                       (on B) is killed with SIGKILL while the ranks run
#                       allreduces; the survivors (0, 1 on A, 2 on B)
#                       revoke, shrink to 3 and reduce 1 MiB across the
#                       veth. Then again, killing node B whole (ranks 2, 3):
#                       0 and 1 shrink to 2. Every survivor must exit 0
#                       within 2 x SMD_TIMEOUT of the kill.
#   netns_test.sh choice
#                       the link measured when the world forms prices the
#                       choice: smd-bench reduce 16 KiB to 1 MiB over the
#                       bare veth, then with it limited to 50 Mbit/s (tbf);
#                       asserts that the measured bandwidth fell at least
#                       4x (rank 0's "network between" line, SMD_DEBUG=info)
#                       and that the automatic choice differs at some size
#   netns_test.sh bench for bench/sim_vs_netns.sh, asserts nothing: the
#                       veths shaped to NETNS_RATE (default 2gbit) by tbf,
#                       or with NETNS_DELAY (default 0us) by netem; smd-bench
#                       $NETNS_BENCH_ARGS --json over shm+tcp with
#                       SMD_TUNING_FILE=$NETNS_TUNING_FILE when set; prints
#                       rank 0's JSON lines and the qdiscs' counters.
#                       NETNS_RATE=unshaped: no qdisc (the hosts' CPU
#                       bound); NETNS_RANKS_PER_NODE: ranks on each
#                       node (default 2); NETNS_NODES: nodes (default 2;
#                       more than 2 hang off a bridge in a namespace of its
#                       own, each node's link shaped both ways, as a NIC on
#                       a switch); NETNS_TBF_BURST,
#                       NETNS_TBF_LATENCY (default 256kb, 10ms) and
#                       NETNS_TBF_CHILD (a qdisc inside tbf) shape tbf
#
# Programs come from the environment (set by tests/netns/meson.build):
# NETNS_HIER_TEST, NETNS_COLL_TEST, NETNS_WORKER, NETNS_SHRINK_WORKER,
# NETNS_BENCH.
# Exit status 77 (meson's skip) with the reason when namespaces cannot be
# made here: not root, no `ip` (package iproute2), or the kernel refuses.
set -u

mode="${1:-}"
case "$mode" in
  tcp | ucx | cut | tbf | shrink | choice | bench) ;;
  *) echo "usage: $0 tcp|ucx|cut|tbf|shrink|choice|bench" >&2; exit 2 ;;
esac

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}

[[ "$(id -u)" -eq 0 ]] || skip "not root: creating network namespaces needs CAP_SYS_ADMIN"
command -v ip >/dev/null 2>&1 || skip "no 'ip' command (Debian package iproute2)"
[[ "$mode" != tbf && "$mode" != bench && "$mode" != choice ]] || command -v tc >/dev/null 2>&1 || skip "no 'tc' command (package iproute2)"

# Unique names, so that concurrent runs do not collide; interface names
# have at most 15 characters.
tag="$$"
nodes=2
[[ "$mode" != bench ]] || nodes=${NETNS_NODES:-2}
[[ $nodes =~ ^[0-9]+$ && $nodes -ge 2 && $nodes -le 8 ]] || { echo "NETNS_NODES is 2 to 8" >&2; exit 2; }
ns=("smdnsA$tag" "smdnsB$tag")
veth=("smdva$tag" "smdvb$tag")
addr=(10.211.0.1 10.211.0.2)
# More than two nodes: node i's veth[i] in ns[i], its peer on the
# bridge in the switch namespace (bport[i]).
switch_ns="smdnsS$tag"
bport=()
for ((i = 2; i < nodes; ++i)); do
  ns+=("smdns$i$tag")
  veth+=("smdv$i$tag")
  addr+=("10.211.0.$((i + 1))")
done
if ((nodes > 2)); then
  for ((i = 0; i < nodes; ++i)); do bport+=("smdp$i$tag"); done
fi
work="$(mktemp -d)"
pids=()

# shellcheck disable=SC2317  # run by the trap
cleanup() {
  local p
  # Each rank's timeout made its own process group (pgid = the pid that
  # start saw): kill the group, so that the rank itself goes too.
  for p in "${pids[@]}"; do
    kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
  done
  wait 2>/dev/null
  for p in "${ns[@]}"; do ip netns del "$p" 2>/dev/null; done
  ((nodes == 2)) || ip netns del "$switch_ns" 2>/dev/null
  ip link del "${veth[0]}" 2>/dev/null  # if it never moved into A
  for p in "${veth[@]}"; do ip link del "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

for p in "${ns[@]}"; do
  ip netns add "$p" 2>"$work/err" || skip "ip netns add refused: $(cat "$work/err")"
done
ip netns exec "${ns[0]}" true 2>"$work/err" || skip "ip netns exec refused: $(cat "$work/err")"
if ((nodes == 2)); then
  ip link add "${veth[0]}" type veth peer name "${veth[1]}" 2>"$work/err" ||
    skip "no veth pair: $(cat "$work/err")"
else
  ip netns add "$switch_ns" 2>"$work/err" || skip "ip netns add refused: $(cat "$work/err")"
  ip -n "$switch_ns" link add smdbr type bridge 2>"$work/err" || skip "no bridge: $(cat "$work/err")"
  ip -n "$switch_ns" link set smdbr up || fail "could not bring the bridge up"
  for ((i = 0; i < nodes; ++i)); do
    ip link add "${veth[i]}" type veth peer name "${bport[i]}" 2>"$work/err" ||
      skip "no veth pair: $(cat "$work/err")"
    { ip link set "${bport[i]}" netns "$switch_ns" &&
      ip -n "$switch_ns" link set "${bport[i]}" master smdbr &&
      ip -n "$switch_ns" link set "${bport[i]}" up; } || fail "could not attach ${bport[i]} to the bridge"
  done
fi
for ((i = 0; i < nodes; ++i)); do
  if ! { ip link set "${veth[i]}" netns "${ns[i]}" &&
    ip -n "${ns[i]}" addr add "${addr[i]}/24" dev "${veth[i]}" &&
    ip -n "${ns[i]}" link set "${veth[i]}" up &&
    ip -n "${ns[i]}" link set lo up; }; then
    fail "could not set up ${veth[i]} in ${ns[i]}"
  fi
done

# bench mode may set NETNS_RANKS_PER_NODE (default 2); the other modes' jobs are 2 x 2.
per_node=2
[[ "$mode" != bench ]] || per_node=${NETNS_RANKS_PER_NODE:-2}
world=$((nodes * per_node))
port=29600  # a fresh namespace has every port free; one per run
run=0

# start LABEL SECONDS CMD ARGS...: the 4 ranks of one job in the background
# (ranks 0-1 in A, 2-3 in B), each under `timeout SECONDS`, with the extra
# environment in the array job_env; output in $work/LABEL.RANK.
start() {
  local label="$1" limit="$2" r node
  shift 2
  run=$((run + 1))
  pids=()
  for ((r = 0; r < world; ++r)); do
    node=$((r / per_node))
    ip netns exec "${ns[node]}" env \
      SMD_RANK="$r" SMD_WORLD_SIZE="$world" \
      SMD_LOCAL_RANK="$((r % per_node))" SMD_LOCAL_SIZE="$per_node" \
      SMD_MASTER_ADDR="${addr[0]}" SMD_MASTER_PORT="$((port + run))" \
      SMD_JOB_TOKEN="netns-$tag-$run" SMD_NODE_ID="netns-$tag-node$node" \
      SMD_TCP_ADDR="${addr[node]}" UCX_NET_DEVICES="${veth[node]}" \
      "${job_env[@]}" timeout -k 5 "$limit" "$@" >"$work/$label.$r" 2>&1 &
    pids+=("$!")
  done
}

# finish LABEL: waits for the ranks of `start`; their exit statuses in
# status[]. Prints every rank's output when one failed or with VERBOSE=1.
finish() {
  local label="$1" r bad=0
  status=()
  for ((r = 0; r < world; ++r)); do
    wait "${pids[r]}"
    status[r]=$?
    [[ ${status[r]} -eq 0 ]] || bad=1
  done
  pids=()
  if [[ $bad -eq 1 || -n "${VERBOSE:-}" ]]; then
    for ((r = 0; r < world; ++r)); do
      echo "--- $label rank $r (node $((r / per_node)), exit ${status[r]}):"
      tail -n 40 "$work/$label.$r"
    done
  fi
  return $bad
}

# await_ready LABEL: until every rank of `start` printed READY (30 s at most).
await_ready() {
  local label="$1" i
  for ((i = 0; i < 300; ++i)); do
    [[ $(cat "$work/$label".* | grep -c '^READY') -eq $world ]] && return 0
    sleep 0.1  # polling the ranks' output, not deciding a result
  done
  tail -n 20 "$work/$label".*
  fail "$label: the ranks did not all finish an allreduce within 30 s"
}

# Bytes that A's end of the veth sent (all that A sends to B goes there).
a_tx_bytes() {
  ip netns exec "${ns[0]}" cat "/sys/class/net/${veth[0]}/statistics/tx_bytes"
}

# run_ok LABEL CMD ARGS...: a job that must succeed on every rank and send
# at least a megabyte from A to B over the veth.
run_ok() {
  local label="$1" before after t0=$SECONDS
  shift
  before="$(a_tx_bytes)"
  start "$label" 120 "$@"
  finish "$label" || fail "$label: a rank failed"
  after="$(a_tx_bytes)"
  echo "ok: $label in $((SECONDS - t0)) s, $(((after - before) / 1024)) KiB from A to B over ${veth[0]}"
  ((after - before > 1048576)) || fail "$label: only $((after - before)) bytes crossed the veth"
}

coll_filter='--gtest_filter=Collectives.*:PointToPoint.*:Communicators.*:*float32_sum*'

case "$mode" in
  tcp | ucx)
    if [[ "$mode" == tcp ]]; then
      job_env=(SMD_TRANSPORT=shm+tcp)
    else
      job_env=(UCX_TLS=tcp)
    fi
    run_ok "hier_test-$mode" "$NETNS_HIER_TEST"
    run_ok "coll_test-$mode" "$NETNS_COLL_TEST" "$coll_filter"
    ;;

  shrink)
    smd_timeout=30
    job_env=(SMD_TRANSPORT=tcp "SMD_TIMEOUT=$smd_timeout")
    for killed in "3" "2 3"; do
      label="shrink-${killed// /}"
      read -ra victims <<<"$killed"
      start "$label" 120 "$NETNS_SHRINK_WORKER" "${victims[@]}"
      await_ready "$label"
      t_kill=$SECONDS
      # Each rank's timeout leads its own process group: the rank goes too.
      for k in "${victims[@]}"; do kill -KILL -- "-${pids[k]}" || fail "could not kill rank $k"; done
      bad=0
      for ((r = 0; r < world; ++r)); do
        wait "${pids[r]}"
        status[r]=$?
        [[ " $killed " == *" $r "* ]] && continue
        out="$(cat "$work/$label.$r")"
        echo "$label rank $r (node $((r / per_node))): exit ${status[r]}: $(grep -E '^(LOST|SHRUNK|FAILED|WRONG)' <<<"$out" | tr '\n' ' ')"
        [[ ${status[r]} -eq 0 ]] && grep -q '^SHRUNK' <<<"$out" || bad=1
      done
      pids=()
      elapsed=$((SECONDS - t_kill))
      if ((bad)); then
        for ((r = 0; r < world; ++r)); do
          echo "--- $label rank $r:"
          tail -n 40 "$work/$label.$r"
        done
        fail "$label: a survivor did not shrink and reduce"
      fi
      echo "ok: $label: the survivors shrank and reduced within $elapsed s of the kill"
      ((elapsed <= 2 * smd_timeout)) || fail "$label: took longer than 2 x SMD_TIMEOUT"
    done
    ;;

  cut)
    # Every rank is expected to print, within about SMD_TIMEOUT of the cut,
    #   FAILED SMD_ERR_<code> after <s> s, <n> calls: <message>
    # and exit 10, at least one rank of each node naming a rank of the other
    # node. As seen here (tcp):
    #   ranks 0, 1 (node A, which holds the store): SMD_ERR_TIMEOUT "...
    #     allreduce on rank 0/2 of comm 3 (world rank 0) timed out after
    #     10.0 s (SMD_TIMEOUT): still waiting for ranks 1 (world rank 2)"
    #     (their rail peer across the cut);
    #   ranks 2, 3 (node B): SMD_ERR_PEER_FAILURE "... lost the store served
    #     by rank 0 ..." (the health check after their deadline cannot reach
    #     the store across the cut).
    #   A rank waiting in a node phase then may instead time out naming its
    #     node peer ("ranks that have not reached the last step: ...").
    # None may hang or report success, and no node may blame only itself.
    smd_timeout=10
    job_env=(SMD_TRANSPORT=shm+tcp "SMD_TIMEOUT=$smd_timeout")
    # Allreduces of 1 MiB for at most 45 s (a run that never fails ends
    # then, with exit 0).
    start cut 60 "$NETNS_WORKER" 45 $((1 << 20))
    for ((i = 0; i < 300; ++i)); do
      [[ $(cat "$work"/cut.* | grep -c '^READY') -eq $world ]] && break
      sleep 0.1
    done
    if [[ $(cat "$work"/cut.* | grep -c '^READY') -ne $world ]]; then
      tail -n 20 "$work"/cut.*
      fail "the ranks did not all finish an allreduce within 30 s"
    fi
    sleep 0.5
    ip -n "${ns[0]}" link set "${veth[0]}" down || fail "could not cut the link"
    t_cut=$SECONDS
    finish cut
    elapsed=$((SECONDS - t_cut))
    # A rank that was waiting in a phase inside its node when the cut hit
    # may name its node peer instead (it waits for that peer, which waits
    # across the cut; telling every rank the first failure is issue 22's
    # "one outcome per failure"), so the other node must be named by at
    # least one rank of each node.
    declare -A named_across=()
    for ((r = 0; r < world; ++r)); do
      out="$(cat "$work/cut.$r")"
      echo "rank $r: exit ${status[r]}: $(grep -E '^(ALGO|FAILED)' <<<"$out" | tr '\n' ' ')"
      [[ ${status[r]} -eq 10 ]] || fail "rank $r did not end with an smd error (exit ${status[r]})"
      other=$((r < per_node ? per_node : 0))
      if grep -Eq "^FAILED SMD_ERR_.*rank ($other|$((other + 1)))\b" <<<"$out"; then
        named_across[$((r / per_node))]=1
      fi
    done
    for ((node = 0; node < world / per_node; ++node)); do
      [[ -n "${named_across[$node]:-}" ]] ||
        fail "no rank of node $node names a rank of the other node in its error"
    done
    grep -q '^ALGO hierarchical' "$work/cut.0" || fail "the allreduce was not hierarchical"
    echo "every rank failed within $elapsed s of the cut (SMD_TIMEOUT=$smd_timeout)"
    ((elapsed <= 3 * smd_timeout)) || fail "took longer than 3 x SMD_TIMEOUT"
    ;;

  tbf)
    for i in 0 1; do
      tc -n "${ns[i]}" qdisc add dev "${veth[i]}" root tbf rate 2gbit burst 256kb latency 10ms ||
        skip "tc refused a tbf qdisc"
    done
    bench=("$NETNS_BENCH" allreduce --json -b 1M -e 16M -f 4 -n 5 -w 1)
    for algo in ring auto; do
      job_env=(SMD_TRANSPORT=shm+tcp)
      [[ $algo == auto ]] || job_env+=("SMD_ALGO=$algo")
      start "bench-$algo" 120 "${bench[@]}"
      finish "bench-$algo" || fail "smd-bench with SMD_ALGO=$algo failed"
      grep '^{' "$work/bench-$algo.0" | sed "s/^/$algo: /"
    done
    echo "bytes      flat_ring_us  hierarchical_us  (2 nodes x 2 ranks, 2 Gbit/s veth)"
    paste <(grep -o '"bytes": [0-9]*\|"time_us": [0-9.]*' "$work/bench-ring.0" | paste - - | awk '{print $2, $4}') \
      <(grep -o '"time_us": [0-9.]*' "$work/bench-auto.0" | awk '{print $2}') |
      awk '{printf "%-10s %12s %16s  %.2fx\n", $1, $2, $3, $2 / $3}'
    field() { grep -o "\"$1\": \"*[0-9a-z.]*" "$work/bench-$2.0" | sed 's/.*: "*//'; }
    sizes=$(field bytes ring | wc -l)
    ((sizes == 3)) && (($(field bytes auto | wc -l) == sizes)) ||
      fail "expected 3 sizes from each run, got $sizes (ring) and $(field bytes auto | wc -l) (auto)"
    [[ $(field algo auto | sort -u) == hierarchical ]] ||
      fail "automatic did not choose the hierarchy at every size: $(field algo auto | tr '\n' ' ')"
    paste <(field inter_node_bytes ring) <(field inter_node_bytes auto) |
      awk '$2 <= 0 || $1 < 2 * $2 {bad = 1} END {exit bad}' ||
      fail "the hierarchy did not send at most half the ring's bytes across nodes"
    paste <(field time_us ring) <(field time_us auto) |
      awk '{ring += $1; auto += $2} END {exit !(auto < ring)}' ||
      fail "the hierarchy was not faster than the flat ring over a 2 Gbit/s link"
    echo "automatic chose the hierarchy at every size, with at most half the ring's bytes across nodes, and was faster"
    ;;

  choice)
    # reduce: over the bare veth a flat ring wins from some size on, over
    # a slow link the hierarchy (less across the link) at every size.
    bench=("$NETNS_BENCH" reduce --json -b 16K -e 1M -f 4 -n 2 -w 1)
    for link in bare slow; do
      if [[ $link == slow ]]; then
        for i in 0 1; do
          tc -n "${ns[i]}" qdisc add dev "${veth[i]}" root tbf rate 50mbit burst 64kb latency 50ms ||
            skip "tc refused a tbf qdisc"
        done
      fi
      job_env=(SMD_TRANSPORT=shm+tcp SMD_DEBUG=info SMD_DEBUG_SUBSYS=calibrate)
      start "choice-$link" 120 "${bench[@]}"
      finish "choice-$link" || fail "smd-bench over the $link link failed"
    done
    gbps() { grep -o 'network between 2 nodes measured: [0-9.]* us, [0-9.]* GB/s' "$work/choice-$1.0" | awk '{print $8}'; }
    algos() { grep -o '"algo": "[a-z]*' "$work/choice-$1.0" | sed 's/.*"//'; }
    echo "measured link: bare $(gbps bare) GB/s, slow $(gbps slow) GB/s"
    [[ -n "$(gbps bare)" && -n "$(gbps slow)" ]] || fail "a world did not measure its link"
    awk -v b="$(gbps bare)" -v s="$(gbps slow)" 'BEGIN {exit !(s * 4 <= b)}' ||
      fail "the 50 Mbit/s link did not measure at least 4x slower than the bare veth"
    echo "bytes      bare          slow"
    paste <(grep -o '"bytes": [0-9]*' "$work/choice-bare.0" | awk '{print $2}') <(algos bare) <(algos slow) |
      awk '{printf "%-10s %-13s %s\n", $1, $2, $3}'
    [[ "$(algos bare | wc -l)" -ge 4 && "$(algos bare)" != "$(algos slow)" ]] ||
      fail "the automatic choice was the same at every size over both links"
    echo "the measured link changed the automatic choice"
    ;;

  bench)
    # Without a delay, tbf (as the tbf mode; netem is a module some
    # kernels lack); with one, netem shapes both.
    # shape DEV NS [rate]: tbf on DEV's egress, or netem with NETNS_DELAY
    # (unless "rate": the delay is added once per direction, at the sender).
    shape() {
      local dev=$1 where=$2
      if [[ "${NETNS_DELAY:-0us}" == 0us || ${3:-} == rate ]]; then
        tc -n "$where" qdisc add dev "$dev" root handle 1: tbf rate "${NETNS_RATE:-2gbit}" \
          burst "${NETNS_TBF_BURST:-256kb}" latency "${NETNS_TBF_LATENCY:-10ms}" || skip "tc refused a tbf qdisc"
        # NETNS_TBF_CHILD: a qdisc inside tbf instead of its FIFO (fq_codel:
        # each flow its queue, so one direction's ACKs skip the other's data).
        # shellcheck disable=SC2086  # NETNS_TBF_CHILD is a qdisc and its words
        [[ -z "${NETNS_TBF_CHILD:-}" ]] || tc -n "$where" qdisc add dev "$dev" parent 1:1 \
          ${NETNS_TBF_CHILD} || skip "tc refused qdisc ${NETNS_TBF_CHILD} inside tbf"
      else
        tc -n "$where" qdisc add dev "$dev" root netem delay "$NETNS_DELAY" \
          rate "${NETNS_RATE:-2gbit}" limit 100000 || skip "tc refused a netem qdisc"
      fi
    }
    if [[ "${NETNS_RATE:-}" != unshaped ]]; then  # unshaped: what the hosts' CPUs allow
      # Each node's egress; behind the bridge also its port's egress towards
      # the node (a lone pair has both ends shaped already).
      for ((i = 0; i < nodes; ++i)); do shape "${veth[i]}" "${ns[i]}"; done
      if ((nodes > 2)); then
        for ((i = 0; i < nodes; ++i)); do shape "${bport[i]}" "$switch_ns" rate; done
      fi
    fi
    job_env=(SMD_TRANSPORT=shm+tcp)
    [[ -z "${NETNS_TUNING_FILE:-}" ]] || job_env+=("SMD_TUNING_FILE=$NETNS_TUNING_FILE")
    # shellcheck disable=SC2086  # NETNS_BENCH_ARGS is a list of words
    start bench 300 "$NETNS_BENCH" ${NETNS_BENCH_ARGS:-allreduce -b 1M -e 16M -f 4} --json
    finish bench || fail "smd-bench failed"
    grep '^{' "$work/bench.0"
    # The qdiscs' counters (sent, dropped, overlimits), to tell a link that
    # dropped packets (and so made TCP wait to retransmit) from a slow host.
    for ((i = 0; i < nodes; ++i)); do
      echo "qdisc ${ns[i]}: $(tc -s -n "${ns[i]}" qdisc show dev "${veth[i]}" | tr -s ' \n' ' ')"
    done
    ;;
esac
exit 0
