#!/usr/bin/env python3
"""Annotate a kernel function's disassembly with exact execution counts.

usage: insn-annotate.py [--per ENTRY] OBJDIR RUN.tb FUNC [FUNC...]
       insn-annotate.py --kinds [--per ENTRY] OBJDIR RUN.tb

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

--kinds prints, instead of functions, how many of the window's executed
instructions per swap I/O (or per ENTRY) are of each kind: direct and
indirect calls and jumps, returns (ret, or a jump to the return thunk),
lock-prefixed instructions, conditional branches and the rest, with the
__fentry__ call sites (NOPs at run time) apart and user space as one
row.  Under QEMU TCG an indirect branch or return leaves the translated
block through a lookup, so two kernels that differ in these rows differ
in emulation cost more than their instruction counts say.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insnprof  # noqa: E402


KERNEL_BASE = 0xffffffff80000000


def kind_of(insn):
    """The kind of one objdump instruction text (see --kinds)."""
    op = insn.split()[0] if insn.split() else ''
    indirect = '*' in insn or 'indirect_thunk' in insn
    if op == 'call' and '<__fentry__>' in insn:
        return 'fentry call site (a NOP at run time)'
    if op.startswith('ret') or (op == 'jmp' and 'return_thunk' in insn):
        return 'return'
    if op == 'call':
        return 'indirect call' if indirect else 'direct call'
    if op == 'jmp':
        return 'indirect jump' if indirect else 'direct jump'
    if op == 'lock':
        return 'lock-prefixed'
    if op.startswith('j'):
        return 'conditional branch'
    return 'other'


def kinds(obj, counts, nio, what):
    """Print the executed instructions per I/O by kind (--kinds)."""
    addrs = sorted(a for a in counts if a >= KERNEL_BASE)
    tot = {}
    if addrs:
        dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn',
                              f'--start-address={addrs[0]:#x}',
                              f'--stop-address={addrs[-1] + 16:#x}',
                              os.path.join(obj, 'vmlinux')],
                             capture_output=True, text=True, check=True).stdout
        for line in dis.splitlines():
            head, sep, insn = line.partition(':')
            try:
                va = int(head.strip(), 16)
            except ValueError:
                continue
            if sep and va in counts:
                k = kind_of(insn.strip())
                tot[k] = tot.get(k, 0) + counts.pop(va)
    user = sum(n for a, n in counts.items() if a < KERNEL_BASE)
    rest = sum(n for a, n in counts.items() if a >= KERNEL_BASE)
    if user:
        tot['user space'] = user
    if rest:
        tot['kernel, not in vmlinux (modules, trampolines)'] = rest
    print(f'== executed instructions per {what}, by kind')
    for k in sorted(tot, key=lambda k: -tot[k]):
        print(f'{tot[k] / nio:10.1f} {k}')
    print(f'{sum(tot.values()) / nio:10.1f} total')


def main(argv):
    per = insnprof.ENTRIES
    what = 'swap I/O'
    by_kind = argv[:1] == ['--kinds']
    if by_kind:
        argv = argv[1:]
    if argv[:1] == ['--per'] and len(argv) > 1:
        per, what, argv = (argv[1],), f'call of {argv[1]}', argv[2:]
    if len(argv) < (2 if by_kind else 3):
        sys.exit(__doc__)
    obj, tb, funcs = argv[0], argv[1], argv[2:]
    smap = insnprof.SymMap(os.path.join(obj, 'System.map'))
    counts = insnprof.read_tb(tb)
    nio = sum(insnprof.entries(smap, counts, fn) for fn in per)
    if not nio:
        sys.exit(f'insn-annotate: no {what} in {tb}')
    if by_kind:
        kinds(obj, counts, nio, what)
        return
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
