#!/usr/bin/env python3
"""Per-patch table and plots for make bisect-bench (results.tsv with kernel
ids 00-base, 01, 02, ...): each kernel's median per metric, its ratio to the
base and a bootstrap 95% interval (stats.ratio_ci)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats import ratio_ci  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    args = ap.parse_args()
    data = defaultdict(lambda: defaultdict(list))
    with open(args.results) as f:
        f.readline()
        for line in f:
            _, k, m, v = line.rstrip("\n").split("\t")
            data[m][k].append(float(v))
    kernels = sorted({k for m in data.values() for k in m})
    base = kernels[0]
    summary = {}
    md = ["| metric | " + " | ".join(kernels) + " |", "|---" * (len(kernels) + 1) + "|"]
    for m in sorted(data):
        if m.endswith(("_calls", ".faults")) or base not in data[m]:
            continue
        row, summary[m] = [], {}
        for k in kernels:
            v = data[m].get(k)
            if not v:
                row.append("-")
                continue
            med = statistics.median(v)
            lo, hi = ratio_ci(data[m][base], v)
            r = med / statistics.median(data[m][base])
            summary[m][k] = {"median": med, "ratio": r, "ci95": [lo, hi], "values": v}
            row.append(f"{med:.2f} ({r:.2f}{'' if lo <= 1 <= hi else '*'})")
        md.append(f"| {m} | " + " | ".join(row) + " |")
        dat = os.path.join(args.out, f"bisect-{m}.dat")
        with open(dat, "w") as f:
            for i, k in enumerate(kernels):
                if k in summary[m]:
                    e = summary[m][k]
                    f.write(f"{i} {e['ratio']} {e['ci95'][0]} {e['ci95'][1]}\n")
        script = f"""set terminal png noenhanced size 900,400
set output '{os.path.join(args.out, f"bisect-{m}.png")}'
set title "{m}: ratio to base after each patch (95% interval)"
set xtics ({', '.join(f'"{k}" {i}' for i, k in enumerate(kernels))})
set xrange [-0.5:{len(kernels) - 0.5}]
set grid y
plot '{dat}' using 1:2:3:4 with yerrorbars title "ratio to base", 1 lc rgb "red" title ""
"""
        subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    text = "\n".join(md) + "\n\nCells: median (ratio to base; * = 95% interval excludes 1.00).\n" \
        f"Produced by `{args.command}` under QEMU TCG.\n"
    with open(os.path.join(args.out, "bisect.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "bisect.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
