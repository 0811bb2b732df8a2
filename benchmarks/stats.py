#!/usr/bin/env python3
"""Summarise an A/B benchmark run (results.tsv from scripts/bench.sh).

For every metric: median, min and max of A and of B, the ratio of medians
B/A, and a 95% bootstrap interval for that ratio (A and B resampled
independently, 5000 times, fixed seed).  "within noise" when the interval
contains 1.00.  Writes results.json, results.md and a PNG per metric family
(gnuplot), and prints the Markdown table.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from collections import defaultdict


def ratio_ci(a, b, n=5000, seed=1):
    rnd = random.Random(seed)
    rs = []
    for _ in range(n):
        ma = statistics.median(rnd.choices(a, k=len(a)))
        mb = statistics.median(rnd.choices(b, k=len(b)))
        if ma:
            rs.append(mb / ma)
    rs.sort()
    return rs[int(0.025 * len(rs))], rs[int(0.975 * len(rs)) - 1]


# Throughput metrics (MiB/s, IOPS: names ending in _mibs or _iops, or
# with mibs or iops as their last dotted part) are better when higher;
# every other metric (times, instruction counts, latencies, CPU) when lower.
HIGHER_IS_BETTER = ("_mibs", "_iops", ".mibs", ".iops")


def verdict(metric, lo, hi):
    if lo <= 1.0 <= hi:
        return "within noise"
    b_higher = lo > 1.0
    if metric.endswith(HIGHER_IS_BETTER):
        return "B faster" if b_higher else "B slower"
    return "B slower" if b_higher else "B faster"


def summarise(rows):
    data = defaultdict(lambda: defaultdict(list))
    for r in rows:
        data[r["metric"]][r["kernel"]].append(float(r["value"]))
    out = {}
    for metric in sorted(data):
        a, b = data[metric].get("A", []), data[metric].get("B", [])
        if not a or not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        e = {"metric": metric, "n_a": len(a), "n_b": len(b),
             "a": {"median": ma, "min": min(a), "max": max(a), "values": a},
             "b": {"median": mb, "min": min(b), "max": max(b), "values": b}}
        if ma:
            lo, hi = ratio_ci(a, b)
            e.update(ratio=mb / ma, ci95=[lo, hi], verdict=verdict(metric, lo, hi))
        out[metric] = e
    return out


def spread(d):
    return f"{d['min']:.3g}-{d['max']:.3g}"


def table(summary, title, command, machine):
    lines = [f"### {title}", "",
             "| metric | A median (min-max) | B median (min-max) | B/A | 95% CI | verdict |",
             "|---|---|---|---|---|---|"]
    for m, e in summary.items():
        if "ratio" not in e:
            continue
        lines.append(f"| {m} | {e['a']['median']:.3f} ({spread(e['a'])}) | "
                     f"{e['b']['median']:.3f} ({spread(e['b'])}) | {e['ratio']:.3f} | "
                     f"{e['ci95'][0]:.3f}-{e['ci95'][1]:.3f} | {e['verdict']} |")
    lines += ["", f"Produced by `{command}` on {machine}; times are guest times"
              " under emulation: compare ratios, not absolute values."]
    return "\n".join(lines) + "\n"


def plot(summary, outdir, title):
    """One PNG: B/A ratio with its 95% interval for every metric."""
    ms = [m for m, e in summary.items() if "ratio" in e and not m.endswith(("_calls", ".faults"))]
    if not ms:
        return
    dat = os.path.join(outdir, "ratios.dat")
    with open(dat, "w") as f:
        for i, m in enumerate(ms):
            e = summary[m]
            f.write(f"{i} {e['ratio']} {e['ci95'][0]} {e['ci95'][1]} \"{m}\"\n")
    png = os.path.join(outdir, "ratios.png")
    script = f"""
set terminal png noenhanced size 1000,{200 + 22 * len(ms)}
set output '{png}'
set title "{title}: B/A ratio of medians, 95% bootstrap interval"
set ytics ({', '.join(f'"{m}" {i}' for i, m in enumerate(ms))})
set yrange [-1:{len(ms)}]
set xlabel "B/A (times: below 1.00 is B faster; MiB/s: above 1.00 is B faster)"
set grid x
set arrow from 1,-1 to 1,{len(ms)} nohead lc rgb "red"
plot '{dat}' using 2:1:3:4 with xerrorbars title "ratio"
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"stats: plot skipped: {err}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="A/B")
    ap.add_argument("--command", default="")
    ap.add_argument("--machine", default="QEMU TCG")
    args = ap.parse_args()
    with open(args.results) as f:
        hdr = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(hdr, line.rstrip("\n").split("\t"))) for line in f if line.strip()]
    summary = summarise(rows)
    if not summary:
        print("stats: error: no metric has values for both A and B", file=sys.stderr)
        return 1
    md = table(summary, args.title, args.command, args.machine)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"title": args.title, "command": args.command,
                   "machine": args.machine, "metrics": summary}, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    plot(summary, args.out, args.title)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
