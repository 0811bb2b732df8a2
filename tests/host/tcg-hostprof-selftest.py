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
"[translated code]".  Prints KTAP; exit status 1 on any failure.
"""
import importlib.util
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

with tempfile.TemporaryDirectory() as tmp:
    smp = os.path.join(tmp, 'System.map')
    with open(smp, 'w') as f:
        f.write(SYSTEM_MAP)
    log = os.path.join(tmp, 'asm')
    with open(log, 'w') as f:
        f.write(LOG)
    smap = hp.insnprof.SymMap(smp)
    starts, guest = hp.tb_map(log)
    print('KTAP version 1')
    print(f'1..{len(CASES)}')
    bad = 0
    for n, (va, want) in enumerate(CASES, 1):
        got = hp.guest_bucket(starts, guest, va, smap)
        if got == want:
            print(f'ok {n} host {va:#x} -> {got}')
        else:
            bad += 1
            print(f'not ok {n} host {va:#x} -> {got}, expected {want}')
sys.exit(1 if bad else 0)
