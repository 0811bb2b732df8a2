#!/usr/bin/env python3
"""Write the performance section of cover-letter.txt from bench results
files (results.json from make bench) and make insn-profile reports
(report.md), one subsection per file, in the order given.  Everything
after the line "Performance" and its underline is replaced.  swaplat runs
get the per-device swap table; any other benchmark (zramfio, biocache,
pmemcopy, ...) a table of all its metrics.

usage: scripts/cover-perf.py RESULTS.json [RESULTS.json ...] [--cover cover-letter.txt]

A run made with ICOUNT=1 (QEMU -icount shift=0) is reported in emulated
instructions per call; any other run in guest microseconds.  Every row
shows its own n (valid A/B pairs).  Verdicts, intervals and spreads are
the ones benchmarks/stats.py stored in the results file (either format:
the paired method's, or the older bootstrap's).
"""
import argparse
import json
import re
import textwrap

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


CORR = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def run_n(m):
    """The most common number of valid pairs (or boots) over the metrics."""
    ns = [e.get("n", e.get("n_a", 0)) for e in m.values()]
    return max(set(ns), key=ns.count) if ns else 0


def method_lines(res, what):
    """How the numbers of this results.json were made, for the table head."""
    m = res["metrics"]
    n = run_n(m)
    if res.get("format", 1) < 2:        # stats.py before the paired method
        t = (f"{what}, A/B interleaved, {n} boots of each; median over boots (min-max), "
             "B/A = ratio of medians, 95% bootstrap interval:")
    elif res.get("deterministic"):
        t = (f"{what}; A/B interleaved, {len(res.get('rounds', [])) or n} boots of each, "
             "n = boots used; median over boots (min-max); B-A of the medians; spread = "
             "max-min of A plus that of B; a difference is reported only when it exceeds "
             "the spread:")
    else:
        corr = CORR.get(res.get("correction"), res.get("correction"))
        t = (f"{what}; {len(res.get('rounds', [])) or n} rounds (A first in odd ones, B first in even ones), n = valid A/B "
             "pairs; median over boots (min-max); B/A = Hodges-Lehmann estimate of the "
             "per-round ratio and its exact 95% Wilcoxon signed-rank interval; verdicts: "
             f"exact signed-rank test, {corr}-corrected over {res.get('family') or 0} "
             f"metrics (a verdict needs at least "
             f"{res.get('first_verdict_pairs') or res.get('min_pairs', 6)} pairs):")
    return textwrap.wrap(t, 76)


def tail_head(res, unit=""):
    if res.get("format", 1) >= 2 and res.get("deterministic"):
        return f"{'n':>3} {'B-A ' + unit:>9} {'spread':>7}  verdict"
    return f"{'n':>3} {'B/A':>6}  95% CI"


def tail(e, res, scale=1.0, fmt="{:.4g}"):
    """The columns after A and B: n, then B/A and interval, or B-A and spread."""
    n = e.get("n", e.get("n_a", 0))
    v = e["verdict"] + (f" ({e['detail']})" if e.get("detail") and e["verdict"] == "n too small" else "")
    if res.get("format", 1) >= 2 and res.get("deterministic"):
        d = fmt.format(e["diff"] * scale).strip() if e.get("diff") is not None else "-"
        sp = fmt.format(e["spread"] * scale).strip() if e.get("spread") is not None else "-"
        return f"{n:3} {'+' + d if not d.startswith('-') else d:>9} {sp:>7}  {v}"
    ratio = f"{e['ratio']:6.3f}" if e.get("ratio") is not None else f"{'-':>6}"
    ci = e.get("ci95")
    ci = f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "-"
    return f"{n:3} {ratio}  {ci} {v}"


def footer(res, m, keys):
    out = ["", f"Machine: {res.get('machine', 'QEMU TCG')}.", f"Command: {res['command']}"]
    dropped = [f"{k}: {len(m[k]['dropped'])}" for k in keys if m[k].get("dropped")]
    if dropped:
        out.append("Pairs dropped (boot not finished or metric missing): " + ", ".join(dropped))
    return out + [""]


def generic_section(res):
    """All metrics of a non-swaplat run, one row each (call counts left out)."""
    m = res["metrics"]
    icount = "icount" in res.get("machine", "")
    keys = [k for k in sorted(m) if not k.endswith("_calls") and m[k].get("a")]
    out = method_lines(res, "Per metric" + (" (_us values are emulated instructions / 1000 under -icount)"
                                            if icount else ""))
    out += ["", f"  {'metric':44} {'A':>20} {'B':>20} " + tail_head(res)]

    def cell(x):
        v = [f"{x[k]:.4g}" for k in ("median", "min", "max")]
        return f"{v[0]} ({v[1]}-{v[2]})"
    for k in keys:
        e = m[k]
        out.append(f"  {k:44} {cell(e['a']):>20} {cell(e['b']):>20} " + tail(e, res))
    return out + footer(res, m, keys)


def section(res):
    m = res["metrics"]
    icount = "icount" in res.get("machine", "")
    unit, scale, fmt = ("insns", 1000.0, "{:6.0f}") if icount else ("us", 1.0, "{:6.2f}")
    what = ("Instructions per call (QEMU -icount: the guest clock counts emulated instructions)"
            if icount else "Time per call (QEMU TCG wall clock)")
    out = method_lines(res, what)
    out += ["", f"  {'device':6} {'direction':26} {'A ' + unit:>20} {'B ' + unit:>20} "
            + tail_head(res, unit)]
    keys = []
    for d in DEVS:
        for key, label in DIRS:
            e = m.get(f"{d}.{key}")
            if not e or not e.get("a"):
                continue
            keys.append(f"{d}.{key}")
            a, b = e["a"], e["b"]

            def cell(x):
                v = [fmt.format(x[k] * scale).strip() for k in ("median", "min", "max")]
                return f"{v[0]:>6} ({v[1]}-{v[2]})"
            out.append(f"  {d:6} {label:26} {cell(a):>20} {cell(b):>20} "
                       + tail(e, res, scale, fmt.replace("6", "")))
    out += footer(res, m, keys)
    slower = sorted(k for k, e in m.items()
                    if k.endswith(("swapin_us", "swapout_us")) and e["verdict"] == "B slower")
    if slower:
        why = ("interval above 1.00" if res.get("format", 1) < 2 else
               "B - A above the spread" if res.get("deterministic") else
               "corrected verdict B slower")
        out += [f"Not yet as fast as rw_page here ({why}):", "  " + ", ".join(slower), ""]
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
