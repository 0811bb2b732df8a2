#!/usr/bin/env python3
"""Write the performance section of cover-letter.txt from a bench results
file (results.json from make bench).  Everything after the line
"Performance" and its underline is replaced.

usage: scripts/cover-perf.py build/bench/<run>/results.json [cover-letter.txt]
"""
import json
import sys

DEVS = ["zram", "brd", "pmem", "btt"]
DIRS = [("swapin_us", "swap-in  (swap_readpage)"), ("swapout_us", "swap-out (swap_writepage)")]


def main():
    res = json.load(open(sys.argv[1]))
    cover = sys.argv[2] if len(sys.argv) > 2 else "cover-letter.txt"
    m = res["metrics"]
    any_m = next(iter(m.values()))
    n = any_m["n_a"]
    out = ["Performance", "-----------",
           "Swap latency, base v6.1.4 (rw_page) = A against the full series = B,",
           f"A/B interleaved in one run, {n} boots of each.  Average time per call",
           "of the swap entry point from the ftrace function profiler, median over",
           "boots (min-max); B/A is the ratio of medians with a 95% bootstrap",
           "interval.  Each boot runs a pmbench-like random-access load (96 MiB",
           "working set, cgroup v2 memory.max 32 MiB, 30% writes).", "",
           f"  {'device':6} {'direction':26} {'A us':>18} {'B us':>18} {'B/A':>6}  95% CI",
           ]
    for d in DEVS:
        for key, label in DIRS:
            e = m.get(f"{d}.{key}")
            if not e:
                continue
            a, b = e["a"], e["b"]
            ci = e["ci95"]
            note = "within noise" if ci[0] <= 1.0 <= ci[1] else ("B slower" if ci[0] > 1.0 else "B faster")
            out.append(f"  {d:6} {label:26} {a['median']:6.2f} ({a['min']:5.2f}-{a['max']:5.2f})"
                       f" {b['median']:6.2f} ({b['min']:5.2f}-{b['max']:5.2f}) {e['ratio']:6.3f}"
                       f"  {ci[0]:.3f}-{ci[1]:.3f} {note}")
    slower = [f"{k}" for k, e in m.items() if k.endswith(("swapin_us", "swapout_us")) and e["ci95"][0] > 1.0]
    out += ["", "Machine: QEMU TCG (no KVM), x86_64, 2 vCPUs, 2 GiB guest, on a 2-core",
            "host; guest clock on the TSC.  Times are emulated and only their ratios",
            "mean anything; real-hardware numbers are not measured here.",
            f"Command: {res['command']}", ""]
    if slower:
        out += ["Where the series is not yet as fast as rw_page (interval above 1.00):",
                "  " + ", ".join(sorted(slower)), ""]
    text = open(cover).read()
    head = text.split("\nPerformance\n-----------\n")[0]
    open(cover, "w").write(head.rstrip("\n") + "\n\n" + "\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
