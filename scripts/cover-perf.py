#!/usr/bin/env python3
"""Write the performance section of cover-letter.txt from bench results
files (results.json from make bench) and make insn-profile reports
(report.md), one subsection per file, in the order given.  Everything
after the line "Performance" and its underline is replaced.  swaplat runs
get the per-device swap table; any other benchmark (zramfio, biocache,
pmemcopy, ...) a table of all its metrics.

usage: scripts/cover-perf.py RESULTS.json [RESULTS.json ...] [--cover cover-letter.txt]

A run made with ICOUNT=1 (QEMU -icount shift=0) is reported in emulated
instructions per call; any other run in guest microseconds.  Verdicts are
the ones benchmarks/stats.py stored in the results file.
"""
import argparse
import json
import re

DEVS = ["zram", "brd", "pmem", "btt"]
DIRS = [("swapin_us", "swap-in  (swap_readpage)"), ("swapout_us", "swap-out (swap_writepage)")]


INTRO = {
    "swaplat": [
        "Swap latency, base v6.1.4 (rw_page) = A against the full series = B.",
        "Each boot runs swaplat, a pmbench-like random-access load (96 MiB working",
        "set, cgroup v2 memory.max 32 MiB, 30% writes), with the ftrace function",
        "profiler on swap_readpage() and swap_writepage(), which have the same",
        "names on both kernels.  Emulated times only mean something as ratios;",
        "real-hardware numbers are not measured here."],
    "zramfio": [
        "zram fio (seed 001's methodology): MiB/s per compressor, mode (direct=1",
        "or buffered with fsync_on_close=1), pattern and job count; higher is",
        "better."],
    "biocache": [
        "bio allocation (seed 004): 4 KiB O_DIRECT random reads with libaio at",
        "depth 1 from a null_blk that is not memory backed: IOPS (higher is",
        "better) and the cost per bio_alloc_bioset() and bio_put() call."],
    "pmemcopy": [
        "pmem large transfers (seed 002's matrix), CPU copy only (the DMA mode",
        "is not in the series): MiB/s (higher is better) and CPU busy in percent",
        "of one CPU (lower is better)."],
}


def bench_name(res):
    m = re.search(r"BENCH=(\S+)", res.get("command", ""))
    return m.group(1) if m else "swaplat"


def generic_section(res):
    """All metrics of a non-swaplat run, one row each (call counts left out)."""
    m = res["metrics"]
    n = next(iter(m.values()))["n_a"]
    icount = "icount" in res.get("machine", "")
    out = [f"A/B interleaved, {n} boots of each; median over boots (min-max), B/A =",
           "ratio of medians, 95% bootstrap interval"
           + (" (_us values are emulated instructions / 1000 under -icount):" if icount else ":"),
           "", f"  {'metric':44} {'A':>20} {'B':>20} {'B/A':>6}  95% CI"]

    def cell(x):
        v = [f"{x[k]:.4g}" for k in ("median", "min", "max")]
        return f"{v[0]} ({v[1]}-{v[2]})"
    for k in sorted(m):
        if k.endswith("_calls"):
            continue
        e = m[k]
        ci = e["ci95"]
        out.append(f"  {k:44} {cell(e['a']):>20} {cell(e['b']):>20} {e['ratio']:6.3f}"
                   f"  {ci[0]:.3f}-{ci[1]:.3f} {e['verdict']}")
    out += ["", f"Machine: {res.get('machine', 'QEMU TCG')}.",
            f"Command: {res['command']}", ""]
    return out


def section(res):
    m = res["metrics"]
    n = next(iter(m.values()))["n_a"]
    icount = "icount" in res.get("machine", "")
    unit, scale, fmt = ("insns", 1000.0, "{:6.0f}") if icount else ("us", 1.0, "{:6.2f}")
    out = []
    if icount:
        out += ["Instructions per call (QEMU -icount: the guest clock counts emulated",
                f"instructions, so one boot is exact; {n} boots of each, A/B interleaved):"]
    else:
        out += [f"Time per call (QEMU TCG wall clock, A/B interleaved, {n} boots of each;",
                "median over boots (min-max), B/A = ratio of medians, 95% bootstrap interval):"]
    out += ["", f"  {'device':6} {'direction':26} {'A ' + unit:>20} {'B ' + unit:>20} {'B/A':>6}  95% CI"]
    for d in DEVS:
        for key, label in DIRS:
            e = m.get(f"{d}.{key}")
            if not e:
                continue
            a, b, ci = e["a"], e["b"], e["ci95"]

            def cell(x):
                v = [fmt.format(x[k] * scale).strip() for k in ("median", "min", "max")]
                return f"{v[0]:>6} ({v[1]}-{v[2]})"
            out.append(f"  {d:6} {label:26} {cell(a):>20} {cell(b):>20} {e['ratio']:6.3f}"
                       f"  {ci[0]:.3f}-{ci[1]:.3f} {e['verdict']}")
    out += ["", f"Machine: {res.get('machine', 'QEMU TCG')}.",
            f"Command: {res['command']}", ""]
    slower = sorted(k for k, e in m.items()
                    if k.endswith(("swapin_us", "swapout_us")) and e["verdict"] == "B slower")
    if slower:
        out += ["Not yet as fast as rw_page here (interval above 1.00):",
                "  " + ", ".join(slower), ""]
    return out


def insn_section(path):
    """The by-stage table of a make insn-profile report.md."""
    rows, grab = [], False
    for line in open(path):
        if line.startswith("## B - A per swap I/O, by stage"):
            grab = True
        elif line.startswith("## "):
            grab = False
        elif grab and line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    if not rows:
        raise SystemExit(f"cover-perf: no by-stage table in {path}")
    w0 = max(len(r[0]) for r in rows)
    ws = [max(len(r[i]) for r in rows) for i in range(1, len(rows[0]))]
    out = ["Where the extra instructions go, per swap I/O (swap-ins plus swap-outs",
           "of one swaplat run; B - A, every executed instruction counted by a QEMU",
           "TCG plugin and attributed to its kernel function, then grouped by stage;",
           "the per-function tables are in the report):", ""]
    for r in rows:
        out.append("  " + r[0].ljust(w0) + "".join("  " + c.rjust(w) for c, w in zip(r[1:], ws)))
    out += ["", "Machine: QEMU TCG with -icount shift=0 (no KVM), 1 vCPU, 2048 MiB guest.",
            "Command: make insn-profile (A=base B=series, one boot per kernel and device)", ""]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--cover", default="cover-letter.txt")
    args = ap.parse_args()
    out = ["Performance", "-----------"]
    seen = set()
    for r in args.results:
        if r.endswith(".md"):
            out += insn_section(r)
            continue
        res = json.load(open(r))
        name = bench_name(res)
        if name not in seen:
            seen.add(name)
            out += INTRO.get(name, [f"Benchmark {name}, A against B:"]) + [""]
        out += section(res) if name == "swaplat" else generic_section(res)
    text = open(args.cover).read()
    head = text.split("\nPerformance\n-----------\n")[0]
    open(args.cover, "w").write(head.rstrip("\n") + "\n\n" + "\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
