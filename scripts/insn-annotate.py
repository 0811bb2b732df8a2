#!/usr/bin/env python3
"""Annotate a kernel function's disassembly with exact execution counts.

usage: insn-annotate.py [--per ENTRY] OBJDIR RUN.tb FUNC [FUNC...]

OBJDIR is a kernel build directory (vmlinux, System.map); RUN.tb is one
insnprof plugin output of a boot of that kernel (make insn-profile keeps
them as DEV-A.tb and DEV-B.tb beside its report.md).  For each FUNC it
prints objdump's disassembly with, on each instruction, its executions
per swap I/O (executions of the first instruction of swap_readpage()
plus swap_writepage(), as in report.md), and the function's total: the
way to see which lines of a function the difference in report.md comes
from.  --per ENTRY divides by the executions of ENTRY's first
instruction instead (--per __x64_sys_pread64 for INSN_BENCH=zramfio:
per read).  Needs binutils' objdump.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insnprof  # noqa: E402


def main(argv):
    per = insnprof.ENTRIES
    what = 'swap I/O'
    if argv[:1] == ['--per'] and len(argv) > 1:
        per, what, argv = (argv[1],), f'call of {argv[1]}', argv[2:]
    if len(argv) < 3:
        sys.exit(__doc__)
    obj, tb, funcs = argv[0], argv[1], argv[2:]
    smap = insnprof.SymMap(os.path.join(obj, 'System.map'))
    counts = insnprof.read_tb(tb)
    nio = sum(insnprof.entries(smap, counts, fn) for fn in per)
    if not nio:
        sys.exit(f'insn-annotate: no {what} in {tb}')
    for fn in funcs:
        if fn not in smap.by_name:
            sys.exit(f'insn-annotate: no {fn} in {obj}/System.map')
        start = smap.by_name[fn]
        i = smap.addrs.index(start)
        while i + 1 < len(smap.addrs) and smap.addrs[i + 1] == start:
            i += 1
        stop = smap.addrs[i + 1] if i + 1 < len(smap.addrs) else start + 4096
        dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn',
                              f'--start-address={start:#x}', f'--stop-address={stop:#x}',
                              os.path.join(obj, 'vmlinux')],
                             capture_output=True, text=True, check=True).stdout
        total = 0.0
        print(f'== {fn} ({nio} executions of {"/".join(per)})')
        for line in dis.splitlines():
            head = line.split(':', 1)[0].strip()
            try:
                va = int(head, 16)
            except ValueError:
                continue
            n = counts.get(va, 0) / nio
            total += n
            print(f'{n:8.2f} {line.strip()}')
        print(f'{total:8.2f} total per {what}\n')


if __name__ == '__main__':
    main(sys.argv[1:])
