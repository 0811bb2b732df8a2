#!/usr/bin/env python3
"""Per-patch table and plots for make bisect-bench (results.tsv with kernel
ids 00-base, 01, 02, ...; every round boots every kernel, in that order).

Each kernel is compared with the base by the method of stats.py: the base
and the kernel of one round are a pair; exact Wilcoxon signed-rank test on
the per-round log ratio, Hodges-Lehmann ratio.  A round in which the base
or the kernel did not finish, or in which either lacks the metric, is
dropped for that cell and reported.  A cell is marked (*) only when its
p-value, corrected over every tested cell of the table (Benjamini-Hochberg
by default: the table is a screen of hundreds of cells; --correction holm
for family-wise control), is at most 0.05; with fewer than 6 pairs a cell
cannot be marked, so ROUNDS=1 to 5 marks nothing and the footer says so.

--deterministic (ICOUNT=1): no test; each cell shows the difference of its
median to the base's, marked when it exceeds the spread (max-min over
rounds of the kernel plus that of the base); with one round no spread is
measured and nothing is marked.

Call and fault counts are left out of the table (they are in
results.tsv)."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402


def analyse(values, invalid, rounds, deterministic=False, correction="bh"):
    """cells[metric][kernel] = compare_metric() entry (+ dropped, marked),
    the kernels, and the family size (None when deterministic)."""
    kernels = sorted({k for v in values.values() for (_, k) in v} | {k for (_, k) in invalid})
    base = kernels[0]
    cells, flat = {}, []
    for m in sorted(values):
        if stats.metric_kind(m) == "count":
            continue
        cells[m] = {}
        for k in kernels[1:]:
            pairs, dropped = stats.pair_up(values[m], invalid, rounds, base, k)
            e = stats.compare_metric(m, pairs, deterministic)
            e["dropped"] = [{"round": r, "reason": why} for r, why in dropped]
            cells[m][k] = e
            flat.append(e)
    fam = None if deterministic else stats.decide(flat, correction)
    for e in flat:
        e["marked"] = e["verdict"] not in (
            "within noise", "n too small", "no valid pair", "equal in all pairs",
            "equal within spread", "no verdict")
    return cells, kernels, fam


def base_median(values, invalid, rounds, base, m):
    xs = []
    for r in rounds:
        if (r, base) in invalid:
            continue
        x, err = stats._num(values[m].get((r, base), []))
        if err is None:
            xs.append(x)
    return (stats.statistics.median(xs), len(xs)) if xs else (None, 0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="")
    ap.add_argument("--deterministic", action="store_true",
                    help="ICOUNT=1 run: difference and spread, no test")
    ap.add_argument("--correction", choices=sorted(stats.CORRECTIONS), default="bh")
    args = ap.parse_args(argv)
    values, invalid, reports, rounds = stats.read_tsv(args.results)
    if not values:
        print("bisect-stats: error: no metric in results", file=sys.stderr)
        return 1
    cells, kernels, fam = analyse(values, invalid, rounds, args.deterministic, args.correction)
    base = kernels[0]
    det = args.deterministic
    md = ["| metric | " + " | ".join(kernels) + (" | spread |" if det else " |"),
          "|---" * (len(kernels) + 1 + det) + "|"]
    summary = {}
    for m in cells:
        bm, bn = base_median(values, invalid, rounds, base, m)
        row = [f"{bm:.2f}" if bm is not None else "-"]
        summary[m] = {base: {"median": bm, "n": bn}}
        spreads = []
        for k in kernels[1:]:
            e = cells[m][k]
            summary[m][k] = e
            if e["n"] == 0:
                row.append("-")
                continue
            mark = "*" if e["marked"] else ""
            nd = len(e["dropped"])
            drop = f" n={e['n']}" if nd else ""
            if det:
                if e.get("spread") is not None:
                    spreads.append(e["spread"])
                row.append(f"{e['b']['median']:.2f} ({e['diff']:+.3g}{mark}{drop})")
            else:
                r = f"{e['ratio']:.2f}" if e.get("ratio") is not None else "-"
                row.append(f"{e['b']['median']:.2f} ({r}{mark}{drop})")
        if det:
            row.append(f"{max(spreads):.3g}" if spreads else "-")
        md.append(f"| {m} | " + " | ".join(row) + " |")
        dat = os.path.join(args.out, f"bisect-{m}.dat")
        with open(dat, "w") as f:
            for i, k in enumerate(kernels[1:], 1):
                e = cells[m][k]
                if e.get("ratio") is None:
                    continue
                if e.get("ci95"):
                    lo, hi = e["ci95"]
                elif det and e["a"]["max"] > 0 and e["a"]["min"] > 0:
                    lo, hi = e["b"]["min"] / e["a"]["max"], e["b"]["max"] / e["a"]["min"]
                else:
                    lo = hi = e["ratio"]
                f.write(f"{i} {e['ratio']} {lo} {hi}\n")
        what = "range over rounds" if det else "95% signed-rank interval, uncorrected"
        script = f"""set terminal png noenhanced size 900,400
set output '{os.path.join(args.out, f"bisect-{m}.png")}'
set title "{m}: ratio to base after each patch ({what})"
set xtics ({', '.join(f'"{k}" {i}' for i, k in enumerate(kernels))})
set xrange [-0.5:{len(kernels) - 0.5}]
set grid y
plot '{dat}' using 1:2:3:4 with yerrorbars title "ratio to base", 1 lc rgb "red" title ""
"""
        try:
            subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        except OSError:
            pass
    n = len(rounds)
    foot = [""]
    if det:
        foot += [f"Cells: the kernel's median over {n} round(s) (its difference to the base's median;",
                 "* = the difference exceeds the spread: max-min over rounds of the kernel plus",
                 "that of the base).  Deterministic run (ICOUNT=1): no test, no interval; the",
                 "spread column is the largest spread of a cell in the row."]
        if n < 2:
            foot.append("One round: no spread is measured, so nothing is marked; the differences are shown as measured.")
    else:
        foot += ["Cells: the kernel's median (Hodges-Lehmann ratio to the base over paired rounds;",
                 "* = exact Wilcoxon signed-rank test, p corrected over the table by "
                 + stats.CORRECTIONS[args.correction][1] + ", <= 0.05).",
                 f"A cell needs at least {stats.MIN_PAIRS} valid pairs (rounds) to be marked at all;"
                 + (f" with {fam} tested cells the first mark needs {stats.first_verdict_pairs(fam)}"
                    + (" (fewer when several cells differ together)." if args.correction == "bh" else ".")
                    if fam else "")]
        if n < stats.MIN_PAIRS:
            foot.append(f"{n} round(s): fewer than {stats.MIN_PAIRS}, so no cell can reach 95% and nothing is marked.")
    notes = stats.drop_report(rounds, invalid, reports, {}, arms=kernels)
    for m in cells:
        for k, e in cells[m].items():
            own = [d for d in e["dropped"] if "did not finish" not in d["reason"]]
            if own:
                notes.append(f"{m} on {k}: " + stats.dropped_text(
                    [(d["round"], d["reason"]) for d in own]) + ", pair dropped")
    for x in notes:
        print(f"bisect-stats: {x}", file=sys.stderr)
    foot += (["", "Dropped and flagged rounds:"] + [f"- {x}" for x in notes]) if notes else \
        ["", "Every round of every kernel was used."]
    foot += ["Call and fault counts are left out of the table (they are in results.tsv).",
             f"Produced by `{args.command}` under QEMU TCG."]
    text = "\n".join(md + foot) + "\n"
    with open(os.path.join(args.out, "bisect.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "bisect.json"), "w") as f:
        json.dump({"command": args.command, "deterministic": det,
                   "correction": None if det else args.correction, "family": fam,
                   "rounds": rounds, "kernels": kernels, "notes": notes,
                   "metrics": summary}, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
