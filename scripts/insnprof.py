#!/usr/bin/env python3
"""Turn insnprof plugin output into per-function instruction counts and
compare two kernels.

usage: insnprof.py OUT.md A_NAME A_SYSTEM_MAP B_NAME B_SYSTEM_MAP DEV...
For each DEV it reads DEV-A.tb, DEV-B.tb (plugin output) and DEV-A.log,
DEV-B.log (guest console with the swaplat BENCH lines) from the directory
of OUT.md.  Instructions are divided by the number of swap I/Os (calls of
swap_readpage() plus swap_writepage()) in the window.
"""
import bisect
import os
import sys

MIN_DIFF = 2.0	# instructions per swap I/O below which a row is left out

# Stages of a swap I/O, for the summary by stage: a function belongs to the
# first stage that names it (a name ending in * is a prefix).  Inlining
# decides which function an instruction is counted in, so the stages are
# only as sharp as the compiler's choices.
STAGES = [
    ('swap: build the I/O, end page state',
     ['swap_writepage_bdev_sync', 'swap_readpage_bdev_sync', '__swap_writepage',
      '__end_swap_bio_write', '__end_swap_bio_read', 'bio_init', '__bio_add_page',
      'thp_size', 'wbc_to_write_flags', 'count_vm_events', 'end_page_writeback',
      '_compound_head', 'compound_order']),
    ('blk-cgroup: associate and release',
     ['swap_bio_set_dev*', 'bio_associate_blkg*', 'cgroup_e_css', 'page_memcg', 'kthread_blkcg',
      'percpu_ref_get', 'blkcg_css', 'bio_uninit']),
    ('block: submit (checks, bio lists, queue enter)',
     ['submit_bio', 'submit_bio_noacct', 'submit_bio_noacct_nocheck', '__submit_bio',
      'should_fail_bio', 'should_fail_request', 'blk_cgroup_bio_start',
      'bio_queue_enter']),
    ('block: complete and wait',
     ['bio_endio', 'submit_bio_wait', 'submit_bio_wait_endio',
      '__init_swait_queue_head', 'blk_status_to_errno']),
    ('mm: LRU rotation after writeback', ['folio_rotate_reclaimable']),
    ('rw_page: bdev_*_page, queue enter/exit, page_endio',
     ['bdev_read_page', 'bdev_write_page', 'blk_queue_enter', 'blk_queue_exit',
      'page_endio', 'clean_buffers', 'clean_page_buffers']),
    ('driver: ->submit_bio or ->rw_page and its copy',
     ['zram_*', 'brd_*', 'pmem_*', 'btt_*', 'bio_start_io_acct', 'bio_end_io_acct*']),
]


def stage_of(fn):
    for name, fns in STAGES:
        for f in fns:
            if fn == f or (f.endswith('*') and fn.startswith(f[:-1])):
                return name
    return 'everything else (noise: user space, entropy, ...)'


def load_map(path):
    syms = []
    with open(path) as f:
        for line in f:
            addr, typ, name = line.split()[:3]
            if typ in 'tTwW':
                syms.append((int(addr, 16), name))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def per_function(smap, tb):
    """{function: [instructions, calls]} over all windows."""
    addrs, names = smap
    out = {}
    with open(tb) as f:
        for line in f:
            if line.startswith('#'):
                continue
            va, n, c = (int(x, 16 if i == 0 else 10) for i, x in enumerate(line.split()))
            i = -1
            if va < 1 << 47:
                name = '[user space]'
            else:
                i = bisect.bisect_right(addrs, va) - 1
                name = names[i] if i >= 0 and va >= 0xffffffff80000000 else '[other kernel]'
            e = out.setdefault(name, [0, 0])
            e[0] += n * c
            if i >= 0 and va == addrs[i]:
                e[1] += c
    return out


def bench_lines(log):
    vals = {}
    with open(log, errors='replace') as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == 'BENCH':
                vals[p[1].split('.', 1)[1]] = float(p[2])
    return vals


def main():
    out, an, amap, bn, bmap = sys.argv[1:6]
    devs = sys.argv[6:]
    d = os.path.dirname(os.path.abspath(out))
    maps = {'A': load_map(amap), 'B': load_map(bmap)}
    lines = [f'# Instructions per swap I/O, A={an} B={bn}', '',
             'QEMU TCG with -icount shift=0 and the insnprof plugin (scripts/insnprof.c):',
             'every instruction the guest executed while swaplat ran, attributed to the',
             'kernel function (System.map) its translation block starts in, divided by',
             'the swap I/Os of the window (swap_readpage() + swap_writepage() calls).',
             'swap-in and swap-out are instructions per call from the function profiler,',
             'as in make bench ICOUNT=1.  Rows differ by at least %.0f per I/O.' % MIN_DIFF, '']
    summary = ['| device | swap-in A | swap-in B | diff | swap-out A | swap-out B | diff | window per I/O A | B | diff |',
               '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    body = []
    alldiff = {}	# device -> {function: B - A per I/O}, every function
    done = []
    for dev in devs:
        prof, bench = {}, {}
        for k in 'AB':
            tb = os.path.join(d, f'{dev}-{k}.tb')
            log = os.path.join(d, f'{dev}-{k}.log')
            if not (os.path.exists(tb) and os.path.exists(log)):
                print(f'insnprof: no data for {dev} {k}', file=sys.stderr)
                break
            prof[k] = per_function(maps[k], tb)
            bench[k] = bench_lines(log)
        if len(prof) < 2:
            continue
        nio = {k: bench[k].get('swapin_calls', 0) + bench[k].get('swapout_calls', 0) for k in 'AB'}
        if not all(nio.values()):
            print(f'insnprof: {dev}: no swap calls in the log', file=sys.stderr)
            continue
        tot = {k: sum(v[0] for v in prof[k].values()) / nio[k] for k in 'AB'}
        si = [bench[k].get('swapin_us', 0) * 1000 for k in 'AB']
        so = [bench[k].get('swapout_us', 0) * 1000 for k in 'AB']
        summary.append(f'| {dev} | {si[0]:.0f} | {si[1]:.0f} | {si[1]-si[0]:+.0f} | {so[0]:.0f} | {so[1]:.0f} | {so[1]-so[0]:+.0f} '
                       f'| {tot["A"]:.0f} | {tot["B"]:.0f} | {tot["B"]-tot["A"]:+.0f} |')
        rows = []
        alldiff[dev] = {}
        for fn in set(prof['A']) | set(prof['B']):
            a = prof['A'].get(fn, [0, 0])
            b = prof['B'].get(fn, [0, 0])
            ia, ib = a[0] / nio['A'], b[0] / nio['B']
            alldiff[dev][fn] = ib - ia
            if abs(ib - ia) >= MIN_DIFF:
                rows.append((ib - ia, fn, ia, ib, a[1] / nio['A'], b[1] / nio['B']))
        rows.sort(key=lambda r: (-r[0], r[1]))
        done.append(dev)
        body += ['', f'## {dev}: {int(nio["A"])} swap I/Os in A, {int(nio["B"])} in B', '',
                 '| function | A insns/I/O | B insns/I/O | diff | A calls/I/O | B calls/I/O |',
                 '|---|---:|---:|---:|---:|---:|']
        for diff, fn, ia, ib, ca, cb in rows:
            body.append(f'| {fn} | {ia:.1f} | {ib:.1f} | {diff:+.1f} | {ca:.2f} | {cb:.2f} |')
        rest = (tot['B'] - tot['A']) - sum(r[0] for r in rows)
        body.append(f'| (all other rows) | | | {rest:+.1f} | | |')
    cross = ['', '## B - A per swap I/O, all devices', '',
             'Per function, the difference in instructions per swap I/O on each device',
             '(empty: under %.0f).' % MIN_DIFF, '',
             '| function | ' + ' | '.join(done) + ' |',
             '|---|' + '---:|' * len(done)]
    shown = {}	# function -> {device: diff}, the rows of the per-device tables
    for dev in done:
        for fn, v in alldiff[dev].items():
            if abs(v) >= MIN_DIFF:
                shown.setdefault(fn, {})[dev] = v
    order = sorted(shown, key=lambda fn: (-sum(shown[fn].values()) / len(done), fn))
    for fn in order:
        cross.append(f'| {fn} | ' + ' | '.join(f'{shown[fn][d]:+.1f}' if d in shown[fn] else ''
                                              for d in done) + ' |')
    names = [n for n, _ in STAGES] + [stage_of('')]
    bystage = {n: {d: 0.0 for d in done} for n in names}
    for dev in done:
        for fn, v in alldiff[dev].items():
            bystage[stage_of(fn)][dev] += v
    stages = ['', '## B - A per swap I/O, by stage', '',
              'Every function counted (no threshold), grouped as in STAGES in scripts/insnprof.py.', '',
              '| stage | ' + ' | '.join(done) + ' |', '|---|' + '---:|' * len(done)]
    for n in names:
        stages.append(f'| {n} | ' + ' | '.join(f'{bystage[n][d]:+.0f}' for d in done) + ' |')
    stages.append('| total | ' + ' | '.join(f'{sum(bystage[n][d] for n in names):+.0f}' for d in done) + ' |')
    with open(out, 'w') as f:
        f.write('\n'.join(lines + summary + stages + cross + body) + '\n')


if __name__ == '__main__':
    main()
