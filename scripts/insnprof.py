#!/usr/bin/env python3
"""Turn insnprof plugin output into per-function instruction counts and
compare two kernels.

usage: insnprof.py OUT.md A_NAME A_SYSTEM_MAP B_NAME B_SYSTEM_MAP DEV...
       insnprof.py --incl OUT.md RUN A_NAME A_SYSTEM_MAP B_NAME B_SYSTEM_MAP FUNC...
The second form reads RUN-A.tb and RUN-B.tb, written with incl= (the
plugin's inclusive counts of FUNC..., in that order), and reports
instructions per call of each FUNC and of all of them together (one call
of each), A against B, then the per-function difference over the window
per call of the first FUNC.
For each DEV it reads DEV-A.tb, DEV-B.tb (plugin output: executions per
instruction address in the one measurement window) and DEV-A.log,
DEV-B.log (guest console) from the directory of OUT.md.  Instructions are
divided by the number of swap I/Os in the window: the executions of the
first instruction of swap_readpage() plus that of swap_writepage(), which
the plugin counted like any other instruction.

It fails (exit status 1, no report) unless every file is there and every
run had exactly one measurement window, opened and closed.

Attribution, by the address of each instruction:
  below 1 << 47                  [user space]
  kernel text (_stext.._etext, _sinittext.._einittext)
                                 the System.map text symbol at or below it
  the module area (MODULES_VADDR..MODULES_END, where module_alloc() puts
  modules, ftrace trampolines, kprobe slots and BPF programs)
                                 [ftrace] in a page of an ftrace_trampoline,
                                 "function [module]" for a module's text,
                                 both from the KSYM lines the guest prints
                                 (its /proc/kallsyms entries that carry a
                                 module name); else [modules]
  anything else                  [other kernel]
so an address past the end of the kernel's text is never given to the
last symbol of System.map.
"""
import bisect
import os
import sys

MIN_DIFF = 2.0	# instructions per swap I/O below which a row is left out
USER_TOP = 1 << 47
START_KERNEL_MAP = 0xffffffff80000000
MODULES_END = 0xffffffffff000000	# x86_64, 6.1, without DEBUG_KMAP_LOCAL_FORCE_MAP
PAGE = 4096
MOD_SYM_SPAN = 1 << 16	# a module address this far past its symbol is [modules]
ENTRIES = ('swap_readpage', 'swap_writepage')
PAGE_FAULT = 'asm_exc_page_fault'
HOOKS = ('[ftrace]', 'function_profile_call', 'profile_graph_entry', 'function_graph_enter')

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


class ProfileError(Exception):
    pass


def stage_of(fn):
    fn = fn.split(' [', 1)[0]	# "function [module]" counts as the function
    for name, fns in STAGES:
        for f in fns:
            if fn == f or (f.endswith('*') and fn.startswith(f[:-1])):
                return name
    return 'everything else (noise: user space, entropy, ...)'


class SymMap:
    """Text symbols of a System.map and the ranges they may be used in."""

    def __init__(self, path):
        syms, marks = [], {}
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3:
                    continue
                addr, typ, name = int(p[0], 16), p[1], p[2]
                if name in ('_stext', '_etext', '_sinittext', '_einittext', '_end'):
                    marks[name] = addr
                if typ in 'tTwW':
                    syms.append((addr, name))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]
        self.by_name = {}	# the first address of a name (static ones repeat)
        for a, n in syms:
            self.by_name.setdefault(n, a)
        if '_stext' not in marks or '_etext' not in marks:
            raise ProfileError(f'{path}: no _stext/_etext, not a kernel System.map')
        self.text = [(marks['_stext'], marks['_etext'])]
        if '_sinittext' in marks and '_einittext' in marks:
            self.text.append((marks['_sinittext'], marks['_einittext']))
        # MODULES_VADDR = __START_KERNEL_map + KERNEL_IMAGE_SIZE, which is
        # 1 GiB with CONFIG_RANDOMIZE_BASE and 512 MiB without.
        image = 512 << 20
        cfg = os.path.join(os.path.dirname(os.path.abspath(path)), '.config')
        if os.path.exists(cfg):
            with open(cfg) as f:
                if any(l.strip() == 'CONFIG_RANDOMIZE_BASE=y' for l in f):
                    image = 1 << 30
        self.modules = (START_KERNEL_MAP + image, MODULES_END)

    def in_text(self, va):
        for lo, hi in self.text:
            if lo <= va < hi:
                return lo
        return None


class KSyms:
    """The guest's KSYM lines: /proc/kallsyms entries with a module name."""

    def __init__(self, ents=()):
        self.ents = sorted(ents)	# (address, type, name, module)
        self.addrs = [e[0] for e in self.ents]
        self.starts = {e[0]: f'{e[2]} [{e[3]}]' for e in self.ents}


def load_ksyms(log):
    out = []
    if os.path.exists(log):
        with open(log, errors='replace') as f:
            for line in f:
                p = line.split()
                if len(p) == 5 and p[0] == 'KSYM' and p[4].startswith('['):
                    try:
                        out.append((int(p[1], 16), p[2], p[3], p[4].strip('[]')))
                    except ValueError:
                        pass
    return KSyms(out)


def attribute(va, smap, ksyms=KSyms()):
    """(name, True if va is the first instruction of that symbol)."""
    if va < USER_TOP:
        return '[user space]', False
    lo = smap.in_text(va)
    if lo is not None:
        i = bisect.bisect_right(smap.addrs, va) - 1
        if i >= 0 and smap.addrs[i] >= lo:
            return smap.names[i], smap.addrs[i] == va
        return '[other kernel]', False
    if smap.modules[0] <= va < smap.modules[1]:
        i = bisect.bisect_right(ksyms.addrs, va) - 1
        if i >= 0:
            a, typ, name, mod = ksyms.ents[i]
            if mod == '__builtin__ftrace' and va < a + PAGE:
                return '[ftrace]', False
            if not mod.startswith('__builtin__') and mod != 'bpf' and \
               typ in 'tT' and va - a < MOD_SYM_SPAN:
                return f'{name} [{mod}]', a == va
        return '[modules]', False
    return '[other kernel]', False


def name_of(va, smap, ksyms=KSyms()):
    return attribute(va, smap, ksyms)[0]


def read_tb(path):
    """{address: executions} of one plugin output; exactly one window."""
    if not os.path.exists(path):
        raise ProfileError(f'{path}: missing (the boot did not run or QEMU did not exit)')
    head, counts = {}, {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == '#':
                if len(p) >= 3:
                    head[p[1]] = p[2]
                continue
            if len(p) != 2:
                raise ProfileError(f'{path}: not per-instruction output: {line.strip()!r}')
            va, c = int(p[0], 16), int(p[1])
            counts[va] = counts.get(va, 0) + c
    if head.get('insnprof') != '2':
        raise ProfileError(f'{path}: not written by this insnprof.c (no "# insnprof 2")')
    if 'windows' not in head:
        raise ProfileError(f'{path}: no "# windows" line')
    w, o = int(head['windows']), int(head.get('open-at-exit', '0'))
    if w != 1 or o:
        raise ProfileError(f'{path}: {w} measurement window(s) opened'
                           + (', the last never closed' if o else '')
                           + '; a run must have exactly one, opened and closed')
    return counts


def per_function(smap, counts, ksyms=KSyms()):
    """{function: [instructions, calls]}; calls are executions of the
    function's first instruction."""
    out = {}
    for va, c in counts.items():
        name, entry = attribute(va, smap, ksyms)
        e = out.setdefault(name, [0, 0])
        e[0] += c
        if entry:
            e[1] += c
    return out


def entries(smap, counts, fn):
    a = smap.by_name.get(fn)
    return counts.get(a, 0) if a is not None else 0


def read_incl(path, smap, funcs):
    """{function: (entries, instructions, switched)} from the "# incl" lines."""
    byaddr = {}
    other = None
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[:2] == ['#', 'incl'] and len(p) >= 6:
                if len(p) > 6:
                    raise ProfileError(f'{path}: a call of {p[2]} never returned')
                # entries, instructions, calls dropped at a context switch
                byaddr[int(p[2], 16)] = (int(p[3]), int(p[4]), int(p[5]))
            elif p[:2] == ['#', 'incl-other-vcpu']:
                other = int(p[2])
    if other is None:
        raise ProfileError(f'{path}: no inclusive counts (plugin run without incl=)')
    if other:
        raise ProfileError(f'{path}: {other} callbacks from a second vCPU; run with one')
    out = {}
    for fn in funcs:
        a = smap.by_name.get(fn)
        if a is None or a not in byaddr:
            raise ProfileError(f'{path}: no inclusive count of {fn}')
        if not byaddr[a][0]:
            raise ProfileError(f'{path}: {fn} was not called in the window')
        out[fn] = byaddr[a]
    return out


FOOT_MIN = 0.9	# executions per call that make an instruction part of the footprint


def footprint(counts, ncalls):
    """Distinct kernel instruction addresses executed at least FOOT_MIN
    times per call."""
    return sum(1 for va, c in counts.items() if va >= USER_TOP and c >= FOOT_MIN * ncalls)


def main_incl(argv):
    out, run, an, amap, bn, bmap = argv[:6]
    funcs = argv[6:]
    d = os.path.dirname(os.path.abspath(out))
    maps = {'A': SymMap(amap), 'B': SymMap(bmap)}
    incl, prof, counts = {}, {}, {}
    for k in 'AB':
        tb = os.path.join(d, f'{run}-{k}.tb')
        counts[k] = read_tb(tb)
        incl[k] = read_incl(tb, maps[k], funcs)
        prof[k] = per_function(maps[k], counts[k], load_ksyms(os.path.join(d, f'{run}-{k}.log')))
    # instructions per call over the calls that did not sleep
    # (None when every call slept: no count to give)
    per = {k: {fn: (incl[k][fn][1] / (incl[k][fn][0] - incl[k][fn][2])
                    if incl[k][fn][0] > incl[k][fn][2] else None) for fn in funcs}
           for k in 'AB'}

    def num(v):
        return 'n/a' if v is None else f'{v:.1f}'

    def ratio(a, b):
        return 'n/a' if a is None or b is None else f'{b / a:.3f}'

    lines = [f'# {run}: instructions per call, A={an} B={bn}', '',
             'QEMU TCG with -icount shift=0 and the insnprof plugin (scripts/insnprof.c,',
             'incl=): every call of each function in the window around the benchmark\'s',
             'reads, counted from its first instruction to its return, callees and any',
             'interrupt taken inside included, no ftrace function traced.  A call',
             'that slept (switched to another task) cannot be followed and is left',
             'out of the average (column slept).', '',
             '| function | calls A | slept A | calls B | slept B | insns/call A | insns/call B | B/A |',
             '|---|---:|---:|---:|---:|---:|---:|---:|']
    for fn in funcs:
        lines.append(f'| {fn} | {incl["A"][fn][0]} | {incl["A"][fn][2]} | {incl["B"][fn][0]} '
                     f'| {incl["B"][fn][2]} | {num(per["A"][fn])} '
                     f'| {num(per["B"][fn])} | {ratio(per["A"][fn], per["B"][fn])} |')
    if len(funcs) > 1 and run == 'biocache':
        pa = None if None in per['A'].values() else sum(per['A'].values())
        pb = None if None in per['B'].values() else sum(per['B'].values())
        lines.append(f'| {" + ".join(funcs)} | | | | | {num(pa)} | {num(pb)} | {ratio(pa, pb)} |')
    n = {k: incl[k][funcs[0]][0] for k in 'AB'}
    rows = []
    for fn in set(prof['A']) | set(prof['B']):
        ia = prof['A'].get(fn, [0, 0])[0] / n['A']
        ib = prof['B'].get(fn, [0, 0])[0] / n['B']
        if abs(ib - ia) >= MIN_DIFF:
            rows.append((ib - ia, fn, ia, ib))
    rows.sort(key=lambda r: (r[0], r[1]))
    ta = sum(v[0] for v in prof['A'].values()) / n['A']
    tb_ = sum(v[0] for v in prof['B'].values()) / n['B']
    lines += ['', f'## Whole window, per call of {funcs[0]}', '',
              f'All instructions of the window: A {ta:.0f}, B {tb_:.0f} per call ({tb_ - ta:+.0f}).',
              'Functions (self counts, where the instruction lies) that differ by at least',
              '%.0f:' % MIN_DIFF, '',
              '| function | A | B | diff |', '|---|---:|---:|---:|']
    for diff, fn, ia, ib in rows:
        lines.append(f'| {fn} | {ia:.1f} | {ib:.1f} | {diff:+.1f} |')
    fa, fb = (footprint(counts[k], n[k]) for k in 'AB')
    lines += ['', '## Code footprint', '',
              f'Distinct kernel instructions (addresses) executed at least {FOOT_MIN} times',
              f'per call of {funcs[0]} (whole window, counted per call): A {fa}, B {fb}',
              f'({fb - fa:+d}, B/A {fb / max(fa, 1):.3f}).  A count of guest instructions, not of',
              'the host code TCG translates them to; a larger footprint has not been',
              'shown to cost wall-clock time (README; scripts/tcg-hostprof.sh shows',
              'where host time goes).']
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def main(argv):
    if argv[:1] == ['--incl']:
        return main_incl(argv[1:])
    out, an, amap, bn, bmap = argv[:5]
    devs = argv[5:]
    d = os.path.dirname(os.path.abspath(out))
    maps = {'A': SymMap(amap), 'B': SymMap(bmap)}
    for k in 'AB':
        for fn in ENTRIES:
            if fn not in maps[k].by_name:
                raise ProfileError(f'no {fn} in the System.map of {k}')
    data = {}
    errors = []
    for dev in devs:
        for k in 'AB':
            try:
                counts = read_tb(os.path.join(d, f'{dev}-{k}.tb'))
            except ProfileError as e:
                errors.append(str(e))
                continue
            ksyms = load_ksyms(os.path.join(d, f'{dev}-{k}.log'))
            calls = {fn: entries(maps[k], counts, fn) for fn in ENTRIES}
            if not sum(calls.values()):
                errors.append(f'{dev} on {k}: no swap I/O in the window')
                continue
            data[dev, k] = (per_function(maps[k], counts, ksyms), calls,
                            entries(maps[k], counts, PAGE_FAULT))
    if errors:
        raise ProfileError('\n'.join(errors))

    lines = [f'# Instructions per swap I/O, A={an} B={bn}', '',
             'QEMU TCG with -icount shift=0 and the insnprof plugin (scripts/insnprof.c):',
             'every instruction the guest executed in the one window around swaplat (from',
             'a write to trace_marker to the next, with no ftrace function traced), each',
             'counted by its own address and attributed to the kernel function',
             '(System.map) it lies in, divided by the swap I/Os of the window:',
             'executions of the first instruction of swap_readpage() plus',
             'swap_writepage().  The count is exact but for one thing: an instruction',
             'that faults and is restarted is counted twice, so a window is high by at',
             'most its page faults (column PF per I/O; nearly all are swaplat\'s own',
             'faults in user space).  A rep-prefixed string instruction counts once per',
             'iteration, as -icount does.  Rows differ by at least %.0f per I/O.' % MIN_DIFF, '']
    hooked = sorted({f'{dev} {k}' for (dev, k), v in data.items()
                     if any(fn in HOOKS for fn in v[0])})
    if hooked:
        lines = [l.replace(', with no ftrace function traced)', ')') for l in lines]
        lines += ['The ftrace function profiler was on in the window of ' + ', '.join(hooked)
                  + ' (INSN_GUEST=fprof): its hooks are in those counts.', '']
    summary = ['| device | swap-ins A | B | swap-outs A | B | window per I/O A | B | diff | PF per I/O A | B |',
               '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    body = []
    alldiff = {}	# device -> {function: B - A per I/O}, every function
    done = []
    for dev in devs:
        prof = {k: data[dev, k][0] for k in 'AB'}
        calls = {k: data[dev, k][1] for k in 'AB'}
        nio = {k: sum(calls[k].values()) for k in 'AB'}
        pf = {k: data[dev, k][2] / nio[k] for k in 'AB'}
        tot = {k: sum(v[0] for v in prof[k].values()) / nio[k] for k in 'AB'}
        ri, wo = ENTRIES
        summary.append(f'| {dev} | {calls["A"][ri]} | {calls["B"][ri]} | {calls["A"][wo]} | {calls["B"][wo]} '
                       f'| {tot["A"]:.0f} | {tot["B"]:.0f} | {tot["B"]-tot["A"]:+.0f} '
                       f'| {pf["A"]:.2f} | {pf["B"]:.2f} |')
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
        body += ['', f'## {dev}: {nio["A"]} swap I/Os in A, {nio["B"]} in B', '',
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
    try:
        main(sys.argv[1:])
    except ProfileError as e:
        for line in str(e).splitlines():
            print(f'insnprof: error: {line}', file=sys.stderr)
        sys.exit(1)
