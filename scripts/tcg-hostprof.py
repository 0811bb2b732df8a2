#!/usr/bin/env python3
"""Report of scripts/tcg-hostprof.sh: host CPU samples per guest read.

usage: tcg-hostprof.py DIR [--command TEXT] [--top N]

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
Writes DIR/report.md: per boot, samples per 1000 reads by bucket class;
the median per kernel and B/A; with logs, the guest functions and QEMU
symbols whose samples per 1000 reads differ most.
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
MMAP = re.compile(r'PERF_RECORD_MMAP2? .*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ 0x([0-9a-f]+)'
                  r'.*\]: (\S+) \S*qemu-system')


def tb_map(path):
    """Sorted host code start addresses and, for each, the guest address
    it was translated from (None: QEMU's prologue, 'slow': a TB's slow
    paths, 'data': constants).  QEMU 7.2 logs each TB's guest
    instructions in full under IN: and then, under OUT:, each one's host
    code after a "-- guest addr" line that gives only the page offset:
    the n-th such line belongs to the n-th instruction under IN:."""
    starts, guest = [], []
    sec, ins, idx, cur, want = None, [], -1, None, False
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
                sec, idx = 'out', -1
            elif line.startswith('PROLOGUE'):
                sec, cur, want = 'pro', None, True
            elif line.startswith('  -- guest addr '):
                idx += 1
                cur, want = (ins[idx] if idx < len(ins) else None), True
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
        elif 'qemu-system' in dso:
            if sym == '[unknown]':
                # Debian's QEMU is stripped of its static functions: name
                # the 256-byte block of the binary (objdump -d shows it).
                va = int(p[0], 16)
                sym = '[qemu]'
                for b, e, off in qemu_text:
                    if b <= va < e:
                        sym = f'[qemu {(va - b + off) & ~0xff:#x}]'
            out['qemu: ' + sym.split('+')[0]] += 1
        elif '/lib' in dso and '.so' in dso:
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


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--command', default='')
    ap.add_argument('--top', type=int, default=30)
    a = ap.parse_args(argv)
    kern = dict(l.split(None, 1) for l in open(os.path.join(a.dir, 'kernels')).read().splitlines())
    smaps = {k: insnprof.SymMap(os.path.join(v.strip(), 'System.map')) for k, v in kern.items()}
    boots = {}
    for f in sorted(os.listdir(a.dir)):
        m = re.match(r'^([AB])-(\d+)\.perf$', f)
        if not m:
            continue
        k, r = m.group(1), int(m.group(2))
        base = os.path.join(a.dir, f'{k}-{r}')
        iops = reads = None
        with open(base + '.log', errors='replace') as lf:
            for line in lf:
                q = line.split()
                if len(q) == 3 and q[0] == 'BENCH' and q[1] == 'zramsteady.read_iops':
                    iops = float(q[2])
                if len(q) == 2 and q[0] == 'HOSTPROF-READS':
                    reads = float(q[1])
        if not iops or not reads:
            print(f'tcg-hostprof: warning: {k}-{r}: no IOPS or HOSTPROF-READS line, boot left out',
                  file=sys.stderr)
            continue
        asm = base + '.asm' if os.path.exists(base + '.asm') else None
        c = buckets(os.path.join(a.dir, f), asm, smaps[k])
        boots[(k, r)] = (iops, {b: v / reads * 1000 for b, v in c.items()})
    if not any(k == 'A' for k, _ in boots) or not any(k == 'B' for k, _ in boots):
        print('tcg-hostprof: error: no usable boot of A or of B', file=sys.stderr)
        return 1
    logged = any(os.path.exists(os.path.join(a.dir, f'{k}-{r}.asm')) for k, r in boots)
    classes = ['guest', 'qemu', 'host kernel', 'library']
    L = [f'# Host CPU per guest read under QEMU TCG, A against B', '',
         f'Command: {a.command}', f'A: {kern["A"].strip()}', f'B: {kern["B"].strip()}', '',
         'perf record -e cpu-clock at 4999 Hz on the QEMU process while the guest',
         'runs only buffered 4 KiB random reads on zram (benchmarks/guest/zramsteady.sh);',
         'samples per 1000 reads (one sample is about 0.2 ms of one host CPU).',
         'guest = translated guest code, qemu = QEMU\'s own code.'
         + (' QEMU logged every translation (HOSTPROF_LOG=1): translation is slower,'
            ' and the log\'s writing is counted under qemu and library.' if logged else ''), '',
         '| boot | IOPS | total | ' + ' | '.join(classes) + ' |',
         '|---|---:|---:|' + '---:|' * len(classes)]
    per = collections.defaultdict(list)
    for (k, r), (iops, b) in sorted(boots.items(), key=lambda x: (x[0][1], x[0][0])):
        cs = {c: sum(v for x, v in b.items() if cls(x) == c) for c in classes}
        tot = sum(b.values())
        per[k].append((iops, tot, cs, b))
        L.append(f'| {k}-{r} | {iops:.0f} | {tot:.1f} | ' + ' | '.join(f'{cs[c]:.1f}' for c in classes) + ' |')
    L += ['', '| median | A | B | B/A |', '|---|---:|---:|---:|']

    def med(k, f):
        return statistics.median(f(x) for x in per[k])
    rows = [('IOPS', lambda x: x[0]), ('samples per 1000 reads', lambda x: x[1])]
    rows += [(c, (lambda c: lambda x: x[2][c])(c)) for c in classes]
    for name, f in rows:
        ma, mb = med('A', f), med('B', f)
        L.append(f'| {name} | {ma:.1f} | {mb:.1f} | {mb / ma if ma else float("nan"):.3f} |')
    allb = set()
    for k in per:
        for x in per[k]:
            allb |= set(x[3])
    diff = []
    for b in allb:
        ma = statistics.mean(x[3].get(b, 0) for x in per['A'])
        mb = statistics.mean(x[3].get(b, 0) for x in per['B'])
        diff.append((mb - ma, b, ma, mb))
    diff.sort(key=lambda d: -abs(d[0]))
    L += ['', f'Buckets whose samples per 1000 reads differ most (mean over boots; {a.top} rows):', '',
          '| bucket | A | B | B-A |', '|---|---:|---:|---:|']
    for d, b, ma, mb in diff[:a.top]:
        L.append(f'| {b} | {ma:.3f} | {mb:.3f} | {d:+.3f} |')
    with open(os.path.join(a.dir, 'report.md'), 'w') as f:
        f.write('\n'.join(L) + '\n')
    print('\n'.join(L))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
