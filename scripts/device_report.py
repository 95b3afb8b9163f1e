#!/usr/bin/env python3
"""The report of one `scripts/device_check.sh run`: what ran, how long, which
tests passed, failed or skipped (with the reason), and the kernel
benchmark as a table, in Markdown, from the files the run left in its
results folder (argument 1). Python's standard library only: the GPU
machine has no Debian packages."""
import json
import os
import sys


def read(folder, name):
    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stages(folder):
    rows = []
    for line in read(folder, "stages.txt").splitlines():
        parts = line.split()
        if len(parts) == 3:
            name, seconds, rc = parts
            verdict = "ok" if rc == "0" else ("timed out" if rc == "124" else f"failed (exit {rc})")
            rows.append(f"| {name} | {seconds} | {verdict} |")
    return ["| stage | seconds | result |", "|---|---|---|"] + rows


def skip_reason(stdout):
    for line in (stdout or "").splitlines():
        at = line.find("SKIP ")  # smdrun prefixes a rank's lines with "[r] "
        if at >= 0:
            return line[at + 5:].strip()
    return ""


def tests(folder):
    rows, counts = [], {}
    for line in read(folder, "testlog.json").splitlines():
        try:
            t = json.loads(line)
        except ValueError:
            continue
        result = t.get("result", "?")
        counts[result] = counts.get(result, 0) + 1
        note = skip_reason(t.get("stdout", "")) if result == "SKIP" else ""
        if result not in ("OK", "SKIP"):
            tail = (t.get("stdout") or "").strip().splitlines()[-3:]
            note = " / ".join(tail)
        note = note.replace("|", "\\|")[:300]
        rows.append(f"| {t.get('name', '?')} | {result} | {t.get('duration', 0):.1f} | {note} |")
    if not rows:
        return ["(no test log: the tests did not run)"], counts
    return ["| test | result | seconds | note |", "|---|---|---|---|"] + rows, counts


def bench(folder):
    lines = read(folder, "gpu-kernel-bench.log").splitlines()
    rows, head = [], ""
    for line in lines:
        parts = line.split()
        if line.startswith("device "):
            head = line.strip()
        elif len(parts) == 6 and parts[0] != "dtype" and parts[1].isdigit():
            rows.append("| " + " | ".join(parts) + " |")
    if not rows:
        return ["(no benchmark rows)"] + ([f"    {lines[-1]}"] if lines else [])
    table = ["| dtype | inputs | MiB | copy GB/s | reduce GB/s | reduce/copy |", "|---|---|---|---|---|---|"]
    return ([head, ""] if head else []) + table + rows


def allreduce_routes(folder):
    """The device allreduce bench's rows (rank 0's, smdrun's [0] prefix off)."""
    rows = []
    for line in read(folder, "gpu-allreduce-bench.log").splitlines():
        parts = line.replace("[0] ", "", 1).split()
        if len(parts) == 7 and parts[0] != "route" and parts[1].isdigit():
            rows.append("| " + " | ".join(parts) + " |")
    if not rows:
        return ["(no allreduce rows)"]
    return ["| route | ranks | MiB | time ms | copy GB/s | bound ms | of bound |",
            "|---|---|---|---|---|---|---|"] + rows


def allreduce_latency(folder):
    """The bench's `small` rows: route, ranks, KiB, microseconds per call,
    as a table of the routes side by side per size."""
    times = {}
    for line in read(folder, "gpu-allreduce-bench.log").splitlines():
        parts = line.replace("[0] ", "", 1).split()
        if len(parts) == 4 and parts[0] != "route" and parts[2].isdigit():
            times.setdefault(parts[0], {})[int(parts[2])] = parts[3]
    if not times:
        return ["(no latency rows)"]
    routes = list(times)
    sizes = sorted({k for row in times.values() for k in row})
    table = ["| KiB | " + " | ".join(f"{r} us" for r in routes) + " |",
             "|---|" + "---|" * len(routes)]
    for kib in sizes:
        table.append(f"| {kib} | " + " | ".join(times[r].get(kib, "") for r in routes) + " |")
    return table


def main():
    folder = sys.argv[1]
    mode = read(folder, "mode.txt").strip() or "mode: unknown"
    out = ["# Device check", "", mode, ""]
    if "rehearsal" in mode:
        out += ["This run used the host stand-in for CUDA: it shows that the build and the",
                "stages work and that smd's device code paths hold; it says nothing of CUDA,",
                "and its benchmark numbers are host loops.", ""]
    out += ["## Stages", ""] + stages(folder) + [""]
    table, counts = tests(folder)
    summary = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
    out += ["## Tests" + (f" ({summary})" if summary else ""), ""] + table + [""]
    out += ["## Kernel benchmark", ""] + bench(folder) + [""]
    out += ["## Allreduce of the ranks sharing the GPU", "",
            "Bound: every rank's input read and output written once, at the copy rate "
            "measured in the same run (bench/gpu/gpu_allreduce_bench.cc).", ""]
    out += allreduce_routes(folder) + [""]
    out += ["Small calls out of place (2 ranks; microseconds per call, median):", ""]
    out += allreduce_latency(folder) + [""]
    topo = read(folder, "topology.log").strip()
    if topo:
        out += ["## smd-info topology", "", "```", topo, "```", ""]
    smi = read(folder, "nvidia-smi.txt").strip()
    if smi:
        out += ["## nvidia-smi", "", "```", smi, "```", ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
