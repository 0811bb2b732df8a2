#!/usr/bin/env python3
"""Host-side self-test of scripts/tcg-hostprof.py's mapping from QEMU's
translated host code back to guest functions (no VM, no perf).

Feeds tb_map() a synthetic QEMU 7.2 in_asm,out_asm log (a prologue, a
kernel TB of three guest instructions in two functions whose "guest addr"
lines give only page offsets, its slow path and constants, a TB where an
instruction that made no host code has no "guest addr" line, and a user
TB), and checks that each host address is given to the guest function of
the instruction it was translated from, the prologue, slow path and
constants to their own buckets, and an address outside every TB to
"[translated code]".

Then feeds buckets() and main() a synthetic `perf script` output (perf
itself is replaced, so no perf data is needed, and any other command
fails): QEMU's mmap events (a read-only one, executable ones at a file
offset and at offset 0, which perf prints as "@ 0"), and samples in the
host kernel, a library, the vDSO, a named QEMU function, stripped QEMU
code (named by its 256-byte block of the binary, from the mapping's file
offset) and translated code (dso "[unknown]" or "//anon"); and a
report directory with
boots that are usable, without perf data, without BENCH-DONE, with a
kernel report, and missing under --rounds.  Checks the buckets, the
samples per 1000 reads in report.md, each left-out boot named, and the
exit statuses 3 (boots left out) and 1 (no usable boot of B).  Prints
KTAP; exit status 1 on any failure.
"""
import contextlib
import importlib.util
import io
import types
from unittest import mock
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, 'scripts'))
spec = importlib.util.spec_from_file_location('hp', os.path.join(TOP, 'scripts', 'tcg-hostprof.py'))
hp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hp)

SYSTEM_MAP = """\
ffffffff81000000 T _stext
ffffffff81000ff0 T fn_a
ffffffff81001000 T fn_b
ffffffff81001104 T fn_c
ffffffff81002000 T _etext
"""
LOG = """\
PROLOGUE: [size=45]
0x7f0000000000:  55                       pushq    %rbp
0x7f0000000001:  53                       pushq    %rbx

----------------
IN: 
0xffffffff81000ffc:  48 89 e5                 movq     %rsp, %rbp
0xffffffff81000fff:  90                       nop
0xffffffff81001000:  c3                       retq

OUT: [size=200]
  -- guest addr 0x0000000000000ffc + tb prologue
0x7f0000000100:  8b 5d f0                 movl     -0x10(%rbp), %ebx
0x7f0000000103:  85 db                    testl    %ebx, %ebx
  -- guest addr 0x0000000000000fff
0x7f0000000110:  90                       nop
  -- guest addr 0x0000000000000000
0x7f0000000120:  48 8b 5d 10              movq     0x10(%rbp), %rbx
0x7f0000000124:  ff e0                    jmpq     *%rax
  -- tb slow paths + alignment
0x7f0000000130:  90                       nop
  data: [size=8]
0x7f0000000140:  .quad  0x0000000000000000

----------------
IN: 
0xffffffff81001100:  90                       nop
0xffffffff81001102:  66 90                    nop
0xffffffff81001104:  c3                       retq

OUT: [size=64]
  -- guest addr 0x0000000000000100 + tb prologue
0x7f0000000300:  8b 5d f0                 movl     -0x10(%rbp), %ebx
  -- guest addr 0x0000000000000104
0x7f0000000310:  ff e0                    jmpq     *%rax

----------------
IN: 
0x00005555555551a0:  31 c0                    xorl     %eax, %eax

OUT: [size=64]
  -- guest addr 0x00000000000001a0 + tb prologue
0x7f0000000200:  33 c0                    xorl     %eax, %eax
"""
CASES = [
    (0x7f0000000000, '[qemu prologue/data]'),
    (0x7f0000000103, 'fn_a'),
    (0x7f0000000110, 'fn_a'),
    (0x7f0000000120, 'fn_b'),
    (0x7f0000000125, 'fn_b'),
    (0x7f0000000130, '[slow path]'),
    (0x7f0000000140, '[qemu prologue/data]'),
    (0x7f0000000200, '[user space]'),
    (0x7f0000000300, 'fn_b'),
    (0x7f0000000310, 'fn_c'),
    (0x7e0000000000, '[translated code]'),
    (0x7f0000100000, '[translated code]'),
]

# perf script --show-mmap-events -F ip,sym,dso, as perf 6.1 prints it
PERF = """\
PERF_RECORD_MMAP2 4242/4242: [0x55d0c4000000(0x100000) @ 0 08:01 1234 0]: r--p /usr/bin/qemu-system-x86_64
PERF_RECORD_MMAP2 4242/4242: [0x55d0c4a00000(0x400000) @ 0x3a0000 08:01 1234 0]: r-xp /usr/bin/qemu-system-x86_64
PERF_RECORD_MMAP2 4242/4242: [0x55d0c5000000(0x100000) @ 0 08:01 1235 0]: r-xp /usr/lib/qemu/accel-x.so-qemu-system-x86_64
    ffffffff81234567 do_syscall_64 ([kernel.kallsyms])
    ffffffff81234568 native_write_msr ([kernel.kallsyms])
    7f1234567890 __memmove_avx_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6)
    7ffd12345000 __vdso_clock_gettime ([vdso])
    55d0c4a10000 qemu_mutex_lock_impl+0x10 (/usr/bin/qemu-system-x86_64)
    55d0c4a385a7 [unknown] (/usr/bin/qemu-system-x86_64)
    55d0c4a385f0 [unknown] (/usr/bin/qemu-system-x86_64)
    7f0000000103 [unknown] ([unknown])
    55d0c4000010 [unknown] (/usr/bin/qemu-system-x86_64)
    55d0c50001f0 [unknown] (/usr/bin/qemu-system-x86_64)
    7f0000000120 [unknown] ([unknown])
    7f0000000120 [unknown] (//anon)
"""
BUCKETS = {
    'host kernel': 2,
    'library: libc.so.6': 1,
    'library: [vdso]': 1,
    'qemu: qemu_mutex_lock_impl': 1,
    'qemu: [qemu 0x3d8500]': 2,	# 0x385a7 into a mapping at file offset 0x3a0000
    'qemu: [qemu]': 1,		# in no executable mapping (the r--p one is not)
    'qemu: [qemu 0x100]': 1,	# 0x1f0 into an executable mapping at offset "0"
    'guest: fn_a': 1,
    'guest: fn_b': 2,
}


PERF_ARGV = ['perf', 'script', '--show-mmap-events', '-F', 'ip,sym,dso', '-i']


class FakeRun:
    """Stands in for subprocess.run: `perf script ... -i PATH` prints the
    text given for PATH; any other command fails the test."""

    def __init__(self, outputs):
        self.outputs = outputs

    def __call__(self, cmd, **kw):
        if cmd[:-1] != PERF_ARGV or cmd[-1] not in self.outputs:
            raise AssertionError(f'unexpected command {cmd}')
        return types.SimpleNamespace(stdout=self.outputs[cmd[-1]], returncode=0)


def with_perf(outputs, fn, *args):
    """FN(*ARGS) with perf replaced and its output hidden: what it returned,
    or the exception it raised (so that a crash is a failed check, not a
    lost KTAP plan)."""
    try:
        with mock.patch.object(hp.subprocess, 'run', FakeRun(outputs)), \
             contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return fn(*args)
    except Exception as e:	# noqa: BLE001 - any crash is a failure here
        return f'{type(e).__name__}: {e}'


def boot_log(reads, done=True, extra=''):
    return ('HOSTPROF-WINDOW 16\n' + f'HOSTPROF-READS {reads}\n' + extra
            + 'BENCH zramsteady.read_iops 1234.5\n' + ('BENCH-DONE\n' if done else ''))


results = []


def check(ok, what):
    results.append((ok, what))


with tempfile.TemporaryDirectory() as tmp:
    smp = os.path.join(tmp, 'System.map')
    with open(smp, 'w') as f:
        f.write(SYSTEM_MAP)
    log = os.path.join(tmp, 'asm')
    with open(log, 'w') as f:
        f.write(LOG)
    smap = hp.insnprof.SymMap(smp)
    starts, guest = hp.tb_map(log)
    for va, want in CASES:
        got = hp.guest_bucket(starts, guest, va, smap)
        check(got == want, f'host {va:#x} -> {got}' + ('' if got == want else f', expected {want}'))

    perf = os.path.join(tmp, 'x.perf')
    got = with_perf({perf: PERF}, lambda: dict(hp.buckets(perf, log, smap)))
    check(got == BUCKETS, 'buckets() of a synthetic perf script'
          + ('' if got == BUCKETS else f': {got}'))

    # A report directory: A-1 and B-1 usable (1600 and 800 reads in the
    # window, so 12 samples are 7.5 and 15.0 per 1000 reads), B-2 without
    # perf data, A-3 without BENCH-DONE, B-3 with a kernel warning, A-2 and
    # B-4 with no console log at all (--rounds 4).
    rep = os.path.join(tmp, 'rep')
    os.mkdir(rep)
    with open(os.path.join(rep, 'kernels'), 'w') as f:
        f.write(f'A {tmp}\nB {tmp}\n')
    logs = {'A-1': boot_log(1600), 'B-1': boot_log(800), 'B-2': boot_log(800),
            'A-3': boot_log(1600, done=False),
            'B-3': boot_log(800, extra='WARNING: CPU: 1 PID: 7 at block/bio.c:1 x\n')}
    outputs = {}
    for b, text in logs.items():
        with open(os.path.join(rep, b + '.log'), 'w') as f:
            f.write(text)
        if b != 'B-2':
            open(os.path.join(rep, b + '.perf'), 'w').close()
            outputs[os.path.join(rep, b + '.perf')] = PERF
    rc = with_perf(outputs, hp.main, [rep, '--rounds', '4'])
    check(rc == 3, f'main() exit status {rc} with boots left out (expected 3)')
    rpath = os.path.join(rep, 'report.md')
    report = open(rpath).read() if os.path.exists(rpath) else ''
    for b, why in (('A-2', 'no console log'), ('B-4', 'no console log'),
                   ('B-2', 'no perf data'), ('A-3', 'the boot did not finish'),
                   ('B-3', 'kernel report: WARNING')):
        check(f'{b}: {why}' in report, f'report names {b} as left out ({why})')
    for want in ('| samples per 1000 reads | 7.5 | 15.0 | 2.000 |',
                 '| reads/s in window | 100.0 | 50.0 | 0.500 |'):
        name = want.split('|')[1].strip()
        row = [line for line in report.splitlines() if line.startswith(f'| {name} |')]
        check(row == [want], f'median {name}: {row}')

    # No usable boot of B: exit status 1, and no report.
    for b in ('B-1', 'B-3'):
        os.remove(os.path.join(rep, b + '.log'))
    if os.path.exists(rpath):
        os.remove(rpath)
    rc = with_perf(outputs, hp.main, [rep])
    check(rc == 1 and not os.path.exists(rpath),
          f'main() exit status {rc} without a usable boot of B (expected 1, no report)')

print('KTAP version 1')
print(f'1..{len(results)}')
for n, (ok, what) in enumerate(results, 1):
    print(f'{"ok" if ok else "not ok"} {n} {what}')
sys.exit(0 if all(ok for ok, _ in results) else 1)
