#!/usr/bin/env python3
"""Host-side self-test of the benchmark statistics (benchmarks/stats.py,
benchmarks/bisect_stats.py, scripts/bench-boot.sh's invalid-boot marker,
scripts/cover-perf.py's reading of results.json).  No VM; seconds.

Seeded simulations show that the paired exact signed-rank method gives a
false "faster/slower" verdict at most 5% of the time when A and B come from
one distribution (3, 6 and 12 rounds, a single metric and a family of 8
metrics under Holm, lognormal noise with outliers and a heavy-tailed case),
and that it finds a 5% difference at 12 rounds; unit checks cover the
exact p-values, invalid rounds, verdict words, small n and deterministic
(ICOUNT) runs.  Prints KTAP; exits non-zero on any failure.
"""
import contextlib
import io
import itertools
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import traceback

sys.dont_write_bytecode = True
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "benchmarks"))
import stats  # noqa: E402
import bisect_stats  # noqa: E402
import ratio_within  # noqa: E402

TRIALS = 2000
TESTS = []
NOTES = []


def note(line):
    NOTES.append(line)


def test(fn):
    TESTS.append(fn)
    return fn


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


# ----------------------------------------------------------------------------
# Simulated benchmark values


def t2(rnd):
    """Student t with 2 degrees of freedom (infinite variance)."""
    return rnd.gauss(0, 1) / math.sqrt(rnd.gammavariate(1.0, 2.0) / 2)


def boot_value(rnd, dist, level):
    """One boot's value: lognormal with ~3% CV and 5% of boots 10-60% slow
    outliers ("lognormal"), the same without outliers ("none"), or a
    t(2)-distributed log value scaled by 3% ("heavy")."""
    if dist in ("lognormal", "none"):
        v = level * math.exp(rnd.gauss(0, 0.03))
        if dist == "lognormal" and rnd.random() < 0.05:
            v *= 1.1 + 0.5 * rnd.random()
        return v
    return level * math.exp(0.03 * t2(rnd))


def sim_pairs(rnd, n, dist, effect=1.0, drift=True):
    """n rounds of (A, B); a per-round drift (host load) hits both boots."""
    out = []
    for _ in range(n):
        lvl = 100 * (math.exp(rnd.gauss(0, 0.05)) if drift else 1.0)
        out.append((boot_value(rnd, dist, lvl), boot_value(rnd, dist, lvl * effect)))
    return out


def verdicts(family, correction="holm"):
    """family: list of (metric, pairs) -> {metric: verdict} via stats.py."""
    es = [stats.compare_metric(m, [(str(i), a, b) for i, (a, b) in enumerate(p)])
          for m, p in family]
    stats.decide(es, correction)
    return {e["metric"]: e["verdict"] for e in es}


DIRECTIONAL = {"B faster", "B slower", "B higher", "B lower"}


def false_rate(n, dist, metrics=1, seed=1, correction="holm", trials=TRIALS):
    rnd = random.Random(seed)
    bad = 0
    for _ in range(trials):
        fam = [(f"m{j}.x_us", sim_pairs(rnd, n, dist)) for j in range(metrics)]
        if any(v in DIRECTIONAL for v in verdicts(fam, correction).values()):
            bad += 1
    return bad / trials


def exact_size(n, level):
    """P(p <= level) for the exact test with n non-zero pairs under no difference."""
    c, tot = stats.signed_rank_null(n), 2.0 ** n
    return sum(v for w, v in enumerate(c)
               if min(1, 2 * min(sum(c[:w + 1]), sum(c[w:])) / tot) <= level) / tot


# ----------------------------------------------------------------------------
# Exact test machinery


@test
def exact_p_matches_enumeration():
    """signed_rank_p equals brute-force sign-flip enumeration (ties, zeros)"""
    rnd = random.Random(7)
    for trial in range(300):
        n = rnd.randint(1, 9)
        d = [rnd.choice([-3, -2, -1, 0, 1, 2, 3, 2.5, -0.5]) if trial % 2 else rnd.gauss(0, 1)
             for _ in range(n)]
        p, nz, _ = stats.signed_rank_p(d)
        x = [v for v in d if v != 0]
        if not x:
            check(p == 1.0 and nz == 0, f"all zero: p={p}")
            continue
        r2, _ = stats._ranks2([abs(v) for v in x])
        obs = sum(r for r, v in zip(r2, x) if v > 0)
        ws = [sum(r for r, s in zip(r2, signs) if s) for signs in itertools.product((0, 1), repeat=len(x))]
        lo = sum(w <= obs for w in ws) / len(ws)
        hi = sum(w >= obs for w in ws) / len(ws)
        want = min(1.0, 2 * min(lo, hi))
        check(abs(p - want) < 1e-12, f"d={d}: p={p}, enumeration {want}")
    return ["300 random samples, n 1-9, with ties and zeros"]


@test
def exact_thresholds():
    """minimum pairs 6; signed-rank critical values match the tables"""
    check(stats.MIN_PAIRS == 6, f"MIN_PAIRS {stats.MIN_PAIRS}")
    check(stats.min_p(5) > 0.05 and stats.min_p(6) <= 0.05, "min_p")
    # two-sided 0.05 critical values of the signed-rank statistic
    table = {6: 0, 7: 2, 8: 3, 9: 5, 10: 8, 11: 10, 12: 13, 15: 25, 20: 52}
    for n, c in table.items():
        check(stats.signed_rank_crit(n) == c, f"n={n}: crit {stats.signed_rank_crit(n)}, table {c}")
    check(stats.signed_rank_crit(5) is None, "n=5 has an interval")
    # Holm/BH: first verdict needs 2/2^n <= 0.05/m
    want = {1: 6, 2: 7, 3: 7, 8: 9, 16: 10, 32: 11, 102: 12, 103: 13}
    for m, n in want.items():
        check(stats.first_verdict_pairs(m) == n, f"m={m}: {stats.first_verdict_pairs(m)} != {n}")
    return ["n=6 is the first with 2/2^n <= 0.05; with m metrics: " +
            ", ".join(f"m={m}: n>={n}" for m, n in want.items())]


@test
def holm_and_bh():
    """Holm and Benjamini-Hochberg adjusted p-values"""
    ps = [0.01, 0.04, 0.03, 0.005]
    h = stats.holm(ps)
    check([round(x, 6) for x in h] == [0.03, 0.06, 0.06, 0.02], f"holm {h}")
    b = stats.bh(ps)
    check([round(x, 6) for x in b] == [0.02, 0.04, 0.04, 0.02], f"bh {b}")
    return []


@test
def interval_coverage():
    """95% signed-rank interval covers the true ratio (n=6, 12; heavy tails)"""
    out = []
    for n, dist in ((6, "heavy"), (12, "lognormal"), (12, "heavy")):
        rnd = random.Random(n)
        cover = 0
        for _ in range(1000):
            e = stats.compare_metric("x_us", [(str(i), a, b) for i, (a, b) in
                                               enumerate(sim_pairs(rnd, n, dist, effect=1.05))])
            lo, hi = e["ci95"]
            cover += lo <= 1.05 <= hi
        out.append(f"n={n} {dist}: coverage {cover / 10:.1f}%")
        check(cover >= 940, out[-1])
    return out


# ----------------------------------------------------------------------------
# Simulations: false verdicts under no difference, power


@test
def null_single_metric():
    """no difference, 1 metric: false faster/slower <= 5% at n=3, 6, 12"""
    worst = 0
    for dist in ("lognormal", "heavy"):
        for n, trials in ((3, TRIALS // 2), (6, 2 * TRIALS), (12, 3 * TRIALS)):
            r = false_rate(n, dist, seed=n * 10 + len(dist), trials=trials)
            worst = max(worst, r)
            note(f"{dist:9} n={n:2}: false verdict rate {100 * r:.2f}% ({trials} trials; "
                 f"exact size {100 * (exact_size(n, 0.05) if n >= 6 else 0):.2f}%)")
    # the old bootstrap interval of the ratio of medians at 3 rounds is
    # [min B / max A, max B / min A]: it excludes 1 when all B lie above or
    # below all A (no drift between rounds here: drift hides it)
    rnd = random.Random(3)
    old = sum(1 for _ in range(TRIALS) for p in [sim_pairs(rnd, 3, "lognormal", drift=False)]
              if max(a for a, _ in p) < min(b for _, b in p) or max(b for _, b in p) < min(a for a, _ in p))
    note(f"for comparison, the old bootstrap verdict at n=3: {100 * old / TRIALS:.1f}% (2/20 expected)")
    check(worst <= 0.05, f"false rate {worst}")


@test
def null_family_of_8_holm():
    """no difference, 8 metrics under Holm: family-wise false verdicts <= 5%"""
    worst = 0
    for dist, n, trials in (("lognormal", 6, TRIALS // 4), ("lognormal", 12, 5 * TRIALS // 4),
                            ("heavy", 12, 5 * TRIALS // 4)):
        r = false_rate(n, dist, metrics=8, seed=100 + n + len(dist), trials=trials)
        worst = max(worst, r)
        note(f"{dist:9} n={n:2}: family-wise false verdict rate {100 * r:.2f}% ({trials} trials)")
    r = false_rate(12, "lognormal", metrics=8, seed=5, correction="bh", trials=5 * TRIALS // 4)
    note(f"lognormal n=12, Benjamini-Hochberg: {100 * r:.2f}% ({5 * TRIALS // 4} trials; all null: FDR = FWER)")
    worst = max(worst, r)
    note(f"bound: 8 x exact size at 0.05/8 = {100 * 8 * exact_size(12, 0.05 / 8):.2f}% at n=12")
    check(worst <= 0.05, f"FWER {worst}")


@test
def power_5pct_n12():
    """a 5% difference (CV 3%, n=12) is found: power >= 80%, right direction"""
    rnd = random.Random(42)
    res = {}
    for name, gen, trials, fam in (
            ("lognormal CV 3%, alone", lambda: sim_pairs(rnd, 12, "none", 1.05), TRIALS, 1),
            ("with 5% outlier boots, alone", lambda: sim_pairs(rnd, 12, "lognormal", 1.05), TRIALS, 1),
            ("lognormal CV 3%, 1 of 8 metrics (Holm)", lambda: sim_pairs(rnd, 12, "none", 1.05), TRIALS // 2, 8)):
        hit = wrong = 0
        for _ in range(trials):
            f = [("m0.x_us", gen())] + [(f"m{j}.x_us", sim_pairs(rnd, 12, "none")) for j in range(1, fam)]
            v = verdicts(f)["m0.x_us"]
            hit += v == "B slower"
            wrong += v == "B faster"
        res[name] = hit / trials
        note(f"power, {name}: {100 * hit / trials:.1f}% ({trials} trials, wrong direction {wrong})")
        check(wrong == 0, f"{name}: {wrong} in the wrong direction")
    check(res["lognormal CV 3%, alone"] >= 0.80, f"power {res}")


# ----------------------------------------------------------------------------
# Verdicts, small n, deterministic runs


def guest_metric_names():
    """Every metric name template the guest scripts print ("BENCH name value")."""
    names = set()
    gdir = os.path.join(TOP, "benchmarks", "guest")
    for f in sorted(os.listdir(gdir)):
        for line in open(os.path.join(gdir, f)):
            if line.lstrip().startswith("#"):
                continue
            for m in re.finditer(r"BENCH ([^\s\"'-][^\s\"']*)", line):
                names.add(re.sub(r"\$\{?\w+\}?|%[sd]", "x", m.group(1)))
    return names


@test
def verdict_words():
    """verdict words follow the metric kind; every guest metric is classified"""
    want = {"zram.swapin_us": ("time", "B slower", "B faster"),
            "biocache.fn.bio_put_us": ("time", "B slower", "B faster"),
            "zram.fault_p99_us": ("time", "B slower", "B faster"),
            "zram.lzo.direct.randread.j1.read_mibs": ("throughput", "B faster", "B slower"),
            "biocache.j2.read_iops": ("throughput", "B faster", "B slower"),
            "pmem.64k.q1j1.read_cpu": ("cpu", "B higher", "B lower"),
            "zram.faults": ("count", "B higher", "B lower"),
            "zram.swapin_calls": ("count", "B higher", "B lower"),
            "x.majflt": ("count", "B higher", "B lower"),
            "brd.fn.percpu_ref_get_us": ("time", "B slower", "B faster"),
            "something": ("neutral", "B higher", "B lower")}
    for m, (kind, up, down) in want.items():
        check(stats.metric_kind(m) == kind, f"{m}: {stats.metric_kind(m)} != {kind}")
        check(stats.verdict_word(m, True) == up and stats.verdict_word(m, False) == down, m)
    names = guest_metric_names()
    kinds = {n: stats.metric_kind(n) for n in names}
    neutral = [n for n, k in kinds.items() if k == "neutral"]
    check(len(names) >= 10, f"found only {sorted(names)}")
    check(not neutral, f"guest metrics left neutral: {neutral}")
    # end to end: a 10% rise in every kind gets its own word
    rnd = random.Random(1)
    fam = [(m, sim_pairs(rnd, 12, "lognormal", effect=1.10, drift=False)) for m in want]
    rnd2 = random.Random(2)
    fam = [(m, [(a, a * 1.10 * math.exp(rnd2.gauss(0, 0.002))) for a, _ in p]) for m, p in fam]
    v = verdicts(fam)
    for m, (_, up, _) in want.items():
        check(v[m] == up, f"{m}: {v[m]} != {up}")
    return [f"{len(names)} guest metric templates: " +
            ", ".join(f"{n}={k}" for n, k in sorted(kinds.items()))]


@test
def small_n_no_verdict():
    """n=1, 2 (and up to 5) give "n too small", however large the difference"""
    for n in range(1, 6):
        pairs = [(str(i), 100.0 + i, 200.0 + i) for i in range(n)]
        e = stats.compare_metric("x_us", pairs)
        stats.decide([e])
        check(e["verdict"] == "n too small", f"n={n}: {e['verdict']}")
        check(e["ci95"] is None, f"n={n} has an interval")
    e = stats.compare_metric("x_us", [(str(i), 100.0 + i, 200.0 + i) for i in range(6)])
    stats.decide([e])
    check(e["verdict"] == "B slower", f"n=6: {e['verdict']}")
    # 6 pairs but 8 metrics: the first Holm step needs 9 pairs
    es = [stats.compare_metric(f"m{j}_us", [(str(i), 100.0 + i, 200.0 + i) for i in range(6)])
          for j in range(8)]
    m = stats.decide(es)
    check(m == 8 and all(e["verdict"] == "n too small" for e in es), [e["verdict"] for e in es])
    e = stats.compare_metric("x_calls", [(str(i), 5.0, 5.0) for i in range(12)])
    stats.decide([e])
    check(e["verdict"] == "equal in all pairs", e["verdict"])
    return ["n=1..5: n too small; n=6 all B slower: B slower; 8 metrics at n=6: n too small"]


@test
def deterministic_spread():
    """deterministic (ICOUNT) mode reports difference and spread, no interval"""
    def det(a, b, m="x.swapin_us"):
        return stats.compare_metric(m, [(str(i), x, y) for i, (x, y) in enumerate(zip(a, b))], True)
    e = det([15.182, 15.181, 15.193], [15.633, 15.627, 15.636])
    check(e["verdict"] == "B slower" and e["ci95"] is None and "p" not in e, e)
    check(abs(e["spread"] - 0.021) < 1e-9 and abs(e["diff"] - 0.451) < 1e-9, e)
    check("spread" in e["detail"], e["detail"])
    e = det([15.182, 15.181, 15.193], [15.190, 15.185, 15.180])
    check(e["verdict"] == "equal within spread", e["verdict"])
    e = det([15.182], [16.0])
    check(e["verdict"] == "no verdict" and e["spread"] is None, e)
    e = det([100.0, 100.0], [90.0, 90.0], "j1.read_iops")
    check(e["verdict"] == "B slower", e["verdict"])
    return ["+451 over spread 21: B slower; inside the spread: equal; 1 round: no verdict"]


# ----------------------------------------------------------------------------
# Files: results.tsv with invalid rounds -> stats.py, bisect_stats.py, cover-perf.py


def write_tsv(path, rows):
    with open(path, "w") as f:
        f.write("round\tkernel\tmetric\tvalue\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")


def run_main(mod, argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = mod.main(argv)
    return rc, out.getvalue(), err.getvalue()


def swaplat_rows(rounds, rnd, effect=1.10, icount=False):
    rows = []
    for r in range(1, rounds + 1):
        for k in "AB":
            for d in ("zram", "pmem"):
                for m, v in (("swapin_us", 12.5), ("swapout_us", 16.3)):
                    x = v * (effect if k == "B" else 1)
                    x = x + rnd.randint(0, 5) / 1000 if icount else x * math.exp(rnd.gauss(0, 0.03))
                    rows.append((r, k, f"{d}.{m}", f"{x:.3f}"))
                rows.append((r, k, f"{d}.swapin_calls", 20000 + rnd.randint(0, 30)))
                rows.append((r, k, f"{d}.faults", 30000 + rnd.randint(0, 30)))
    return rows


@test
def invalid_rounds_dropped_and_reported():
    """an unfinished boot or a missing metric drops that pair, reported"""
    rnd = random.Random(9)
    rows = swaplat_rows(12, rnd)
    rows.append((3, "B", "!invalid", "no BENCH-DONE in B-3.log"))
    rows.append((5, "A", "!report", "WARNING: at mm/x.c"))
    rows = [x for x in rows if not (x[0] == 7 and x[1] == "A" and x[2] == "pmem.swapin_us")]
    rows = [x if not (x[0] == 8 and x[1] == "B" and x[2] == "zram.faults") else (8, "B", "zram.faults", "")
            for x in rows]
    with tempfile.TemporaryDirectory() as d:
        write_tsv(os.path.join(d, "results.tsv"), rows)
        rc, out, err = run_main(stats, [os.path.join(d, "results.tsv"), "--out", d, "--rounds", "13"])
        check(rc == 0, f"rc {rc}: {err}")
        for x in err.splitlines():
            note(x)
        res = json.load(open(os.path.join(d, "results.json")))
        md = open(os.path.join(d, "results.md")).read()
    m = res["metrics"]
    check(m["zram.swapin_us"]["n"] == 11, f"zram.swapin_us n={m['zram.swapin_us']['n']}")
    check("3" not in m["zram.swapin_us"]["rounds_used"], "round 3 used")
    check(m["pmem.swapin_us"]["n"] == 10 and "7" not in m["pmem.swapin_us"]["rounds_used"], "round 7")
    check("7" in m["pmem.swapout_us"]["rounds_used"], "round 7 dropped for other metrics too")
    check(m["zram.faults"]["n"] == 10, f"faults n={m['zram.faults']['n']}")
    for s in ("round 3: B did not finish", "round 13: A and B did not finish",
              "round 7: missing from A, pair dropped for: pmem.swapin_us",
              "round 8: bad value '' in B", "round 5: A logged a kernel report"):
        check(s in err, f"stderr lacks {s!r}: {err}")
        check(s in md, f"results.md lacks {s!r}")
    check("| pmem.swapin_us | 10 (3 dropped) |" in md, "n column")
    check("Holm" in md, "footer names the correction")
    # old-format results.tsv (no markers): every round used, nothing reported
    with tempfile.TemporaryDirectory() as d:
        write_tsv(os.path.join(d, "results.tsv"), swaplat_rows(6, rnd))
        rc, out, err = run_main(stats, [os.path.join(d, "results.tsv"), "--out", d])
        check(rc == 0 and not err.strip(), err)
        check("Every round of every metric was used" in out, "no-drop footer")
    # nothing valid: error
    with tempfile.TemporaryDirectory() as d:
        write_tsv(os.path.join(d, "results.tsv"), [(1, "A", "!invalid", "x"), (1, "B", "x_us", 1)])
        rc, _, err = run_main(stats, [os.path.join(d, "results.tsv"), "--out", d])
        check(rc == 1 and "no metric has a valid A/B pair" in err, f"rc {rc} {err}")
    return []


@test
def bench_boot_marks_unfinished_boot():
    """bench-boot.sh writes !invalid for a boot without BENCH-DONE, !report for a splat"""
    with tempfile.TemporaryDirectory() as top:
        os.makedirs(os.path.join(top, "scripts"))
        os.makedirs(os.path.join(top, "benchmarks", "guest"))
        open(os.path.join(top, "benchmarks", "guest", "fake.sh"), "w").write("# bench-timeout: 5\n")
        q = os.path.join(top, "scripts", "qemu-run.sh")
        open(q, "w").write('#!/bin/sh\ncp "$FAKE_LOG" "$2"\n')
        os.chmod(q, 0o755)
        res = os.path.join(top, "results.tsv")
        write_tsv(res, [])
        logs = {"done": "BENCH a.x_us 1.5\nBENCH a.faults 3\nBENCH-DONE\n",
                "cut": "BENCH a.x_us 1.7\n",
                "splat": "WARNING: CPU: 0 PID: 1 at mm/swap.c\nBENCH a.x_us 1.6\nBENCH-DONE\n"}
        outs = {}
        for i, (name, text) in enumerate(logs.items(), 1):
            src = os.path.join(top, f"{name}.src")
            open(src, "w").write(text)
            p = subprocess.run([os.path.join(TOP, "scripts", "bench-boot.sh"), "bz", os.path.join(top, f"{name}.log"),
                                "fake", str(i), "B", res], capture_output=True, text=True,
                               env=dict(os.environ, TOP=top, FAKE_LOG=src))
            outs[name] = (p.returncode, p.stdout.strip(), p.stderr)
        lines = [x.split("\t") for x in open(res).read().splitlines()[1:]]
    check(["1", "B", "a.x_us", "1.5"] in lines and not any(x[0] == "1" and x[2].startswith("!") for x in lines),
          f"finished boot: {lines}")
    check(["2", "B", "a.x_us", "1.7"] in lines, f"metrics of the cut boot kept: {lines}")
    check(any(x[:3] == ["2", "B", "!invalid"] for x in lines), f"no !invalid: {lines}")
    check("did not finish" in outs["cut"][2], outs["cut"])
    check(any(x[:3] == ["3", "B", "!report"] for x in lines), f"no !report: {lines}")
    check(outs["done"][1] == "2" and outs["cut"][1] == "1", outs)
    return ["results.tsv: " + "; ".join(" ".join(x) for x in lines if x[2].startswith("!"))]


@test
def bisect_marks():
    """bisect_stats: no mark below 6 rounds, marks a change at 12, drops bad base rounds, ICOUNT spread"""
    out = []
    ks = ["00-base", "01", "02", "03"]

    def rows(rounds, rnd, icount=False):
        rs = []
        for r in range(1, rounds + 1):
            for k in ks:
                for m, v in (("zram.swapin_us", 12.5), ("pmem.swapout_us", 16.3), ("zram.faults", 10)):
                    x = v * (1.10 if k >= "02" and m.endswith("_us") else 1)
                    x = x + rnd.randint(0, 4) / 1000 if icount else x * math.exp(rnd.gauss(0, 0.03))
                    rs.append((r, k, m, f"{x:.3f}"))
        return rs
    rnd = random.Random(11)
    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "results.tsv")
        for rounds in (1, 3):
            write_tsv(t, rows(rounds, rnd))
            rc, txt, err = run_main(bisect_stats, [t, "--out", d])
            check(rc == 0 and "*" not in txt.split("\n\n")[0], f"{rounds} rounds marked:\n{txt}")
            check("nothing is marked" in txt, "footer does not say why")
        out.append("1 and 3 rounds: no mark, footer says fewer than 6")
        rs = rows(12, rnd) + [(4, "00-base", "!invalid", "no BENCH-DONE")]
        write_tsv(t, rs)
        rc, txt, err = run_main(bisect_stats, [t, "--out", d])
        js = json.load(open(os.path.join(d, "bisect.json")))
        cells = js["metrics"]["zram.swapin_us"]
        check(not cells["01"]["marked"] and cells["02"]["marked"] and cells["03"]["marked"], txt)
        check(all(cells[k]["n"] == 11 for k in ("01", "02", "03")), "base round 4 not dropped")
        check("round 4: 00-base did not finish" in err and "round 4: 00-base did not finish" in txt, err)
        check("zram.faults" not in txt.split("\n\n")[0], "counts in the table")
        out.append("12 rounds: 02 and 03 (+10%) marked, 01 not; base round 4 dropped for all")
        write_tsv(t, rows(1, rnd, icount=True))
        rc, txt, err = run_main(bisect_stats, [t, "--out", d, "--deterministic"])
        check("*" not in txt.split("\n\n")[0] and "One round: no spread" in txt, txt)
        write_tsv(t, rows(3, rnd, icount=True))
        rc, txt, err = run_main(bisect_stats, [t, "--out", d, "--deterministic"])
        js = json.load(open(os.path.join(d, "bisect.json")))
        c = js["metrics"]["zram.swapin_us"]
        check(c["02"]["marked"] and not c["01"]["marked"] and c["02"]["spread"] is not None, txt)
        out.append("ICOUNT: 1 round no mark; 3 rounds marks +10% with its spread")
    return out


@test
def cover_perf_reads_results():
    """cover-perf.py writes its tables from new (timed, ICOUNT, generic) and old results.json"""
    rnd = random.Random(13)
    with tempfile.TemporaryDirectory() as d:
        cover = os.path.join(d, "cover.txt")
        open(cover, "w").write("Subject\n\nbody\n\nPerformance\n-----------\nold\n")
        runs = []
        for name, rows, extra in (
                ("timed", swaplat_rows(12, rnd), ["--command", "make bench A=base B=series BENCH=swaplat ROUNDS=12"]),
                ("icount", swaplat_rows(3, rnd, icount=True),
                 ["--deterministic", "--machine", "QEMU TCG with -icount shift=0",
                  "--command", "make bench BENCH=swaplat ROUNDS=3 ICOUNT=1"]),
                ("generic", [(r, k, f"pmem.64k.q1j1.{x}", f"{500 * math.exp(rnd.gauss(0, .03)):.1f}")
                             for r in range(1, 13) for k in "AB" for x in ("read_mibs", "read_cpu")]
                 + [(2, "A", "!invalid", "cut")], ["--command", "make bench BENCH=pmemcopy ROUNDS=12"])):
            o = os.path.join(d, name)
            os.makedirs(o)
            write_tsv(os.path.join(o, "results.tsv"), rows)
            rc, _, err = run_main(stats, [os.path.join(o, "results.tsv"), "--out", o] + extra)
            check(rc == 0, err)
            runs.append(os.path.join(o, "results.json"))
        old = json.load(open(runs[0]))
        for e in old["metrics"].values():
            for k in ("n", "dropped", "p", "p_adj", "detail", "kind"):
                e.pop(k, None)
        for k in ("format", "rounds", "family", "correction", "deterministic"):
            old.pop(k, None)
        json.dump(old, open(os.path.join(d, "old.json"), "w"))
        runs.append(os.path.join(d, "old.json"))
        p = subprocess.run([sys.executable, os.path.join(TOP, "scripts", "cover-perf.py")] + runs
                           + ["--cover", cover], capture_output=True, text=True)
        check(p.returncode == 0, p.stderr)
        text = open(cover).read()
    for s in ("Hodges-Lehmann", "Holm-corrected", "spread", "B slower", "pmem.64k.q1j1.read_mibs",
              "95% bootstrap interval", "Pairs dropped", "body"):
        check(s in text, f"cover lacks {s!r}:\n{text}")
    check("old" not in text.split("-----------\n")[1].split("\n")[0], "old section kept")
    return ["timed, ICOUNT, generic (with a dropped round) and old-format results.json"]


@test
def ratio_within_interval():
    """ratio_within: exact median interval covers at n=6, 8, 12; none below 6"""
    out = []
    for n in (6, 8, 12):
        rnd = random.Random(100 + n)
        cover = 0
        for _ in range(2000):
            # skewed per-boot ratios around a true median of 0.9
            xs = [0.9 * math.exp(rnd.choice((-1, 1)) * rnd.expovariate(8)) for _ in range(n)]
            lo, hi, _ = ratio_within.median_interval(xs)
            cover += lo <= 0.9 <= hi
        out.append(f"n={n}: coverage {cover / 20:.1f}%")
        check(cover >= 1880, out[-1])
    check(ratio_within.median_interval([1.0, 0.9, 1.1, 0.95, 1.05]) is None,
          "5 boots gave a 95% interval")
    return out


def main():
    print("KTAP version 1")
    print(f"1..{len(TESTS)}")
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        desc = fn.__doc__.split("\n")[0].strip()
        NOTES.clear()
        try:
            diag = NOTES + (fn() or [])
            ok = True
        except Exception as err:  # noqa: BLE001
            ok = False
            diag = NOTES + [f"{type(err).__name__}: {err}"] + \
                ([] if isinstance(err, Fail) else traceback.format_exc().splitlines()[-6:])
        for line in diag:
            for part in str(line).splitlines():
                print(f"# {part}")
        print(f"{'ok' if ok else 'not ok'} {i} {desc}")
        failed += not ok
    print(f"# stats-selftest: {len(TESTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
