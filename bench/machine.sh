# shellcheck shell=bash
# bench/machine.sh: what a benchmark table must state about the machine it
# ran on (sourced by compare.sh and compare_network.sh). Machines differ in
# cache size and memory bandwidth, and the shared ones are loaded: a table is
# read with the CPU, the last-level cache and the load beside it.

# The CPU model as lscpu names it ("unknown" without lscpu).
machine_cpu() {
  local m
  m=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
  echo "${m:-unknown}"
}

# The last-level (L3) cache of CPU 0 in bytes, from sysfs; empty when the
# kernel does not say (then no in-cache rate is used by bench/report.py).
machine_l3_bytes() {
  local d size
  for d in /sys/devices/system/cpu/cpu0/cache/index*; do
    [ "$(cat "$d/level" 2>/dev/null)" = 3 ] || continue
    size=$(cat "$d/size" 2>/dev/null) || continue
    case "$size" in
      *K) echo $(( ${size%K} * 1024 )) ;;
      *M) echo $(( ${size%M} * 1024 * 1024 )) ;;
      *[0-9]) echo "$size" ;;
    esac
    return
  done
}

# The 1, 5 and 15 minute load averages.
machine_load() { cut -d' ' -f1-3 /proc/loadavg; }

# One line for a table's header.
machine_line() {
  local l3 l3_text=unknown
  l3=$(machine_l3_bytes)
  [ -n "$l3" ] && l3_text="$(( l3 >> 20 )) MiB"
  echo "cpu: $(machine_cpu), $(nproc) CPUs, L3 $l3_text; load average $(machine_load)"
}
