#!/usr/bin/env python3
"""Report of scripts/tcg-hostprof.sh: host CPU samples per guest read.

usage: tcg-hostprof.py DIR [--rounds N] [--smp N] [--command TEXT] [--top N]

DIR holds, per boot ID-ROUND (ID is A or B), the console log (with the
"HOSTPROF-READS" line, the reads the disk completed in the sampled
window, and "BENCH zramsteady.read_iops"), the perf data (ID-ROUND.perf)
and, with HOSTPROF_LOG=1, QEMU's in_asm,out_asm log (ID-ROUND.asm);
DIR/kernels names A's and B's build directories.  Each sample is put
in one bucket: translated guest code (with a log: the guest function it
was translated from, found from the TB's guest addresses and System.map;
"[slow path]" for a TB's out-of-line code), QEMU's own code by symbol
(code without one, Debian's QEMU being stripped of its static functions,
by its 256-byte block of the binary, "[qemu 0x7d8600]", for objdump -d),
the host kernel, or a library.
Writes DIR/report.md: per boot, reads per second in the window, fio's
IOPS and samples per 1000 reads by bucket class; the median per kernel
and B/A; the buckets whose samples per 1000 reads differ most.  A boot
without perf data, BENCH-DONE or its window's lines, or with a kernel
report, and with --rounds N any of the N boots per kernel that has no
console log, is left out and named: the exit status is then 3 (1 when
A or B has no usable boot at all).
"""
import argparse
import bisect
import collections
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insnprof  # noqa: E402

HOST = re.compile(r'^0x([0-9a-f]+):')
# perf prints a zero file offset as "@ 0" (printf's %#x), others as "@ 0x..."
MMAP = re.compile(r'PERF_RECORD_MMAP2? .*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+)'
                  r'.*\]: (\S+) \S*qemu-system')


def tb_map(path):
    """Sorted host code start addresses and, for each, the guest address
    it was translated from (None: QEMU's prologue, 'slow': a TB's slow
    paths, 'data': constants).  QEMU 7.2 logs each TB's guest
    instructions in full under IN: and then, under OUT:, each one's host
    code after a "-- guest addr" line that gives only its page offset
    (with pc-relative translation blocks) and that is left out for an
    instruction that made no host code: each line belongs to the next
    instruction under IN: whose address has that page offset."""
    starts, guest = [], []
    sec, ins, idx, cur, want = None, [], 0, None, False
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('IN:'):
                sec, ins = 'in', []
                continue
            if sec == 'in':
                m = HOST.match(line)
                if m:
                    ins.append(int(m.group(1), 16))
                    continue
                if not line.strip():
                    continue
            if line.startswith('OUT:'):
                sec, idx = 'out', 0
            elif line.startswith('PROLOGUE'):
                sec, cur, want = 'pro', None, True
            elif line.startswith('  -- guest addr '):
                off = int(line.split()[3], 16) & 0xfff
                while idx < len(ins) and ins[idx] & 0xfff != off:
                    idx += 1
                cur, want = (ins[idx] if idx < len(ins) else None), True
                idx += 1
            elif line.startswith('  -- tb slow paths'):
                cur, want = 'slow', True
            elif line.startswith('  data:'):
                cur, want = 'data', True
            elif want:
                m = HOST.match(line)
                if m:
                    starts.append(int(m.group(1), 16))
                    guest.append(cur)
                    want = False
    order = sorted(range(len(starts)), key=starts.__getitem__)
    return [starts[i] for i in order], [guest[i] for i in order]


def buckets(perf, asm, smap):
    """Counter of bucket -> samples for one boot."""
    text = subprocess.run(['perf', 'script', '--show-mmap-events', '-F', 'ip,sym,dso', '-i', perf],
                          capture_output=True, text=True, check=True).stdout
    starts, guest = tb_map(asm) if asm else ([], [])
    out = collections.Counter()
    qemu_text = []	# (start, end, file offset) of QEMU's executable mappings
    for line in text.splitlines():
        if 'PERF_RECORD_' in line:
            m = MMAP.search(line)
            if m and 'x' in m.group(4):
                b, n, off = (int(m.group(i), 16) for i in (1, 2, 3))
                qemu_text.append((b, b + n, off))
            continue
        p = line.split()
        if len(p) < 2:
            continue
        dso = p[-1].strip('()')
        sym = ' '.join(p[1:-1]) if len(p) > 2 else '[unknown]'
        if 'kallsyms' in dso or dso.startswith('[kernel'):
            out['host kernel'] += 1
        elif 'qemu-system' in dso or '/qemu/' in dso:
            if sym == '[unknown]':
                # Debian's QEMU is stripped of its static functions: name
                # the 256-byte block of the binary (objdump -d shows it).
                va = int(p[0], 16)
                sym = '[qemu]'
                for b, e, off in qemu_text:
                    if b <= va < e:
                        sym = f'[qemu {(va - b + off) & ~0xff:#x}]'
            out['qemu: ' + sym.split('+')[0]] += 1
        elif ('/lib' in dso and '.so' in dso) or dso == '[vdso]':
            out['library: ' + os.path.basename(dso)] += 1
        else:
            out['guest: ' + guest_bucket(starts, guest, int(p[0], 16), smap)] += 1
    return out


def guest_bucket(starts, guest, va, smap):
    """The bucket of a sample at host address VA in translated code."""
    i = bisect.bisect_right(starts, va) - 1
    if not starts or i < 0 or va - starts[i] > 65536:
        return '[translated code]'
    g = guest[i]
    if g is None or g == 'data':
        return '[qemu prologue/data]'
    if g == 'slow':
        return '[slow path]'
    return insnprof.name_of(g, smap)


def cls(b):
    return b.split(':')[0] if ':' in b else b


REPORT = re.compile(r'BUG:|WARNING:|Oops|Kernel panic')


def read_boot(base):
    """(window seconds, reads in it, fio IOPS, why it is left out or None)
    from one boot's console log."""
    win = reads = iops = None
    done = report = False
    with open(base + '.log', errors='replace') as lf:
        for line in lf:
            q = line.split()
            if len(q) == 2 and q[0] == 'HOSTPROF-WINDOW' and q[1].isdigit():
                win = int(q[1])
            elif len(q) == 2 and q[0] == 'HOSTPROF-READS' and q[1].isdigit():
                reads = int(q[1])
            elif len(q) == 3 and q[0] == 'BENCH' and q[1] == 'zramsteady.read_iops':
                iops = float(q[2])
            elif line.startswith('BENCH-DONE'):
                done = True
            elif REPORT.search(line):
                report = line.strip()[:100]
    why = None
    if not os.path.exists(base + '.perf'):
        err = ''
        if os.path.exists(base + '.perf.err'):
            err = open(base + '.perf.err', errors='replace').read().strip()[:100]
        why = 'no perf data: ' + (err or 'no window, no QEMU process or perf failed')
    elif not done:
        why = 'the boot did not finish (no BENCH-DONE)'
    elif report:
        why = f'kernel report: {report}'
    elif not win or not reads:
        why = 'no HOSTPROF-WINDOW or HOSTPROF-READS line'
    return win, reads, iops, why


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--command', default='')
    ap.add_argument('--rounds', type=int, default=0, help='boots expected per kernel')
    ap.add_argument('--smp', default='2')
    ap.add_argument('--top', type=int, default=30)
    a = ap.parse_args(argv)
    kern = dict(l.split(None, 1) for l in open(os.path.join(a.dir, 'kernels')).read().splitlines())
    smaps = {k: insnprof.SymMap(os.path.join(v.strip(), 'System.map')) for k, v in kern.items()}
    boots, left = {}, []
    seen = set()
    for f in sorted(os.listdir(a.dir)):
        m = re.match(r'^([AB])-(\d+)\.log$', f)
        if not m:
            continue
        k, r = m.group(1), int(m.group(2))
        seen.add((k, r))
        base = os.path.join(a.dir, f'{k}-{r}')
        win, reads, iops, why = read_boot(base)
        if why:
            left.append(f'{k}-{r}: {why}')
            continue
        asm = base + '.asm' if os.path.exists(base + '.asm') else None
        c = buckets(base + '.perf', asm, smaps[k])
        boots[(k, r)] = (reads / win, iops, {b: v / reads * 1000 for b, v in c.items()})
    for k in 'AB':
        for r in range(1, a.rounds + 1):
            if (k, r) not in seen:
                left.append(f'{k}-{r}: no console log')
    for w in left:
        print(f'tcg-hostprof: warning: boot {w}: left out', file=sys.stderr)
    if not any(k == 'A' for k, _ in boots) or not any(k == 'B' for k, _ in boots):
        print('tcg-hostprof: error: no usable boot of A or of B', file=sys.stderr)
        return 1
    logged = any(os.path.exists(os.path.join(a.dir, f'{k}-{r}.asm')) for k, r in boots)
    n = {k: sum(1 for kk, _ in boots if kk == k) for k in 'AB'}
    classes = ['guest', 'qemu', 'host kernel', 'library']
    L = ['# Host CPU per guest read under QEMU TCG, A against B', '',
         f'Command: {a.command}', f'A: {kern["A"].strip()}', f'B: {kern["B"].strip()}', '',
         f'perf record -e cpu-clock at 4999 Hz on the QEMU process ({a.smp} vCPUs) while',
         'the guest runs only buffered 4 KiB random reads on zram',
         '(benchmarks/guest/zramsteady.sh); samples per 1000 reads the disk completed',
         'in the sampled window (one sample is about 0.2 ms of one host CPU).',
         'guest = translated guest code, qemu = QEMU\'s own code.  No interval: '
         'a tool for explaining, not a benchmark.'
         + (' QEMU logged every translation (HOSTPROF_LOG=1): translation is slower,'
            ' and the log\'s writing is counted under qemu, library and host kernel.'
            if logged else ''), '']
    if left:
        L += ['**Partial: boots left out:** ' + '; '.join(left), '']
    L += ['| boot | reads/s in window | fio IOPS | total | ' + ' | '.join(classes) + ' |',
          '|---|---:|---:|---:|' + '---:|' * len(classes)]
    per = collections.defaultdict(list)
    for (k, r), (rate, iops, b) in sorted(boots.items(), key=lambda x: (x[0][1], x[0][0])):
        cs = {c: sum(v for x, v in b.items() if cls(x) == c) for c in classes}
        tot = sum(b.values())
        per[k].append((rate, iops or 0, tot, cs, b))
        L.append(f'| {k}-{r} | {rate:.0f} | {iops or 0:.0f} | {tot:.1f} | '
                 + ' | '.join(f'{cs[c]:.1f}' for c in classes) + ' |')
    L += ['', f'| median (n = {n["A"]} A, {n["B"]} B boots) | A | B | B/A |', '|---|---:|---:|---:|']

    def med(k, f):
        return statistics.median(f(x) for x in per[k])
    rows = [('reads/s in window', lambda x: x[0]), ('fio IOPS (whole run)', lambda x: x[1]),
            ('samples per 1000 reads', lambda x: x[2])]
    rows += [(c, (lambda c: lambda x: x[3][c])(c)) for c in classes]
    for name, f in rows:
        ma, mb = med('A', f), med('B', f)
        L.append(f'| {name} | {ma:.1f} | {mb:.1f} | {mb / ma if ma else float("nan"):.3f} |')
    allb = set()
    for k in per:
        for x in per[k]:
            allb |= set(x[4])
    diff = []
    for b in allb:
        ma = statistics.mean(x[4].get(b, 0) for x in per['A'])
        mb = statistics.mean(x[4].get(b, 0) for x in per['B'])
        diff.append((mb - ma, b, ma, mb))
    diff.sort(key=lambda d: -abs(d[0]))
    L += ['', f'Buckets whose samples per 1000 reads differ most (mean over boots; {a.top} rows):', '',
          '| bucket | A | B | B-A |', '|---|---:|---:|---:|']
    for d, b, ma, mb in diff[:a.top]:
        L.append(f'| {b} | {ma:.3f} | {mb:.3f} | {d:+.3f} |')
    with open(os.path.join(a.dir, 'report.md'), 'w') as f:
        f.write('\n'.join(L) + '\n')
    print('\n'.join(L))
    return 3 if left else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
