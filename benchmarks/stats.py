#!/usr/bin/env python3
"""Summarise an A/B benchmark run (results.tsv from scripts/bench.sh).

bench.sh boots A and B once in every round (A first in odd rounds, B
first in even ones), so the rounds are pairs.  For every
metric the pairs are the rounds in which both boots finished and both
printed the metric; every other round is dropped for that metric and
reported (table, footer, stderr), never used.

Timed runs (the default): the per-round log ratio d = log(B/A) is tested
with the exact Wilcoxon signed-rank test (zero differences dropped; exact
distribution of the signed-rank sum, mid-ranks for ties).  It is exact
whenever A and B of a round are exchangeable under "no difference": same
distribution, and no systematic effect of booting first or second (drift
between rounds cancels in the pair; bench.sh alternates the order).  B/A is the Hodges-Lehmann estimate
(exp of the median of the Walsh averages of d) with its exact signed-rank
95% interval, per metric.  A two-sided exact test cannot reach 95% below 6
pairs (the most extreme outcome has p = 2/2^n): below that the verdict is
"n too small".  The verdicts of one run are corrected for the number of
metrics (Holm by default: family-wise error 5%; --correction bh for
Benjamini-Hochberg); the footer says which, and what n the first verdict
needs with that many metrics.

--deterministic (ICOUNT=1 runs, where the guest clock counts instructions
and repeated boots agree to a few instructions): no test and no interval;
the table gives B - A (of the medians) and the measured spread (max-min
over rounds of A plus that of B), and a difference is reported only when
it exceeds the spread ("equal within spread" otherwise; one round measures
no spread and gets no verdict).

Verdict words follow the metric (metric_kind): times and instruction
counts are better lower, throughput (MiB/s, IOPS) higher ("B faster",
"B slower"); CPU busy, faults, call counts and unknown names get
"B higher"/"B lower".

results.tsv: "round kernel metric value" lines; bench-boot.sh adds
"round kernel !invalid reason" for a boot that did not finish and
"round kernel !report kernel-report" for a boot whose log has a kernel
report (kept, but listed).

Writes results.json, results.md and ratios.png (gnuplot) and prints the
Markdown table; reports about dropped pairs go to stderr as well.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

ALPHA = 0.05

# ----------------------------------------------------------------------------
# Metric kinds and verdict words

_TOKENS = {
    "throughput": {"mibs", "iops", "mbs", "kibs", "bw", "tput"},
    "time": {"us", "ns", "ms", "s", "sec", "insns", "instructions", "cycles", "lat"},
    "count": {"calls", "faults", "majflt", "minflt", "count", "pswpin", "pswpout", "ios",
              "pct", "dmapct"},
    "cpu": {"cpu", "busy", "util"},
}


def metric_kind(metric):
    """throughput, time, count, cpu or neutral, from the last word of the name
    (after the last '.' and '_'): read_iops, swapin_us, swapin_calls, faults,
    read_cpu, ...; names with cpu/busy or faults/calls elsewhere fall back to
    cpu and count."""
    last = re.split(r"[._]", metric.lower())[-1]
    for kind, words in _TOKENS.items():
        if last in words:
            return kind
    low = metric.lower()
    if "cpu" in low or "busy" in low:
        return "cpu"
    if "fault" in low or "calls" in low or "majflt" in low:
        return "count"
    return "neutral"


def verdict_word(metric, b_higher):
    """The verdict for B's value being higher (True) or lower than A's."""
    kind = metric_kind(metric)
    if kind == "throughput":
        return "B faster" if b_higher else "B slower"
    if kind == "time":
        return "B slower" if b_higher else "B faster"
    return "B higher" if b_higher else "B lower"


# ----------------------------------------------------------------------------
# Exact Wilcoxon signed-rank test, interval and Hodges-Lehmann estimate

_NULL = {}


def signed_rank_null(n):
    """Counts of the 2^n sign patterns by signed-rank sum W+ (ranks 1..n)."""
    if n not in _NULL:
        c = [1]
        for k in range(1, n + 1):
            nc = c + [0] * k
            for s, v in enumerate(c):
                nc[s + k] += v
            c = nc
        _NULL[n] = c
    return _NULL[n]


_CUM = {}


def _cumulative(n):
    if n not in _CUM:
        acc, out = 0, []
        for v in signed_rank_null(n):
            acc += v
            out.append(acc)
        _CUM[n] = out
    return _CUM[n]


def _ranks2(xs):
    """Twice the mid-ranks of xs (integers), and whether there were ties."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0] * len(xs)
    ties = False
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        if j > i:
            ties = True
        for k in range(i, j + 1):
            r[order[k]] = i + j + 2      # 2 * mean of the 1-based ranks i+1..j+1
        i = j + 1
    return r, ties


def _clean(d):
    # round away float noise so that equal ratios tie and tiny ones count as 0
    return [round(x, 12) for x in d]


def signed_rank_p(d):
    """Exact two-sided p of the Wilcoxon signed-rank test of "d symmetric
    about 0" (zeros dropped, conditional on the observed |d| with ties), the
    number of non-zero d, and the side (+1: d mostly positive, -1, 0)."""
    nz = [x for x in _clean(d) if x != 0]
    n = len(nz)
    if n == 0:
        return 1.0, 0, 0
    r2, ties = _ranks2([abs(x) for x in nz])
    w = sum(r for r, x in zip(r2, nz) if x > 0)
    side = (2 * w > sum(r2)) - (2 * w < sum(r2))
    if not ties:
        c = signed_rank_null(n)
        w //= 2
    else:
        c = [1]
        for k in r2:
            nc = c + [0] * k
            for s, v in enumerate(c):
                if v:
                    nc[s + k] += v
            c = nc
    tot = float(2 ** n)
    if not ties:
        cum = _cumulative(n)
        lo, hi = cum[w] / tot, (cum[-1] - (cum[w - 1] if w else 0)) / tot
    else:
        lo, hi = sum(c[:w + 1]) / tot, sum(c[w:]) / tot
    return min(1.0, 2 * min(lo, hi)), n, side


def min_p(n):
    """The smallest two-sided p the exact test can give with n non-zero pairs."""
    return 1.0 if n == 0 else min(1.0, 2.0 / 2 ** n)


def min_pairs(alpha):
    """The fewest pairs with which the exact test can reach level alpha."""
    n = 1
    while min_p(n) > alpha:
        n += 1
    return n


MIN_PAIRS = min_pairs(ALPHA)     # 6


_CRIT = {}


def signed_rank_crit(n, alpha=ALPHA):
    """The largest c with P(W+ <= c) <= alpha/2 without ties, or None."""
    if (n, alpha) not in _CRIT:
        tot, c = 2.0 ** n, None
        for s, acc in enumerate(_cumulative(n)):
            if acc / tot <= alpha / 2:
                c = s
            else:
                break
        _CRIT[(n, alpha)] = c
    return _CRIT[(n, alpha)]


def walsh(d):
    """The sorted Walsh averages (d_i + d_j) / 2, i <= j."""
    w = []
    for i, x in enumerate(d):
        w.extend([(x + y) / 2 for y in d[i:]])
    w.sort()
    return w


def hodges_lehmann(d, w=None):
    return statistics.median(w or walsh(d))


def signed_rank_ci(d, alpha=ALPHA, w=None):
    """Exact 1-alpha interval for the centre of a symmetric d (Walsh averages
    between the signed-rank critical values), or None with too few pairs."""
    c = signed_rank_crit(len(d), alpha)
    if c is None:
        return None
    w = w or walsh(d)
    return w[c], w[len(w) - 1 - c]


# ----------------------------------------------------------------------------
# Multiplicity

def holm(ps):
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adj, run = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, (m - rank) * ps[i]))
        adj[i] = run
    return adj


def bh(ps):
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i], reverse=True)
    adj, run = [0.0] * m, 1.0
    for k, i in enumerate(order):
        run = min(run, ps[i] * m / (m - k))
        adj[i] = min(1.0, run)
    return adj


CORRECTIONS = {"holm": (holm, "Holm (family-wise error rate 5%)"),
               "bh": (bh, "Benjamini-Hochberg (false discovery rate 5%)")}


def first_verdict_pairs(m, alpha=ALPHA):
    """Pairs needed for any verdict among m tested metrics: the smallest p
    (2/2^n) must pass the first step, alpha/m (Holm and BH alike)."""
    return min_pairs(alpha / max(m, 1))


# ----------------------------------------------------------------------------
# Reading results.tsv and pairing rounds

def read_tsv(path):
    """values[metric][(round, kernel)] = [raw strings]; invalid[(round,
    kernel)] = reason; reports[(round, kernel)] = text; rounds (sorted)."""
    values = defaultdict(lambda: defaultdict(list))
    invalid, reports, rounds = {}, {}, set()
    with open(path) as f:
        hdr = f.readline().rstrip("\n").split("\t")
        if hdr[:2] != ["round", "kernel"]:
            raise SystemExit(f"stats: error: {path}: no 'round kernel metric value' header")
        for ln, line in enumerate(f, 2):
            if not line.strip():
                continue
            p = line.rstrip("\n").split("\t")
            if len(p) < 3:
                print(f"stats: warning: {path}:{ln}: malformed line ignored: {line.strip()!r}",
                      file=sys.stderr)
                continue
            r, k, m = p[0], p[1], p[2]
            v = p[3] if len(p) > 3 else ""
            rounds.add(r)
            if m == "!invalid":
                invalid[(r, k)] = v or "did not finish"
            elif m == "!report":
                reports[(r, k)] = v or "kernel report"
            else:
                values[m][(r, k)].append(v)
    return values, invalid, reports, sort_rounds(rounds)


def sort_rounds(rs):
    return sorted(rs, key=lambda r: (0, int(r), "") if r.isdigit() else (1, 0, r))


def _num(vs):
    if len(vs) != 1:
        return None, f"printed {len(vs)} times" if vs else "missing"
    try:
        x = float(vs[0])
    except ValueError:
        return None, f"bad value {vs[0]!r}"
    if not math.isfinite(x):
        return None, f"bad value {vs[0]!r}"
    return x, None


def pair_up(vals, invalid, rounds, ka, kb):
    """Pairs (round, a, b) of one metric for kernels ka and kb, and the dropped
    rounds as (round, reason)."""
    pairs, dropped = [], []
    for r in rounds:
        bad = [k for k in (ka, kb) if (r, k) in invalid]
        if bad:
            dropped.append((r, " and ".join(f"{k} did not finish" for k in bad)))
            continue
        a, ea = _num(vals.get((r, ka), []))
        b, eb = _num(vals.get((r, kb), []))
        if ea or eb:
            why = [f"{e} in {k}" if e != "missing" else f"missing from {k}"
                   for k, e in ((ka, ea), (kb, eb)) if e]
            dropped.append((r, ", ".join(why)))
            continue
        pairs.append((r, a, b))
    return pairs, dropped


# ----------------------------------------------------------------------------
# Comparing one kernel with another, metric by metric

def _arm(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "values": xs}


def compare_metric(metric, pairs, deterministic=False):
    """Everything about one metric but the multiplicity-corrected verdict."""
    e = {"metric": metric, "kind": metric_kind(metric), "n": len(pairs),
         "rounds_used": [r for r, _, _ in pairs]}
    if not pairs:
        e.update(verdict="no valid pair", ratio=None, ci95=None)
        return e
    a = [x for _, x, _ in pairs]
    b = [y for _, _, y in pairs]
    e["a"], e["b"] = _arm(a), _arm(b)
    ma, mb = e["a"]["median"], e["b"]["median"]
    if deterministic:
        # spread: max-min of A plus max-min of B; a difference of the medians
        # larger than that is reported (the ranges then cannot overlap)
        sp = (max(a) - min(a)) + (max(b) - min(b))
        e.update(ratio=mb / ma if ma else None, ci95=None, diff=mb - ma,
                 spread=sp if len(pairs) > 1 else None)
        if len(pairs) < 2:
            e["verdict"] = "no verdict"
            e["detail"] = "1 round: spread not measured"
        elif abs(mb - ma) <= sp:
            e["verdict"] = "equal within spread"
        else:
            e["verdict"] = verdict_word(metric, mb > ma)
            pct = f", {100 * (mb - ma) / ma:+.2f}%" if ma else ""
            e["detail"] = f"by {abs(mb - ma):.4g}{pct}; spread {sp:.3g}"
        return e
    positive = all(x > 0 for x in a + b)
    d = [math.log(y / x) for x, y in zip(a, b)] if positive else [y - x for x, y in zip(a, b)]
    p, nz, side = signed_rank_p(d)
    w = walsh(d)
    ci = signed_rank_ci(d, w=w)
    hl = hodges_lehmann(d, w)
    e.update(p=p, n_nonzero=nz, side=side, scale="log ratio" if positive else "difference")
    if positive:
        e["ratio"] = math.exp(hl)
        e["ci95"] = [math.exp(ci[0]), math.exp(ci[1])] if ci else None
    else:
        # a zero value: test B - A; the interval is for the difference
        e["ratio"] = mb / ma if ma else None
        e["ci95"] = None
        e["diff"] = hl
        e["ci95_diff"] = list(ci) if ci else None
    return e


def decide(entries, correction="holm", alpha=ALPHA):
    """Corrected verdicts for a family of compare_metric() results (timed
    runs).  The family is every entry that can reach alpha at all (at least
    MIN_PAIRS non-zero pairs): the others cannot be rejected at any level and
    are left out, which keeps the correction valid.  Returns the family size."""
    adjust = CORRECTIONS[correction][0]
    fam = [e for e in entries if "p" in e and min_p(e["n_nonzero"]) <= alpha]
    for e, q in zip(fam, adjust([e["p"] for e in fam])):
        e["p_adj"] = q
    m = len(fam)
    for e in entries:
        if "p" not in e:
            continue
        if "p_adj" in e and e["p_adj"] <= alpha:
            e["verdict"] = verdict_word(e["metric"], e["side"] > 0)
        elif e["n_nonzero"] == 0:
            e["verdict"] = "equal in all pairs"
        elif min_p(e["n_nonzero"]) > alpha / max(m, 1):
            e["verdict"] = "n too small"
            e["detail"] = (f"{e['n_nonzero']} pairs" if e["n_nonzero"] == e["n"] else
                           f"{e['n_nonzero']} unequal pairs") + \
                f"; needs {first_verdict_pairs(m, alpha) if m else MIN_PAIRS}"
        else:
            e["verdict"] = "within noise"
    return m


def dropped_text(dropped):
    return "; ".join(f"round {r}: {why}" for r, why in dropped)


# ----------------------------------------------------------------------------
# stats.py proper: A against B

def summarise(values, invalid, rounds, deterministic=False, correction="holm", only=None):
    out = {}
    for metric in sorted(values):
        if only and not re.search(only, metric):
            continue
        pairs, dropped = pair_up(values[metric], invalid, rounds, "A", "B")
        e = compare_metric(metric, pairs, deterministic)
        e["dropped"] = [{"round": r, "reason": why} for r, why in dropped]
        e["n_a"] = e["n_b"] = e["n"]        # older readers
        out[metric] = e
    m = None if deterministic else decide(list(out.values()), correction)
    return out, m


def fmt_arm(d, deterministic=False):
    if deterministic:       # counts: every digit
        return f"{d['median']:.7g} ({d['min']:.7g}-{d['max']:.7g})"
    return f"{d['median']:.3f} ({d['min']:.3g}-{d['max']:.3g})"


def fmt_n(e):
    k = len(e["dropped"])
    return f"{e['n']}" + (f" ({k} dropped)" if k else "")


def fmt_verdict(e):
    return e["verdict"] + (f" ({e['detail']})" if e.get("detail") else "")


def method_text(deterministic, correction, m, n_metrics):
    if deterministic:
        return [
            "Deterministic run (ICOUNT=1: the guest clock counts instructions): no test and",
            "no interval.  B-A: difference of the medians over rounds; spread: max-min over",
            "rounds of A plus that of B.  A difference is reported only when it exceeds the",
            "spread, otherwise \"equal within spread\"; one round measures no spread and",
            "gives no verdict.  No multiplicity correction (no test)."]
    name = CORRECTIONS[correction][1]
    t = ["Rounds are pairs (A then B booted in each round); n = valid pairs per metric.",
         "B/A: Hodges-Lehmann estimate of the per-round ratio; 95% CI: exact Wilcoxon",
         "signed-rank interval (per metric, uncorrected); p: exact signed-rank test on",
         "log(B/A), zero differences dropped, adjusted by " + name + ".",
         f"A verdict needs p(adj) <= 0.05, which needs at least {MIN_PAIRS} pairs (smallest exact",
         "p = 2/2^n); \"n too small\" means this metric cannot reach it."]
    if m:
        t.append(f"{m} of {n_metrics} metrics can be tested (the family); with {m} metrics the first"
                 f" verdict needs n >= {first_verdict_pairs(m)}"
                 + (" (fewer when several differ together)." if correction == "bh" else "."))
    else:
        t.append(f"No metric has {MIN_PAIRS} non-equal pairs: no verdicts.")
    return t


def drop_report(rounds, invalid, reports, summary, arms=("A", "B")):
    """Lines about invalid boots, kernel reports and per-metric dropped pairs."""
    lines = []
    for r in rounds:
        bad = [k for k in arms if (r, k) in invalid]
        if bad:
            lines.append(f"round {r}: {' and '.join(bad)} did not finish "
                         f"({'; '.join(invalid[(r, k)] for k in bad)}), pair dropped")
        for k in arms:
            if (r, k) in reports:
                lines.append(f"round {r}: {k} logged a kernel report ({reports[(r, k)]}); pair kept")
    by_reason = defaultdict(list)
    for m, e in summary.items():
        for d in e["dropped"]:
            if "did not finish" not in d["reason"]:
                by_reason[(d["round"], d["reason"])].append(m)
    for (r, why), ms in sorted(by_reason.items(), key=lambda x: (sort_rounds([x[0][0]]), x[0][1])):
        lines.append(f"round {r}: {why}, pair dropped for: {', '.join(ms)}")
    return lines


def table(summary, title, command, machine, deterministic, correction, m, notes):
    if deterministic:
        head = ["| metric | n | A median (min-max) | B median (min-max) | B/A | B-A | spread | verdict |",
                "|---|---|---|---|---|---|---|---|"]
    else:
        head = ["| metric | n | A median (min-max) | B median (min-max) | B/A | 95% CI | p (adj) | verdict |",
                "|---|---|---|---|---|---|---|---|"]
    lines = [f"### {title}", ""] + head
    for k, e in summary.items():
        if e["n"] == 0:
            lines.append(f"| {k} | {fmt_n(e)} | - | - | - | - | - | {e['verdict']} |")
            continue
        ratio = f"{e['ratio']:.3f}" if e.get("ratio") is not None else "-"
        if deterministic:
            sp = f"{e['spread']:.3g}" if e.get("spread") is not None else "-"
            mid = f"{e['diff']:+.4g} | {sp}"
        else:
            if e.get("ci95"):
                ci = f"{e['ci95'][0]:.3f}-{e['ci95'][1]:.3f}"
            elif e.get("ci95_diff"):
                ci = f"B-A {e['ci95_diff'][0]:+.3g}..{e['ci95_diff'][1]:+.3g}"
            else:
                ci = "-"
            pa = f"{e['p']:.3g} ({e['p_adj']:.3g})" if "p_adj" in e else f"{e['p']:.3g} (-)"
            mid = f"{ci} | {pa}"
        lines.append(f"| {k} | {fmt_n(e)} | {fmt_arm(e['a'], deterministic)} | {fmt_arm(e['b'], deterministic)} | {ratio} | "
                     f"{mid} | {fmt_verdict(e)} |")
    lines += [""] + method_text(deterministic, correction, m, len(summary))
    if notes:
        lines += ["", "Dropped and flagged rounds:"] + [f"- {x}" for x in notes]
    else:
        lines += ["", "Every round of every metric was used (no boot failed, no metric missing)."]
    lines += ["", f"Produced by `{command}` on {machine}; times are guest times"
              " under emulation: compare ratios, not absolute values."]
    return "\n".join(lines) + "\n"


def plot(summary, outdir, title, deterministic):
    """One PNG: B/A with its 95% interval (or, deterministic, its range)."""
    pts = []
    for m, e in summary.items():
        if e.get("ratio") is None or e["kind"] == "count":
            continue
        if deterministic and e["a"]["max"] > 0 and e["a"]["min"] > 0:
            pts.append((m, e["ratio"], e["b"]["min"] / e["a"]["max"], e["b"]["max"] / e["a"]["min"]))
        elif e.get("ci95"):
            pts.append((m, e["ratio"], e["ci95"][0], e["ci95"][1]))
    if not pts:
        return
    dat = os.path.join(outdir, "ratios.dat")
    with open(dat, "w") as f:
        for i, (m, r, lo, hi) in enumerate(pts):
            f.write(f"{i} {r} {lo} {hi} \"{m}\"\n")
    png = os.path.join(outdir, "ratios.png")
    what = "range over rounds" if deterministic else "95% exact signed-rank interval (uncorrected)"
    script = f"""
set terminal png noenhanced size 1000,{200 + 22 * len(pts)}
set output '{png}'
set title "{title}: B/A, {what}"
set ytics ({', '.join(f'"{m}" {i}' for i, (m, *_) in enumerate(pts))})
set yrange [-1:{len(pts)}]
set xlabel "B/A (times: below 1.00 is B faster; MiB/s, IOPS: above 1.00 is B faster)"
set grid x
set arrow from 1,-1 to 1,{len(pts)} nohead lc rgb "red"
plot '{dat}' using 2:1:3:4 with xerrorbars title "ratio"
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"stats: plot skipped: {err}", file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="A/B")
    ap.add_argument("--command", default="")
    ap.add_argument("--machine", default="QEMU TCG")
    ap.add_argument("--deterministic", action="store_true",
                    help="ICOUNT=1 run: report difference and spread, no test")
    ap.add_argument("--correction", choices=sorted(CORRECTIONS), default="holm")
    ap.add_argument("--rounds", type=int,
                    help="rounds the run was meant to have (a round with no line at all is then reported)")
    ap.add_argument("--only", metavar="REGEX",
                    help="only metrics matching REGEX (the family for the correction); choose it before the run")
    args = ap.parse_args(argv)
    values, invalid, reports, rounds = read_tsv(args.results)
    if args.rounds:
        rounds = sort_rounds(set(rounds) | {str(r) for r in range(1, args.rounds + 1)})
        for r in rounds:
            for k in ("A", "B"):
                if not any((r, k) in v for v in values.values()) and (r, k) not in invalid:
                    invalid[(r, k)] = "no line in results.tsv"
    summary, m = summarise(values, invalid, rounds, args.deterministic, args.correction, args.only)
    if not summary or all(e["n"] == 0 for e in summary.values()):
        print("stats: error: no metric has a valid A/B pair", file=sys.stderr)
        return 1
    notes = drop_report(rounds, invalid, reports, summary)
    for x in notes:
        print(f"stats: {x}", file=sys.stderr)
    md = table(summary, args.title, args.command, args.machine, args.deterministic,
               args.correction, m, notes)
    res = {"title": args.title, "command": args.command, "machine": args.machine,
           "format": 2, "deterministic": args.deterministic,
           "method": "deterministic: difference and spread" if args.deterministic else
           "paired exact Wilcoxon signed-rank on log(B/A), Hodges-Lehmann B/A",
           "correction": None if args.deterministic else args.correction,
           "alpha": ALPHA, "min_pairs": MIN_PAIRS, "family": m,
           "first_verdict_pairs": first_verdict_pairs(m) if m else None,
           "rounds": rounds,
           "invalid": [{"round": r, "kernel": k, "reason": v} for (r, k), v in sorted(invalid.items())],
           "reports": [{"round": r, "kernel": k, "text": v} for (r, k), v in sorted(reports.items())],
           "notes": notes,
           "method_text": method_text(args.deterministic, args.correction, m, len(summary)),
           "metrics": summary}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    plot(summary, args.out, args.title, args.deterministic)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
