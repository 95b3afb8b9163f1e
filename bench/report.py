#!/usr/bin/python3
"""Merge the raw JSON of bench/compare.sh into one table.

usage: bench/report.py RESULTS_DIR

Reads RESULTS_DIR/r<rep>_<impl>_<coll>_np<N>_<group>.jsonl (smd-bench,
mpi_bench and gloo_bench: one JSON object per size, the same keys),
r<rep>_membw.jsonl (bench/membw) and meta.jsonl, and prints:
  * per collective x ranks x size: busbw of smd / Open MPI / Gloo (median
    over repetitions and [min-max]), smd's ratio to each peer, a reference
    rate derived from the membw probe and smd's fraction of it (the traffic of
    what smd's runs did: broadcast in place moves pN, not (p+1)N); also smd
    with buffers from smd_mem_alloc ("smd mem", read in place by peers) and
    its ratio to Open MPI; cells with wrong results are marked E, cells with
    runs that did not check their result (-c 0) u;
  * the 8-byte latency lines (time_us);
  * the resident-memory line of the 256 MiB allreduce;
  * how the reference is derived (see also bench/README.md). It is not a
    bound: the probe's kernels are not the fastest way to move memory, and
    smd's allreduce has passed it (113% at np=2, 256 MiB).
Exits 1 when a checked result was wrong. Its formulas are unit-tested by
bench/test_report.py.
"""
import glob
import json
import os
import re
import statistics
import sys

IMPLS = [("smd", "smd"), ("smdmem", "smd mem"), ("mpi", "Open MPI"), ("mpibest", "MPI best"), ("gloo", "Gloo")]
# Implementations that ran only some collectives: "-" elsewhere, not n/a.
PARTIAL = {"smdmem", "mpibest"}
# Open MPI with one reduce_scatter_block algorithm forced (compare.sh's mpirsN).
FORCED_RE = re.compile(r"^mpirs(\d)$")
COLLS = ["allreduce", "allgather", "reduce_scatter", "broadcast"]
MIB = 1 << 20
# The membw probe's arrays per kernel (SIZE bytes each): what must fit in the
# last-level cache for its rate to be an in-cache rate.
PROBE_ARRAYS = {"memcpy": 2, "add": 3}

FILE_RE = re.compile(r"^r(\d+)_(smd|smdmem|mpi|mpirs\d|gloo)_([a-z_]+)_np(\d+)_([a-z]+)\.jsonl$")


def read_jsonl(path):
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            # smdrun tags lines "[rank] " unless --no-tag-output; accept both.
            line = re.sub(r"^\[\d+\]\s*", "", line)
            if not line.startswith("{"):
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def size_str(b):
    for unit, n in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1024)):
        if b >= n and b % n == 0:
            return "%d %s" % (b // n, unit)
    return "%d B" % b


def g(x):
    """A bandwidth or ratio with three significant digits, compact."""
    if x is None:
        return "n/a"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 10:
        return "%.1f" % x
    if abs(x) >= 1:
        return "%.2f" % x
    if abs(x) >= 0.001:
        return "%.3f" % x
    return "%.1e" % x


def med_range(vals):
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals)


def cell(vals):
    """'median [min-max]' of a list, or n/a."""
    m = med_range(vals)
    if m is None:
        return "n/a"
    if len(vals) == 1:
        return g(m[0])
    return "%s [%s-%s]" % (g(m[0]), g(m[1]), g(m[2]))


# What compare.sh runs in place when a record does not say ("in_place" is in
# the JSON of every bench since it has been printed): broadcast only (smd-bench
# -i 1, MPI_Bcast's single buffer, gloo_bench's in-place broadcast).
IN_PLACE_BY_DEFAULT = {"broadcast"}


def traffic(coll, n_bytes, p, in_place=False):
    """Compulsory memory traffic of one call over all p ranks (bytes), and per rank.

    N = the size in nccl-tests' convention. Every input byte is read once and
    every output byte written once; nothing is staged. In place, data that is
    already where it belongs is neither read nor written: a broadcast root
    moves nothing (its input is its output), an allgather's own block stays."""
    if coll == "allreduce":        # read own input N, write own output N (in place too)
        total = 2 * p * n_bytes
    elif coll == "allgather":      # out of place: inputs N/p each (read once), outputs N each
        # in place: each of the p blocks is read once, written to the p-1 others
        total = p * n_bytes if in_place else (p + 1) * n_bytes
    elif coll == "reduce_scatter":  # inputs N each, outputs N/p each (in place too)
        total = (p + 1) * n_bytes
    elif coll == "broadcast":      # root's N read once; p-1 receivers write N (+ root's output out of place)
        total = p * n_bytes if in_place else (p + 1) * n_bytes
    else:
        return None, None
    return total, total / p


BUSBW_FACTOR = {
    "allreduce": lambda p: 2.0 * (p - 1) / p,
    "allgather": lambda p: (p - 1) / p,
    "reduce_scatter": lambda p: (p - 1) / p,
    "broadcast": lambda p: 1.0,
}


def busbw_reference(coll, n_bytes, p, rate_gbps, in_place=False):
    """The busbw (GB/s) of a call that moves only its compulsory traffic
    T = traffic() at rate_gbps GB/s of total traffic (all p ranks share one
    memory system): time T / B, busbw = factor x N / time. Not a bound: an
    implementation can pass it where B is below what the memory system can
    do (the probe's best rate is a measurement, not the peak)."""
    total, _ = traffic(coll, n_bytes, p, in_place)
    if total is None or not rate_gbps:
        return None
    return BUSBW_FACTOR[coll](p) * n_bytes * rate_gbps / total


def ran_in_place(records, coll):
    """Whether these runs (one implementation, one point) were in place: what
    the JSON says, else compare.sh's default."""
    flags = {bool(r["in_place"]) for r in records if "in_place" in r}
    if len(flags) == 1:
        return flags.pop()
    return coll in IN_PLACE_BY_DEFAULT


def best_mpi(recs):
    """Open MPI's best configuration at one point: of its default ("mpi") and
    each forced algorithm ("mpirsN"), the one with the highest median busbw.
    Returns (records, label) or (None, None) when no forced run is there."""
    forced = {k: l for k, l in recs.items() if FORCED_RE.match(k) and l}
    if not forced:
        return None, None
    cands = dict(forced)
    if recs.get("mpi"):
        cands["mpi"] = recs["mpi"]
    top = max(cands, key=lambda k: statistics.median(r["busbw_gbps"] for r in cands[k]))
    m = FORCED_RE.match(top)
    return cands[top], ("alg %s" % m.group(1)) if m else "default"


def l3_bytes(meta):
    """The last-level cache size compare.sh recorded (bytes), else None."""
    for m in meta:
        if m.get("meta") == "compare" and m.get("l3_bytes"):
            return int(m["l3_bytes"])
    return None


def in_cache_limit(l3):
    """All ranks' user buffers together (bytes) up to which the in-cache rate
    is the reference: half the L3, so that staging and the probe's own arrays
    have room; None (never in cache) when the L3 size is unknown."""
    return l3 // 2 if l3 else None


def unchecked(records):
    """How many of these runs did not check their result (-c 0): their
    "errors": 0 means nothing. Records from before "checked" was printed count
    as checked (compare.sh passed -c 0 only to later repetitions at 256 MiB)."""
    return sum(1 for r in records if r.get("checked", 1) == 0)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d = sys.argv[1]
    meta = read_jsonl(os.path.join(d, "meta.jsonl")) if os.path.exists(os.path.join(d, "meta.jsonl")) else []
    # data[(coll, np, bytes)][impl] = list of records (one per rep)
    data = {}
    rss = {}  # (impl, np) -> list of (rank, rep, peak_kib, user_kib, init_kib, max_bytes)
    algos = {}  # (impl, coll) -> set of algo names
    for path in sorted(glob.glob(os.path.join(d, "r*_*.jsonl"))):
        m = FILE_RE.match(os.path.basename(path))
        if not m:
            continue
        rep, impl, coll, np_, _group = int(m.group(1)), m.group(2), m.group(3), int(m.group(4)), m.group(5)
        for r in read_jsonl(path):
            if "rss" in r:
                rss.setdefault((impl, np_), []).append(
                    (r["rank"], rep, r["rss_peak_kib"], r["user_buffers_kib"], r.get("rss_init_kib", 0),
                     r.get("max_bytes", 0)))
                continue
            if "busbw_gbps" not in r:
                continue
            r["rep"] = rep
            # The JSON rounds busbw to 4 decimals (0.0000 at 8 B over TCP): recompute it
            # from bytes and time_us with the same convention.
            f = BUSBW_FACTOR.get(r["collective"])
            if f and r.get("time_us", 0) > 0:
                r["busbw_gbps"] = r["bytes"] / r["time_us"] / 1e3 * f(r["ranks"])
            data.setdefault((r["collective"], r["ranks"], r["bytes"]), {}).setdefault(impl, []).append(r)
            if "algo" in r:
                algos.setdefault((impl, r["collective"]), set()).add(r["algo"])

    membw = []
    for path in sorted(glob.glob(os.path.join(d, "r*_membw.jsonl"))):
        membw += [r for r in read_jsonl(path) if r.get("probe") == "membw"]

    impls_present = [i for i, _ in IMPLS if any(i in v for v in data.values())]
    header_meta = next((m for m in meta if m.get("meta") == "compare"), {})

    # ---- the probe and the two rates the reference uses ----------------------------
    def best_rate(pred):
        cands = [r for r in membw if pred(r)]
        if not cands:
            return None, None
        top = max(cands, key=lambda r: r["best_traffic_gbps"])
        return top["best_traffic_gbps"], top
    l3 = l3_bytes(meta)
    cache_limit = in_cache_limit(l3)
    b_dram, b_dram_rec = best_rate(lambda r: r["bytes"] >= 64 * MIB)
    # An in-cache rate only from probe points whose arrays fit in the measured L3.
    b_cache, b_cache_rec = best_rate(
        lambda r: l3 is not None and r["bytes"] * PROBE_ARRAYS.get(r["kernel"], 3) <= l3)

    placement = {}  # collective -> {in place?: [implementations]}
    for (coll, _p, _b), recs in data.items():
        for impl, l in recs.items():
            placement.setdefault(coll, {}).setdefault(ran_in_place(l, coll), set()).add(impl)
    in_place_colls = [c for c in COLLS if True in placement.get(c, {})]
    print("smd vs Open MPI vs Gloo: busbw GB/s, float32 sum, out of place%s; median over %s reps [min-max]"
          % (" (in place: %s)" % ", ".join(in_place_colls) if in_place_colls else "",
             max([r for v in data.values() for l in v.values() for r in [x["rep"] for x in l]] or [0]) + 1))
    for coll in COLLS:
        if len(placement.get(coll, {})) > 1:
            print("  note: %s ran in place for %s and out of place for %s: not the same work" % (
                coll, ", ".join(sorted(placement[coll][True])), ", ".join(sorted(placement[coll][False]))))
    if header_meta:
        print("  machine: %s, %s CPUs (%s, L3 %s); git %s; implementations run: %s" % (
            header_meta.get("host", "?"), header_meta.get("nproc", "?"), header_meta.get("cpu", "CPU model unknown"),
            size_str(l3) if l3 else "unknown", header_meta.get("git", "?"), header_meta.get("impls", "?")))
        if header_meta.get("loadavg"):
            print("  load average at the start: %s" % header_meta["loadavg"])
    for m in meta:
        if m.get("meta") == "missing":
            print("  note: %s" % m["what"])
        if m.get("meta") == "budget":
            print("  note: stopped after %d of %d reps to stay inside the time budget" % (m["reps_done"], m["reps_asked"]))
        if m.get("meta") == "budget_cut":
            print("  note: repetition %d stopped after %d of %d points (time budget)" % (
                m["rep"] + 1, m["points_done"], m["points"]))
        if m.get("meta") == "failed":
            print("  note: FAILED run: %s %s np=%s %s rep %s (exit %s)" % (
                m["impl"], m["collective"], m["ranks"], m["group"], m["rep"], m["exit"]))
    gl = ", ".join("%s: %s" % (c, "/".join(sorted(a))) for (i, c), a in sorted(algos.items()) if i == "gloo")
    if gl:
        print("  Gloo algorithms: %s (TCP on 127.0.0.1)" % gl)
    print("  Open MPI: pml ob1, btl self,vader (shared memory); smd: smd-bench under smdrun;")
    print("  smd mem: smd-bench -m 1 (buffers from smd_mem_alloc, read in place by peers)")
    if header_meta.get("mpi_rs_algos"):
        print("  MPI best: reduce_scatter only, the best at each point of Open MPI's default and its"
              " reduce_scatter_block algorithms %s forced (coll_tuned; 1 basic_linear, 2 recursive_doubling,"
              " 3 recursive_halving, 4 butterfly)" % header_meta["mpi_rs_algos"])
    print()

    names = dict(IMPLS)
    cols = ["collective", "np", "size"] + [names[i] for i, _ in IMPLS] + ["smd/MPI", "smd/best", "smd/Gloo", "mem/MPI", "ref", "smd/ref"]
    widths = [14, 2, 7, 22, 22, 22, 30, 22, 7, 8, 8, 7, 6, 7]
    def row(vals):
        out = []
        for k, (v, w) in enumerate(zip(vals, widths)):
            out.append(v.ljust(w) if k in (0,) else v.rjust(w))
        return "  ".join(out)
    print(row(cols))
    print("-" * len(row(cols)))

    errors_seen = []
    not_checked = []  # points where some runs passed -c 0
    behind = []
    keys = sorted(data, key=lambda k: (COLLS.index(k[0]) if k[0] in COLLS else 99, k[1], k[2]))
    last = None
    for coll, p, nbytes in keys:
        if last is not None and last != (coll, p):
            print()
        last = (coll, p)
        recs = dict(data[(coll, p, nbytes)])
        best, best_label = best_mpi(recs)
        if best:
            recs["mpibest"] = best
        zero = all(r["count"] == 0 for l in recs.values() for r in l)
        for impl, l in sorted(data[(coll, p, nbytes)].items()):  # every run, forced algorithms too
            for r in l:
                if r.get("errors"):
                    errors_seen.append("%s %s np=%d %s rep %d: %d wrong elements" % (
                        impl, coll, p, size_str(nbytes), r["rep"], r["errors"]))
        vals = {}
        cells = []
        for impl, _ in IMPLS:
            l = recs.get(impl, [])
            if zero:
                cells.append("- (count 0)" if l else "n/a")
                continue
            if not l and impl in PARTIAL:
                cells.append("-")  # not run for this collective
                continue
            v = [r["busbw_gbps"] for r in l]
            vals[impl] = statistics.median(v) if v else None
            c = cell(v)
            if impl == "mpibest":
                c += " " + best_label
            if any(r.get("errors") for r in l):
                c += " E"
            n_unchecked = unchecked(l)
            if n_unchecked:
                c += " u"
                not_checked.append("%s %s np=%d %s: %d of %d runs" % (
                    names[impl], coll, p, size_str(nbytes), n_unchecked, len(l)))
            cells.append(c)
        ratio = []
        for peer in ("mpi", "mpibest", "gloo"):
            s, q = vals.get("smd"), vals.get(peer)
            if peer in PARTIAL and peer not in recs:
                ratio.append("-")
            elif zero or s is None or not q:
                ratio.append("-" if zero else "n/a")
            else:
                ratio.append(g(s / q) + ("*" if s < q else " "))
                if s < q:
                    behind.append((coll, p, nbytes, peer, s, q))
        s, q = vals.get("smdmem"), vals.get("mpi")
        ratio.append("-" if zero or s is None or not q else g(s / q) + ("*" if s < q else " "))
        # The reference counts what smd's runs did (in place or not).
        smd_in_place = ran_in_place(recs.get("smd", []), coll)
        total, _per_rank = traffic(coll, nbytes, p, smd_in_place)
        if zero or total is None or b_dram is None:
            ref_s, frac_s = "-", "-"
        else:
            b = b_cache if (b_cache and cache_limit and total <= cache_limit) else b_dram
            ref = busbw_reference(coll, nbytes, p, b, smd_in_place)
            ref_s = g(ref)
            frac = 100 * vals["smd"] / ref if vals.get("smd") is not None else None
            frac_s = "n/a" if frac is None else ("%.1f%%" % frac if frac >= 1 else "%.2f%%" % frac)
        print(row([coll, str(p), size_str(nbytes)] + cells + ratio + [ref_s, frac_s]))
    print("-" * len(row(cols)))
    print("  * = smd's median is below that peer's. E = wrong results in that run. u = some runs of that"
          " cell did not check their result (-c 0: their 'errors 0' means not checked).")

    # ---- latency ---------------------------------------------------------------------
    print()
    print("8-byte latency, time_us per call (median [min-max]; the slowest rank's mean):")
    for coll, p, nbytes in keys:
        if nbytes != 8:
            continue
        recs = dict(data[(coll, p, nbytes)])
        best, best_label = best_mpi(recs)
        if best:
            recs["mpibest"] = best
        parts = []
        zero = all(r["count"] == 0 for l in recs.values() for r in l)
        for impl, label in IMPLS:
            l = recs.get(impl)
            if not l and impl in PARTIAL:
                continue
            if not l:
                parts.append("%s n/a" % label)
            elif zero:
                parts.append("%s - (count 0)" % label)
            else:
                parts.append("%s %s" % (label, cell([r["time_us"] for r in l])))
        print("  %-14s np=%d: %s" % (coll, p, " | ".join(parts)))

    # ---- resident memory -------------------------------------------------------------
    print()
    if not rss:
        print("RSS: no resident-memory lines (the allreduce runs of the largest size report them)")
    for (impl, p) in sorted(rss, key=lambda k: ([i for i, _ in IMPLS].index(k[0]), k[1])):
        l = rss[(impl, p)]
        beyond = [(pk - ub) / 1024.0 for (_rk, _rp, pk, ub, _ini, _mb) in l]
        worst = max(l, key=lambda x: x[2] - x[3])
        size = size_str(worst[5]) if worst[5] else "?"
        line = ("RSS %-8s %s allreduce np=%d: peak resident per rank (VmHWM) minus user buffers (send+recv %s): "
                "max %.1f MiB, median %.1f MiB over %d rank-runs (after init %.1f MiB)"
                % (names[impl], size, p, size_str(worst[3] * 1024), max(beyond), statistics.median(beyond),
                   len(l), worst[4] / 1024.0))
        if impl == "smd":
            line += ("  target <= 64 MiB: %s" % ("OK" if max(beyond) <= 64 else "OVER")) if worst[5] >= 256 * MIB \
                else "  (not the 256 MiB point: --quick)"
        if impl == "smdmem":
            # Peers' smd_mem_alloc buffers, mapped to be read in place, count as
            # resident where touched: the same physical pages as their owners'.
            line += "  (may count pages of peers' buffers it read in place: shared, not extra memory)"
        print(line)

    # ---- the probe and the reference ---------------------------------------------------
    print()
    if membw:
        print("membw probe (best of reps; GB/s of bytes copied/output, and of total memory traffic):")
        pts = {}
        for r in membw:
            pts.setdefault((r["kernel"], r["threads"], r["bytes"]), []).append(r)
        for (k, t, b), l in sorted(pts.items(), key=lambda x: (-x[0][2], x[0][0], x[0][1])):
            print("  %-6s %d thread%s %8s: %6.2f GB/s (median of reps %6.2f), traffic %6.2f GB/s" % (
                k, t, "s" if t > 1 else " ", size_str(b), max(x["best_gbps"] for x in l),
                statistics.median(x["median_gbps"] for x in l), max(x["best_traffic_gbps"] for x in l)))
    else:
        print("membw probe: no data, so no reference")
    if b_dram is not None:
        print()
        print("Reference (ref): B = the best total-traffic rate of the probe: DRAM B = %.1f GB/s (%s, %d thread(s), %s);"
              % (b_dram, b_dram_rec["kernel"], b_dram_rec["threads"], size_str(b_dram_rec["bytes"])))
        if b_cache is not None:
            print("  in cache B = %.1f GB/s (%s, %d thread(s), %s), used when all ranks' user buffers together"
                  " (= T below) fit in %s (half the L3 of %s)." % (
                      b_cache, b_cache_rec["kernel"], b_cache_rec["threads"], size_str(b_cache_rec["bytes"]),
                      size_str(cache_limit), size_str(l3)))
        elif l3 is None:
            print("  The L3 size is unknown (not in meta.jsonl), so no in-cache rate: DRAM B at every size.")
        else:
            print("  No probe point fits in the L3 of %s, so no in-cache rate: DRAM B at every size." % size_str(l3))
        print("  Bytes moved per rank (compulsory traffic, N = the size above, p ranks; every input byte read once,")
        print("  every output byte written once, no staging copy): allreduce 2N (read N, write N); allgather")
        print("  (p+1)N/p (read own N/p, write N); reduce_scatter (p+1)N/p (read N, write N/p); broadcast in place")
        print("  N on average (the root reads N, the p-1 others write N; out of place the root writes N too:")
        print("  (p+1)N/p). All ranks share the machine's memory system, so time >= T/B with T = p x per-rank")
        print("  bytes, and busbw <= busbw_factor x N x B / T: allreduce (p-1)B/p^2, allgather and reduce_scatter")
        print("  (p-1)B/(p(p+1)), broadcast B/p in place (B/(p+1) out of place). The reference follows smd's runs.")
        print("  smd/ref = smd's median busbw / that reference. NOT a bound: B is the probe's best, not the memory")
        print("  system's peak, and smd has passed it (over 100%). Latency dominates below ~64 KiB, where it says little.")

    if errors_seen:
        print()
        print("WRONG RESULTS:")
        for e in errors_seen:
            print("  " + e)
    if not_checked:
        print()
        print("Results not checked (-c 0; marked u):")
        for e in not_checked:
            print("  " + e)
    if behind:
        print()
        print("Where smd's median is behind a peer:")
        for coll, p, nbytes, peer, s, q in behind:
            print("  %-14s np=%d %8s: smd %s vs %s %s GB/s (%.2fx)" % (coll, p, size_str(nbytes), g(s), names[peer],
                                                                     g(q), s / q))
    return 1 if errors_seen else 0


if __name__ == "__main__":
    sys.exit(main())
