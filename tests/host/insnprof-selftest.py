#!/usr/bin/env python3
"""Host-side self-test of make insn-profile's analysis (scripts/insnprof.py)
and plugin (scripts/insnprof.c), no VM, a few seconds.

Feeds insnprof.py synthetic plugin output, guest logs and a small synthetic
System.map, and checks that a run with other than exactly one measurement
window fails, that module-area, ftrace-trampoline and other addresses past
the kernel's text are never given to the last System.map symbol, and that
ordinary attribution and the per-I/O arithmetic are exact; the zramfio
report's code footprint; scripts/insn-mem.py's per-call arithmetic and
errors; and the plugin's model TLB (mem=), compiled with stub QEMU calls.
Then compiles the plugin with -Werror and checks that every QEMU plugin call it declares
is exported by the installed qemu-system-x86_64 (skipped without one).
Prints KTAP; exit status 1 on any failure.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(TOP, 'scripts', 'insnprof.py')
PLUGIN = os.path.join(TOP, 'scripts', 'insnprof.c')

spec = importlib.util.spec_from_file_location('insnprof', SCRIPT)
ip = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ip)

SYSTEM_MAP = """\
ffffffff81000000 T _stext
ffffffff81000000 T startup_64
ffffffff81001000 T swap_readpage
ffffffff81001100 T swap_writepage
ffffffff81001200 T submit_bio
ffffffff81001300 t brd_submit_bio
ffffffff81001400 T asm_exc_page_fault
ffffffff81001500 t local_fn
ffffffff81001600 t local_fn
ffffffff81001700 T last_text_fn
ffffffff81002000 T _etext
ffffffff81100000 D some_data
ffffffff81200000 T _sinittext
ffffffff81200000 T init_fn
ffffffff81201000 T _einittext
ffffffff81300000 B _end
ffffffff81300010 t after_end_text_symbol
"""
READ, WRITE, SUBMIT, BRD, PF, LOCAL1, LOCAL2, LAST = (
    0xffffffff81001000, 0xffffffff81001100, 0xffffffff81001200, 0xffffffff81001300,
    0xffffffff81001400, 0xffffffff81001500, 0xffffffff81001600, 0xffffffff81001700)
MODULE_ADDR = 0xffffffffa0001234	# module area without RANDOMIZE_BASE
TRAMP = 0xffffffffc0201000
ZRAM_MOD = 0xffffffffc0300000
KSYMS = f"""\
KSYM {TRAMP:x} t ftrace_trampoline\t[__builtin__ftrace]
KSYM {ZRAM_MOD:x} t zram_submit_bio\t[zram]
KSYM {ZRAM_MOD + 0x800:x} d zram_data\t[zram]
"""

results = []


def check(desc, cond, diag=''):
    results.append((bool(cond), desc, diag))


def tb(windows=1, open_at_exit=0, lines=(), header=True):
    s = '# insnprof 2 per-instruction\n' if header else ''
    if windows is not None:
        s += f'# windows {windows}\n# open-at-exit {open_at_exit}\n'
    return s + ''.join(f'{va:x} {c}\n' for va, c in lines)


# A: 10 swap-ins and 10 swap-outs, 200 instructions in submit_bio.
# B: the same I/Os, 400 instructions in submit_bio, 40 in brd_submit_bio.
BASE_LINES = [(0, 5000), (READ, 10), (READ + 3, 90), (WRITE, 10), (WRITE + 5, 90),
              (SUBMIT, 20), (SUBMIT + 4, 180), (PF, 4)]
B_LINES = [(0, 5000), (READ, 10), (READ + 3, 90), (WRITE, 10), (WRITE + 5, 90),
           (SUBMIT, 20), (SUBMIT + 4, 380), (BRD, 20), (BRD + 2, 20), (PF, 4)]


def run(d, files, devs=('brd',), config=None):
    for name, text in files.items():
        with open(os.path.join(d, name), 'w') as f:
            f.write(text)
    m = os.path.join(d, 'System.map')
    with open(m, 'w') as f:
        f.write(SYSTEM_MAP)
    if config is not None:
        with open(os.path.join(d, '.config'), 'w') as f:
            f.write(config)
    out = os.path.join(d, 'report.md')
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([sys.executable, SCRIPT, out, 'base', m, 'series', m, *devs],
                       capture_output=True, text=True, timeout=30)
    rep = open(out).read() if os.path.exists(out) else ''
    return p.returncode, p.stderr, rep


def table_row(rep, first, ncells=None):
    """The first table row of REP that starts with FIRST (and has NCELLS)."""
    for line in rep.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if line.startswith('|') and cells[0] == first and ncells in (None, len(cells)):
            return cells
    return None


def fresh():
    d = tempfile.mkdtemp(prefix='insnprof-selftest.')
    dirs.append(d)
    return d


dirs = []
logs = {'brd-A.log': 'BENCH-DONE\n', 'brd-B.log': 'BENCH-DONE\n'}

# 1. the ordinary case: exact arithmetic per I/O
d = fresh()
rc, err, rep = run(d, {**logs, 'brd-A.tb': tb(lines=BASE_LINES), 'brd-B.tb': tb(lines=B_LINES)})
row = table_row(rep, 'submit_bio', 6)
check('one window each: report written, exit 0', rc == 0 and rep, err)
check('normal attribution: submit_bio 10.0 -> 20.0 instructions per I/O, calls 1.00',
      row == ['submit_bio', '10.0', '20.0', '+10.0', '1.00', '1.00'], row)
row = table_row(rep, 'brd_submit_bio', 6)
check('a static function counted from its own symbol: brd_submit_bio +2.0 per I/O',
      row and row[3] == '+2.0', row)
row = table_row(rep, 'brd')
check('swap I/Os counted from the entry instructions: 10 + 10, window 270 -> 282 per I/O, PF 0.20',
      row == ['brd', '10', '10', '10', '10', '270', '282', '+12', '0.20', '0.20'], row)
row = table_row(rep, 'block: submit (checks, bio lists, queue enter)')
check('by-stage table: submission +10, driver +2',
      row == ['block: submit (checks, bio lists, queue enter)', '+10']
      and table_row(rep, 'driver: ->submit_bio or ->rw_page and its copy')[1] == '+2', row)

# 2. window checks: zero, two, unclosed, none recorded, missing file
for desc, text in [('zero windows', tb(windows=0, lines=BASE_LINES)),
                   ('two windows', tb(windows=2, lines=BASE_LINES)),
                   ('a window left open at exit', tb(windows=1, open_at_exit=1, lines=BASE_LINES)),
                   ('no windows line', tb(windows=None, lines=BASE_LINES)),
                   ('old per-block output', '# windows 1\nffffffff81001000 5 10\n')]:
    d = fresh()
    rc, err, rep = run(d, {**logs, 'brd-A.tb': tb(lines=BASE_LINES), 'brd-B.tb': text})
    check(f'{desc} in one run -> error, exit 1, no report',
          rc == 1 and 'insnprof: error:' in err and 'brd-B.tb' in err and not rep, (rc, err))
d = fresh()
rc, err, rep = run(d, {**logs, 'brd-A.tb': tb(lines=BASE_LINES)})
check('a missing plugin output -> error, exit 1', rc == 1 and 'missing' in err and not rep, (rc, err))
d = fresh()
rc, err, rep = run(d, {**logs, 'brd-A.tb': tb(lines=BASE_LINES),
                       'brd-B.tb': tb(lines=[(SUBMIT, 100)])})
check('a window with no swap I/O -> error, exit 1', rc == 1 and 'no swap I/O' in err, (rc, err))

# 3. attribution by address
smap_dir = fresh()
with open(os.path.join(smap_dir, 'System.map'), 'w') as f:
    f.write(SYSTEM_MAP)
smap = ip.SymMap(os.path.join(smap_dir, 'System.map'))
ks = ip.KSyms([(TRAMP, 't', 'ftrace_trampoline', '__builtin__ftrace'),
               (ZRAM_MOD, 't', 'zram_submit_bio', 'zram'),
               (ZRAM_MOD + 0x800, 'd', 'zram_data', 'zram')])
cases = [
    ('a module-area address, no kallsyms -> [modules]', MODULE_ADDR, ip.KSyms(), '[modules]'),
    ('an ftrace trampoline, no kallsyms -> [modules]', TRAMP + 0x40, ip.KSyms(), '[modules]'),
    ('an ftrace trampoline named in kallsyms -> [ftrace]', TRAMP + 0x40, ks, '[ftrace]'),
    ('past the trampoline page -> [modules]', TRAMP + 0x1000 + 8, ks, '[modules]'),
    ("a module's text named in kallsyms -> its symbol", ZRAM_MOD + 0x10, ks, 'zram_submit_bio [zram]'),
    ("a module's data past its text -> [modules]", ZRAM_MOD + 0x810, ks, '[modules]'),
    ('between _etext and _end -> [other kernel]', 0xffffffff81100010, ks, '[other kernel]'),
    ('just past _end -> [other kernel]', 0xffffffff81300020, ks, '[other kernel]'),
    ('fixmap/vsyscall area -> [other kernel]', 0xffffffffff600000, ks, '[other kernel]'),
    ('the direct map -> [other kernel]', 0xffff888000100000, ks, '[other kernel]'),
    ('the last text symbol keeps its own addresses', LAST + 0x10, ks, 'last_text_fn'),
    ('init text -> its symbol', 0xffffffff81200010, ks, 'init_fn'),
    ('user space -> [user space]', 0x401000, ks, '[user space]'),
    ('a static name repeated: the second copy', LOCAL2 + 1, ks, 'local_fn'),
]
for desc, va, k, want in cases:
    got = ip.name_of(va, smap, k)
    check(f'{desc} ({va:#x})', got == want, f'got {got!r}, want {want!r}')
past = [va for _, va, _, want in cases if want.startswith('[') and va >= 0xffffffff81002000]
check('no address past _etext is given to the last System.map symbol',
      all(ip.name_of(va, smap, k) not in ('last_text_fn', 'after_end_text_symbol')
          for va in past for k in (ks, ip.KSyms())), past)

d = fresh()
with open(os.path.join(d, '.config'), 'w') as f:
    f.write('CONFIG_RANDOMIZE_BASE=y\n')
with open(os.path.join(d, 'System.map'), 'w') as f:
    f.write(SYSTEM_MAP)
kaslr = ip.SymMap(os.path.join(d, 'System.map'))
check('with CONFIG_RANDOMIZE_BASE the module area starts at 0xffffffffc0000000',
      kaslr.modules[0] == 0xffffffffc0000000
      and ip.name_of(0xffffffffb0000000, kaslr) == '[other kernel]'
      and ip.name_of(0xffffffffc0000010, kaslr) == '[modules]', kaslr.modules)

# 4. end to end: module, trampoline and stray addresses in a report
d = fresh()
extra = [(MODULE_ADDR, 7000), (TRAMP + 0x10, 3000), (ZRAM_MOD, 20), (ZRAM_MOD + 4, 60),
         (0xffffffff81100010, 500)]
rc, err, rep = run(d, {'brd-A.log': 'BENCH-DONE\n', 'brd-B.log': KSYMS + 'BENCH-DONE\n',
                       'brd-A.tb': tb(lines=BASE_LINES), 'brd-B.tb': tb(lines=B_LINES + extra)})
check('report: module area -> [modules] +350.0 per I/O', (table_row(rep, '[modules]', 6) or [''] * 4)[3] == '+350.0',
      table_row(rep, '[modules]', 6))
check('report: ftrace trampoline -> [ftrace] +150.0 per I/O', (table_row(rep, '[ftrace]', 6) or [''] * 4)[3] == '+150.0',
      table_row(rep, '[ftrace]', 6))
row = table_row(rep, 'zram_submit_bio [zram]', 6)
check('report: a module function by name, calls 1.00 per I/O, in the driver stage',
      row and row[3] == '+4.0' and row[5] == '1.00'
      and ip.stage_of('zram_submit_bio [zram]').startswith('driver'), row)
check('report: says the function profiler was on in the window of brd B only',
      'function profiler was on in the window of brd B (' in rep
      and 'with no ftrace function traced' not in rep, rep[:600])
check('report: nothing given to the last System.map symbol',
      table_row(rep, 'last_text_fn') is None and table_row(rep, 'after_end_text_symbol') is None
      and (table_row(rep, '[other kernel]', 6) or [''] * 4)[3] == '+25.0', table_row(rep, '[other kernel]', 6))

# 5a. the code footprint of the zramfio report: distinct kernel addresses
# executed at least 0.9 times per call, user space left out
check('footprint: 3 of 4 kernel addresses reach 0.9 per call, user space not counted',
      ip.footprint({0: 10 ** 6, READ: 100, READ + 3: 90, SUBMIT: 89, SUBMIT + 4: 1000}, 100) == 3,
      ip.footprint({0: 10 ** 6, READ: 100, READ + 3: 90, SUBMIT: 89, SUBMIT + 4: 1000}, 100))
d = fresh()
m = os.path.join(d, 'System.map')
with open(m, 'w') as f:
    f.write(SYSTEM_MAP)
for k, lines in (('A', [(0, 9999), (SUBMIT, 100), (SUBMIT + 4, 100), (READ, 95), (LOCAL1, 50)]),
                 ('B', [(0, 9999), (SUBMIT, 100), (SUBMIT + 4, 100), (READ, 100), (LAST, 90),
                        (BRD, 200)])):
    with open(os.path.join(d, f'zramfio-{k}.tb'), 'w') as f:
        f.write(tb(lines=lines) + f'# incl {SUBMIT:x} 100 500 0\n# incl-other-vcpu 0\n')
    with open(os.path.join(d, f'zramfio-{k}.log'), 'w') as f:
        f.write('BENCH-DONE\n')
p = subprocess.run([sys.executable, SCRIPT, '--incl', os.path.join(d, 'report.md'), 'zramfio',
                    'base', m, 'series', m, 'submit_bio'], capture_output=True, text=True, timeout=30)
rep = open(os.path.join(d, 'report.md')).read() if os.path.exists(os.path.join(d, 'report.md')) else ''
check('zramfio report: code footprint A 3, B 5 (+2), each kernel from its own counts',
      p.returncode == 0 and 'per call of submit_bio (whole window, counted per call): A 3, B 5' in rep
      and '(+2, B/A 1.667)' in rep, (p.stderr, rep[-400:]))

# 5b. scripts/insn-mem.py: accesses and model TLB misses per call, by function
MEM = os.path.join(TOP, 'scripts', 'insn-mem.py')
ma, mb = fresh(), fresh()
# A: 20 swap I/Os; B: 40, so that a count divided by the other kernel's
# calls shows
B2_LINES = [(0, 5000), (READ, 20), (WRITE, 20), (SUBMIT, 20), (SUBMIT + 4, 180)]
for dd, lines, mem in ((ma, BASE_LINES, f'0 1000 20\n{SUBMIT + 4:x} 300 10\n'),
                       (mb, B2_LINES, f'0 2000 40\n{SUBMIT + 4:x} 500 40\n')):
    with open(os.path.join(dd, 'System.map'), 'w') as f:
        f.write(SYSTEM_MAP)
    with open(os.path.join(dd, 'r.tb'), 'w') as f:
        f.write(tb(lines=lines))
    with open(os.path.join(dd, 'r.tb.mem'), 'w') as f:
        f.write('# insnprof-mem 1 tlb-bits 8 victim 8\n' + mem)


def insn_mem():
    return subprocess.run([sys.executable, MEM, ma, os.path.join(ma, 'r.tb'), mb,
                           os.path.join(mb, 'r.tb')], capture_output=True, text=True, timeout=30)


p = insn_mem()
check('insn-mem: submit_bio 15.0 -> 12.5 accesses, 0.50 -> 1.00 misses per swap I/O (20 and 40 I/Os)',
      p.returncode == 0 and table_row(p.stdout, 'submit_bio', 7)
      == ['submit_bio', '15.0', '12.5', '-2.5', '0.50', '1.00', '+0.50'], (p.stderr, p.stdout))
check('insn-mem: kernel code and user code rows apart, each exact',
      table_row(p.stdout, 'kernel code', 7) == ['kernel code', '15.0', '12.5', '-2.5', '0.50', '1.00', '+0.50']
      and table_row(p.stdout, 'user code', 7) == ['user code', '50.0', '50.0', '+0.0', '1.00', '1.00', '+0.00'],
      p.stdout)
with open(os.path.join(mb, 'r.tb.mem'), 'w') as f:
    f.write('# insnprof-mem 1 tlb-bits 10 victim 8\n0 2000 40\n')
p = insn_mem()
check('insn-mem: runs with model TLBs of different sizes -> error, exit 1',
      p.returncode == 1 and 'model TLBs differ (A 8 bits' in p.stderr, (p.returncode, p.stderr))
with open(os.path.join(mb, 'r.tb.mem'), 'w') as f:
    f.write('# insnprof-mem 1 tlb-bits 8 victim 8\n0 2000\n')
p = insn_mem()
check('insn-mem: a truncated line -> error naming the line, exit 1',
      p.returncode == 1 and 'r.tb.mem:2: not "address accesses misses"' in p.stderr, (p.returncode, p.stderr))
os.unlink(os.path.join(mb, 'r.tb.mem'))
p = insn_mem()
check('insn-mem: a run without mem= output -> error, exit 1',
      p.returncode == 1 and 'insn-mem: error' in p.stderr, (p.returncode, p.stderr))

# 5c. the plugin's model TLB (tlb_miss()), compiled with stubs for QEMU's calls
HARNESS = r"""
#include "%s"
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb) {}
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb) { return 0; }
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t i) { return 0; }
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn) { return 0; }
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn) { return 0; }
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn) { return 0; }
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vcpu_udata_cb_t cb,
					   int flags, void *udata) {}
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, int op,
						void *ptr, uint64_t imm) {}
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *udata) {}
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, vcpu_mem_cb_t cb,
				      int flags, int rw, void *udata) {}
int main(void)
{
	struct tlb *t = &tlb[0];
	unsigned long pg[NVICTIM];

	tlb_bits = 1;	/* two entries: pages 0, 2, 4... share entry 0 */
	t->page = calloc(2, sizeof(uint64_t));
	printf("%%d", tlb_miss(t, 0x10));		/* cold: miss */
	printf("%%d", tlb_miss(t, 0xff8));		/* same page: hit */
	printf("%%d", tlb_miss(t, 0x2000));	/* conflict: miss, page 0 to the victims */
	printf("%%d", tlb_miss(t, 0x0));		/* victim hit: swapped back */
	printf("%%d", tlb_miss(t, 0x2000));	/* victim hit again */
	printf("%%d", tlb_miss(t, 0x1000));	/* cold fill of the empty entry 1: miss */
	printf("%%d", tlb_miss(t, 0x0));		/* ...which evicted no victim: hit */
	/*
	 * Page 2 is in victim entry 0, the next to be replaced is entry 1:
	 * NVICTIM - 1 conflicts fill entries 1..NVICTIM - 1 and leave it
	 * (had the cold fill above taken a victim entry, they would not).
	 */
	for (int i = 0; i < NVICTIM - 1; i++)
		pg[i] = tlb_miss(t, (uint64_t)(4 + 2 * i) << 12);
	for (int i = 0; i < NVICTIM - 1; i++)
		printf("%%lu", pg[i]);
	printf(" %%d", tlb_miss(t, 0x2000));	/* still a victim: hit */
	printf(" %%d\n", tlb_miss(t, 0x2000));	/* swapped in: hit */
	return 0;
}
"""
if shutil.which('gcc'):
    d = fresh()
    with open(os.path.join(d, 'h.c'), 'w') as f:
        f.write(HARNESS % PLUGIN)
    p = subprocess.run(['gcc', '-O1', '-Wno-unused-parameter', '-o', os.path.join(d, 'h'),
                        os.path.join(d, 'h.c'), '-lpthread'], capture_output=True, text=True)
    out = subprocess.run([os.path.join(d, 'h')], capture_output=True, text=True).stdout \
        if p.returncode == 0 else p.stderr
    check('model TLB: hit, conflict, victim swap, an empty entry filled without evicting a victim',
          out.strip() == '1010010' + '1' * 7 + ' 0 0', out)
else:
    results.append((True, 'model TLB # SKIP no gcc', ''))

# 5. the plugin compiles cleanly and QEMU exports what it declares
cc = shutil.which('gcc')
qemu = shutil.which('qemu-system-x86_64')
if cc:
    so = os.path.join(fresh(), 'insnprof.so')
    p = subprocess.run([cc, '-O2', '-Wall', '-Wextra', '-Werror', '-Wno-unused-parameter',
                        '-shared', '-fPIC', '-o', so, PLUGIN, '-lpthread'],
                       capture_output=True, text=True)
    check('the plugin compiles with -Wall -Wextra -Werror', p.returncode == 0, p.stderr)
    if qemu and p.returncode == 0:
        und = subprocess.run(['nm', '-D', '--undefined-only', so], capture_output=True, text=True).stdout
        used = sorted({l.split()[-1] for l in und.splitlines() if 'qemu_plugin_' in l})
        have = set(l.split()[-1] for l in subprocess.run(['nm', '-D', '--defined-only', qemu],
                                                         capture_output=True, text=True).stdout.splitlines() if l.strip())
        missing = [u for u in used if u not in have]
        check(f'qemu-system-x86_64 exports all {len(used)} plugin calls the plugin uses',
              used and not missing, f'missing: {missing}')
    else:
        results.append((True, 'qemu-system-x86_64 exports the plugin calls # SKIP no qemu-system-x86_64', ''))
else:
    results.append((True, 'the plugin compiles # SKIP no gcc', ''))

for d in dirs:
    shutil.rmtree(d, ignore_errors=True)
print('KTAP version 1')
print(f'1..{len(results)}')
fails = 0
for i, (ok, desc, diag) in enumerate(results, 1):
    print(f'{"ok" if ok else "not ok"} {i} {desc}')
    if not ok:
        fails += 1
        for line in str(diag).splitlines() or ['']:
            print(f'# {line}')
print(f'# {len(results) - fails} passed, {fails} failed')
sys.exit(1 if fails else 0)
