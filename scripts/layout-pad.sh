#!/bin/bash
# make layout-pad PAD=BYTES [LAYOUT_KERNEL=base|series] [KCONFIG=test|distro]
# Builds v6.1.4 (base, the default) or the whole series with BYTES of int3
# added to the text of init/main.o, into build/obj/<kernel>-pad<BYTES>
# (distro-<kernel>-pad<BYTES> with KCONFIG=distro).  The main kernel text
# linked after init/ (the mm/, fs/, block/ and drivers/ code of every I/O
# path) then lies BYTES further on; the entry text, the thunks and
# everything after _etext stay where they were, since they start at
# aligned boundaries, and no symbol is added, so kallsyms and the data do
# not move either, but for a few data symbols that the check below names
# (the sched_class structs by 576 bytes with BYTES=1344).  The build is
# checked against the unpadded kernel's System.map: every text symbol must
# be where it was or exactly BYTES further on, and submit_bio() must have
# moved; data symbols that moved are listed in a warning.
# Booted against the unpadded kernel (make bench A=base
# B=build/obj/base-pad<BYTES> ...) it shows how much a QEMU TCG wall-clock
# benchmark moves with where the code lies alone: QEMU's jump cache and
# software TLB are direct-mapped tables indexed by guest address.  The
# executed instructions are the same but for code that hashes addresses
# (the ftrace function profiler that swaplat enables).
# The padded tree is a hard-linked copy of the kernel tree in
# build/layout/<kernel> (one path for every BYTES, so that ccache serves
# every object but init/main.o after the first build there): one run at a
# time per kernel, and an older <kernel>-pad<N> build directory is rebuilt
# from scratch when it is used again.
set -euo pipefail
: "${TOP:?}" "${BUILD:?}"
PAD=${PAD:-}
KERNEL=${LAYOUT_KERNEL:-base}

die() { echo "layout-pad: error: $*" >&2; exit 2; }
case $PAD in
''|*[!0-9]*) die "PAD=BYTES is required: a multiple of 64 from 64 to 65536 (got '$PAD')" ;;
esac
PAD=$((10#$PAD))
# 64: the largest alignment within the text after init/, so that every
# function moves by exactly PAD (the check below tells if one does not).
[ "$PAD" -ge 64 ] && [ "$PAD" -le 65536 ] && [ $((PAD % 64)) = 0 ] ||
	die "PAD=$PAD: use a multiple of 64 from 64 to 65536"

# The unpadded kernel, built (or found up to date) with the same
# configuration: the source tree to copy and the map to check against.
pre=
[ -n "${BASECONFIG:-}" ] && pre=${KCONFIG:-distro}-
case $KERNEL in
base) make --no-print-directory -C "$TOP" base-kernel >&2
      src=${BASETREE:-$BUILD/linux-base} ref=${BASEOBJ:-$BUILD/obj/base} ;;
series) make --no-print-directory -C "$TOP" kernel >&2
	src=${TREE:-$BUILD/linux} ref=${OBJ:-$BUILD/obj/series} ;;
*) die "LAYOUT_KERNEL=$KERNEL: use base or series" ;;
esac
[ -f "$src/init/main.c" ] || die "$src is not a kernel tree"
[ -f "$ref/System.map" ] || die "no unpadded build in $ref"

copy=$BUILD/layout/$pre$KERNEL
obj=$BUILD/obj/$pre$KERNEL-pad$PAD
rm -rf "$copy"
mkdir -p "$BUILD/layout"
cp -al "$src" "$copy"
# A new file, not an edit through the hard link: the source tree keeps
# its own init/main.c.  No label: a symbol would grow kallsyms' tables
# and move the data after them.
rm "$copy/init/main.c"
{
	cat "$src/init/main.c"
	printf '\n/* make layout-pad: %d bytes that move the text linked after this file */\n' "$PAD"
	printf 'asm(".pushsection .text\\n.skip %d, 0xcc\\n.popsection\\n");\n' "$PAD"
} > "$copy/init/main.c"

# shellcheck disable=SC2086 # FRAGMENTS is a list of paths
"$TOP/scripts/build-kernel.sh" "$copy" "$obj" ${FRAGMENTS:-"$TOP"/kconfig-fragments/[0-9]*.config}

python3 - "$ref/System.map" "$obj/System.map" "$PAD" <<'EOF' || exit 1
import sys
ref, new, pad = open(sys.argv[1]).read().split('\n'), open(sys.argv[2]).read().split('\n'), int(sys.argv[3])
ref = [l.split() for l in ref if l.strip()]
new = [l.split() for l in new if l.strip()]
if [r[2] for r in ref] != [n[2] for n in new]:
    sys.exit('layout-pad: error: the padded kernel has other symbols than the unpadded one')
moved = {0: 0, pad: 0}
text, data, where = [], [], {}
for r, n in zip(ref, new):
    d = int(n[0], 16) - int(r[0], 16)
    where[r[2]] = d
    if d in moved:
        moved[d] += 1
    elif r[1] in 'tTwW':
        text.append(f'{r[2]} {d:+d}')
    else:
        data.append(f'{r[2]} {d:+d}')
if text:
    sys.exit(f'layout-pad: error: {len(text)} text symbols moved by other than 0 or {pad} bytes: '
             + ', '.join(text[:5]))
if where.get('submit_bio') != pad:
    sys.exit('layout-pad: error: submit_bio() did not move')
print(f'layout-pad: {moved[pad]} symbols moved by {pad} bytes (submit_bio() among them), '
      f'{moved[0]} stayed')
if data:
    # Seen with PAD=1344 on the test configuration: the sched_class
    # structs and one switch jump table, by 576 and 192 bytes.
    print(f'layout-pad: warning: {len(data)} data symbols moved as well: ' + ', '.join(data[:10]))
EOF
echo "layout-pad: $obj/arch/x86/boot/bzImage"
