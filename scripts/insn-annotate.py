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

--kinds (first argument) prints, instead of functions, how many of the
window's executed instructions per swap I/O (or per ENTRY) are of each
kind: direct and indirect calls and jumps (a call or jump to a retpoline
thunk counts as indirect), returns (ret, or a jump to the return thunk),
returns to user space, lock-prefixed instructions, conditional branches
and the rest, with the __fentry__ and paravirt call sites (rewritten at
boot) apart, the bytes the boot-time patching left where objdump lists
other instructions, and user space as one row.  Under QEMU TCG an
indirect branch or return leaves the translated block through a lookup,
so two kernels that differ in these rows differ in emulation cost more
than their instruction counts say.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insnprof  # noqa: E402


def disassemble(obj, start, stop):
    """objdump's instructions of OBJ/vmlinux in [START, STOP): (address, line)."""
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn',
                          f'--start-address={start:#x}', f'--stop-address={stop:#x}',
                          os.path.join(obj, 'vmlinux')],
                         capture_output=True, text=True, check=True).stdout
    for line in dis.splitlines():
        head, sep, _ = line.partition(':')
        try:
            va = int(head.strip(), 16)
        except ValueError:
            continue
        if sep:
            yield va, line.strip()


PREFIXES = ('cs', 'ds', 'notrack', 'bnd')
THUNK = re.compile(r'<__x86_indirect_thunk_\w+>')


def kind_of(insn):
    """The kind of one objdump instruction text (see --kinds)."""
    words = insn.split()
    while words and words[0] in PREFIXES:
        words = words[1:]
    if not words:
        return 'other'
    op = words[0]
    if op in ('callq', 'jmpq', 'retq'):	# older binutils
        op = op[:-1]
    rest = ' '.join(words[1:])
    if op == 'call' and '<__fentry__>' in rest:
        return 'fentry call site (a NOP at run time)'
    if op == 'call' and 'pv_ops' in rest:
        return 'paravirt call site (patched at boot)'
    if op == 'ret' or (op == 'jmp' and '<__x86_return_thunk>' in rest):
        return 'return'
    if op in ('sysret', 'sysretq', 'sysretl', 'iret', 'iretq', 'iretl'):
        return 'return to user space'
    # a retpoline's own call into itself (thunk+offset) is not a call site
    indirect = rest.startswith('*') or THUNK.search(rest)
    if op == 'call':
        return 'indirect call' if indirect else 'direct call'
    if op == 'jmp':
        return 'indirect jump' if indirect else 'direct jump'
    if op == 'lock':
        return 'lock-prefixed'
    if op.startswith('j'):
        return 'conditional branch'
    return 'other'


def kinds(obj, smap, counts, nio, what):
    """Print the executed instructions per I/O by kind (--kinds)."""
    addrs = sorted(a for a in counts if a >= insnprof.USER_TOP)
    tot = {}
    if addrs:
        for va, line in disassemble(obj, addrs[0], addrs[-1] + 16):
            if va in counts:
                k = kind_of(line.partition(':')[2].strip())
                tot[k] = tot.get(k, 0) + counts.pop(va)
    for va, n in counts.items():
        if va < insnprof.USER_TOP:
            k = 'user space'
        elif smap.in_text(va):
            k = 'vmlinux text objdump does not list (patched at boot)'
        else:
            k = 'outside vmlinux (modules, trampolines)'
        tot[k] = tot.get(k, 0) + n
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
        kinds(obj, smap, counts, nio, what)
        return
    for fn in funcs:
        if fn not in smap.by_name:
            sys.exit(f'insn-annotate: no {fn} in {obj}/System.map')
        start = smap.by_name[fn]
        i = smap.addrs.index(start)
        while i + 1 < len(smap.addrs) and smap.addrs[i + 1] == start:
            i += 1
        stop = smap.addrs[i + 1] if i + 1 < len(smap.addrs) else start + 4096
        total = 0.0
        print(f'== {fn} ({nio} executions of {"/".join(per)})')
        for va, line in disassemble(obj, start, stop):
            n = counts.get(va, 0) / nio
            total += n
            print(f'{n:8.2f} {line}')
        print(f'{total:8.2f} total per {what}\n')


if __name__ == '__main__':
    main(sys.argv[1:])
