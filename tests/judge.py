#!/usr/bin/env python3
"""Judge one test file's run from its logs: the host side of tests/run.sh.

usage: judge.py NAME CONSOLE_LOG KTAP_LOG QEMU_RC TIMEOUT_S [--summary FILE]

The guest init writes each test's output between "SYNCIO-TEST-BEGIN NAME"
and "SYNCIO-TEST-END NAME rc=N" to a second serial port (KTAP_LOG), apart
from the kernel console (CONSOLE_LOG), so kernel messages cannot break a
KTAP line.  When KTAP_LOG has no BEGIN marker (a kernel without a second
UART) the console log is read instead.

A test file counts its own "ok"/"not ok" results, and fails once more, with
the reason, when it
  - did not start or did not finish (timeout, panic, lost log),
  - printed no plan, or no result, or a number of results other than its
    plan, or results numbered other than 1..N in order,
  - exited non-zero without reporting a failing result,
  - left a kernel report (BUG, WARNING, Oops, KASAN, lockdep, ...) in the
    console log.
Prints the test's KTAP, one "not ok - NAME: reason" line per runner-level
failure and a closing "# NAME: ..." line; writes a machine-readable summary
(--summary) with one "result ok|fail|skip N description" line per result,
one "runner reason" line per runner-level failure and "counts P S N".
"""
import argparse
import re
import sys

BAD_RE = re.compile(
    r"BUG:|WARNING:|Oops|Kernel panic|KASAN:|UBSAN:|general protection fault|"
    r"possible circular locking|possible recursive locking|inconsistent lock state|"
    r"suspicious RCU usage|INFO: task .* blocked|ODEBUG:|kernel BUG at|Call Trace:|"
    r"kmemleak: [0-9]+ new suspected memory leaks|"
    # kmemleak switched itself off (its object pool ran dry under memory
    # pressure): the leak scan after the tests would find nothing.
    r"kmemleak: Kernel memory leak detector disabled")
PLAN_RE = re.compile(r"^1\.\.([0-9]+)$")
RESULT_RE = re.compile(r"^(not ok|ok) ([0-9]+)\b(.*)$")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().replace("\r", "").split("\n")
    except OSError:
        return []


def body_of(lines, name):
    """The lines between this test's markers, whether it finished, its rc."""
    start = None
    for i, line in enumerate(lines):
        if line == f"SYNCIO-TEST-BEGIN {name}":
            start = i + 1
            break
    if start is None:
        return None, False, None
    for j in range(start, len(lines)):
        m = re.match(rf"^SYNCIO-TEST-END {re.escape(name)} rc=(-?[0-9]+)$", lines[j])
        if m:
            return lines[start:j], True, int(m.group(1))
    return lines[start:], False, None


def judge(name, console, ktap, qrc, timeout):
    """Return (shown lines, results, runner failures)."""
    body, finished, rc = body_of(ktap, name)
    source = "ktap"
    if body is None:
        body, finished, rc = body_of(console, name)
        source = "console"
    shown, results, runner = [], [], []
    if body is None:
        body = []
        runner.append("did not start (no SYNCIO-TEST-BEGIN marker in either log)")
    plan = None
    for line in body:
        if re.match(r"^(KTAP|[0-9]+\.\.|ok |not ok |# )", line):
            shown.append(line)
        m = PLAN_RE.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = RESULT_RE.match(line)
        if m:
            desc = m.group(3).strip()
            if m.group(1) == "not ok":
                kind = "fail"
            elif re.search(r"#\s*SKIP\b", desc, re.I):
                kind = "skip"
            else:
                kind = "ok"
            results.append((kind, int(m.group(2)), desc))
    if body and not finished:
        if qrc in (124, 137):
            runner.append(f"timed out after {timeout}s")
        else:
            runner.append(f"did not finish (QEMU exit {qrc}, log cut short in {source})")
    if body or finished:
        if plan is None:
            runner.append("printed no plan (no '1..N' line)")
        if not results:
            runner.append("printed no result")
        elif plan is not None and len(results) != plan:
            runner.append(f"planned {plan} results, printed {len(results)}")
        nums = [r[1] for r in results]
        if results and nums != list(range(1, len(nums) + 1)):
            runner.append(f"results numbered {nums[:8]}{'...' if len(nums) > 8 else ''}, not 1..{len(nums)} in order")
        if finished and rc != 0 and not any(r[0] == "fail" for r in results):
            runner.append(f"exited with status {rc} but reported no failing result")
    for i, line in enumerate(console):
        if BAD_RE.search(line):
            ctx = console[max(0, i - 2):i + 25]
            runner.append("kernel report in the console log: " + line.strip()[:160])
            shown.extend("#   " + c for c in ctx)
            break
    return shown, results, runner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("console")
    ap.add_argument("ktap")
    ap.add_argument("qrc", type=int)
    ap.add_argument("timeout")
    ap.add_argument("--summary")
    ap.add_argument("--seconds", default="?")
    a = ap.parse_args()
    shown, results, runner = judge(a.name, read(a.console), read(a.ktap), a.qrc, a.timeout)
    for line in shown:
        print(line)
    for r in runner:
        print(f"not ok - {a.name}: {r} (log {a.console})")
    p = sum(1 for r in results if r[0] == "ok")
    s = sum(1 for r in results if r[0] == "skip")
    n = sum(1 for r in results if r[0] == "fail")
    print(f"# {a.name}: {a.seconds}s, {p + s} ok ({s} skipped), {n} not ok"
          + (f", {len(runner)} runner failure(s)" if runner else ""))
    if a.summary:
        with open(a.summary, "w") as f:
            for kind, num, desc in results:
                f.write(f"result {kind} {num} {desc}\n")
            for r in runner:
                f.write(f"runner {r}\n")
            f.write(f"counts {p} {s} {n + len(runner)}\n")
    print(f"JUDGE {p} {s} {n + len(runner)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
