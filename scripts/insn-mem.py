#!/usr/bin/env python3
"""Memory accesses and model TLB misses per call, kernel A against B.

usage: insn-mem.py [--per ENTRY] [--top N] OBJDIR_A RUN_A.tb OBJDIR_B RUN_B.tb

Reads the RUN.tb.mem files that the insnprof plugin writes with mem=BITS
(make insn-profile INSN_MEM=BITS) beside each RUN.tb, and prints, per
call of ENTRY (default: one swap I/O, the executions of the first
instruction of swap_readpage() plus swap_writepage(); for INSN_BENCH=
zramfio --per ksys_pread64 or __x64_sys_pread64), the memory accesses
made by kernel code and by user code in the window, with the misses of
the plugin's model TLB, then the N kernel functions (default 40) whose
accesses or misses per call differ most, by at least 0.5.  The model (see
scripts/insnprof.c) is warm, never flushed and not QEMU's TLB itself: its
misses are the conflicts of a TLB of that size, which move with the
layout of memory between boots by about one per call in a function, so
compare them between runs, not between single boots.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insnprof  # noqa: E402


def read_mem(path):
    """(tlb bits, victim entries, {address: (accesses, misses)})."""
    head, rows = None, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.split()
            if not p:
                continue
            if p[0] == '#':
                if p[1:2] == ['insnprof-mem']:
                    if len(p) != 7 or p[2] != '1' or p[3] != 'tlb-bits' or p[5] != 'victim':
                        raise insnprof.ProfileError(f'{path}: unknown header {line.strip()!r}')
                    head = (int(p[4]), int(p[6]))
                continue
            try:
                if len(p) != 3:
                    raise ValueError
                rows[int(p[0], 16)] = (int(p[1]), int(p[2]))
            except ValueError:
                raise insnprof.ProfileError(f'{path}:{n}: not "address accesses misses": '
                                            f'{line.strip()!r}') from None
    if head is None:
        raise insnprof.ProfileError(f'{path}: not written by insnprof.c with mem=')
    return head[0], head[1], rows


def load(obj, tb, per):
    smap = insnprof.SymMap(os.path.join(obj, 'System.map'))
    counts = insnprof.read_tb(tb)
    fns = (per,) if per else insnprof.ENTRIES
    n = sum(insnprof.entries(smap, counts, e) for e in fns)
    if not n:
        raise insnprof.ProfileError(f'{tb}: no executions of {"/".join(fns)}')
    ksyms = insnprof.load_ksyms(tb[:-3] + '.log')
    bits, victim, rows = read_mem(tb + '.mem')
    fn = {}
    for va, (m, x) in rows.items():
        e = fn.setdefault(insnprof.name_of(va, smap, ksyms), [0, 0])
        e[0] += m
        e[1] += x
    return (bits, victim), n, fn


def main(argv):
    per, top = None, 40
    while argv and argv[0].startswith('--'):
        if argv[0] == '--per' and len(argv) > 1:
            per, argv = argv[1], argv[2:]
        elif argv[0] == '--top' and len(argv) > 1 and argv[1].isdigit():
            top, argv = int(argv[1]), argv[2:]
        else:
            break
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        ba, na, fa = load(argv[0], argv[1], per)
        bb, nb, fb = load(argv[2], argv[3], per)
    except (insnprof.ProfileError, OSError, ValueError) as e:
        print(f'insn-mem: error: {e}', file=sys.stderr)
        return 1
    if ba != bb:
        print(f'insn-mem: error: model TLBs differ (A {ba[0]} bits + {ba[1]} victim, '
              f'B {bb[0]} bits + {bb[1]} victim)', file=sys.stderr)
        return 1
    unit = f'per call of {per}' if per else 'per swap I/O'
    print(f'# memory accesses and model TLB misses ({1 << ba[0]} entries + {ba[1]} victim), {unit}')
    print(f'# A: {na} calls, B: {nb} calls\n')

    def tot(f, kernel):
        return [sum(v[i] for k, v in f.items() if (k != '[user space]') == kernel)
                for i in (0, 1)]

    print('| | accesses A | B | diff | misses A | B | diff |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    for label, kernel in (('kernel code', True), ('user code', False)):
        a, b = tot(fa, kernel), tot(fb, kernel)
        print(f'| {label} | {a[0] / na:.1f} | {b[0] / nb:.1f} | {b[0] / nb - a[0] / na:+.1f} '
              f'| {a[1] / na:.2f} | {b[1] / nb:.2f} | {b[1] / nb - a[1] / na:+.2f} |')
    print('\n| function | accesses A | B | diff | misses A | B | diff |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    rows = []
    for k in set(fa) | set(fb):
        a, b = fa.get(k, [0, 0]), fb.get(k, [0, 0])
        dm, dx = b[0] / nb - a[0] / na, b[1] / nb - a[1] / na
        if abs(dm) >= 0.5 or abs(dx) >= 0.5:
            rows.append((dx, dm, k, a, b))
    rows.sort(key=lambda r: (-abs(r[0]), -abs(r[1])))
    for dx, dm, k, a, b in rows[:top]:
        print(f'| {k} | {a[0] / na:.1f} | {b[0] / nb:.1f} | {dm:+.1f} '
              f'| {a[1] / na:.2f} | {b[1] / nb:.2f} | {dx:+.2f} |')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
