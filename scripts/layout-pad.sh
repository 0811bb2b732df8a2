#!/bin/bash
# make layout-pad PAD=BYTES [LAYOUT_KERNEL=base|series] [KCONFIG=test|distro]
# Builds v6.1.4 (base, the default) or the whole series with BYTES of int3
# added to the text of init/main.o, into build/obj/<kernel>-pad<BYTES>
# (distro-<kernel>-pad<BYTES> with KCONFIG=distro).  The main kernel text
# linked after init/ (the mm/, fs/, block/ and drivers/ code of every I/O
# path) then lies BYTES further on; the entry text, the thunks and
# everything after _etext stay where they were, since they start at
# aligned boundaries, and no symbol is added, so kallsyms and the data do
# not move either.  The build is checked against the unpadded kernel's
# System.map: every text symbol must be where it was or exactly BYTES
# further on, submit_bio() must have moved, and no data symbol may move.
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
# shellcheck source=scripts/kernel-spec.sh
. "$TOP/scripts/kernel-spec.sh"
case $KERNEL in
base) src=${BASETREE:-$BUILD/linux-base} ;;
series) src=${TREE:-$BUILD/linux} ;;
*) die "LAYOUT_KERNEL=$KERNEL: use base or series" ;;
esac
ref=$(built_objdir "$KERNEL") || exit 1
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

# The copy's path must not reach the kernel's strings.  kbuild maps the
# tree's absolute path out of __FILE__ (-fmacro-prefix-map), but ccache
# (CCACHE_BASEDIR) hands the compiler the source path relative to the
# object directory, which that map does not match: every __FILE__ names
# the tree, and "layout/base" is longer than "linux-base" (579 strings in
# the test configuration's vmlinux, which moved the read-only data after
# them by up to 576 bytes).  Map the copy's relative path onto the
# unpadded tree's.
from=$(realpath -m --relative-to="$obj" "$copy") to=$(realpath -m --relative-to="$ref" "$src")
export KCFLAGS="${KCFLAGS:+$KCFLAGS }-fmacro-prefix-map=$from/=$to/"

# shellcheck disable=SC2086 # FRAGMENTS is a list of paths
"$TOP/scripts/build-kernel.sh" "$copy" "$obj" ${FRAGMENTS:-"$TOP"/kconfig-fragments/[0-9]*.config}

unchecked() {	# a build that failed its check must not be benchmarked
	rm -f "$obj/arch/x86/boot/bzImage"
	echo "layout-pad: error: $*; $obj/arch/x86/boot/bzImage removed" >&2
	exit 1
}
n=$(strings -a "$obj/vmlinux" | grep -cF "$from/") || true
[ "$n" = 0 ] || unchecked "$n strings of the kernel name the copy ($from/)"
python3 - "$ref/System.map" "$obj/System.map" "$PAD" <<'EOF' || unchecked "its System.map does not match the unpadded one's"
import sys
ref, new, pad = open(sys.argv[1]).read().split('\n'), open(sys.argv[2]).read().split('\n'), int(sys.argv[3])
ref = [l.split() for l in ref if l.strip()]
new = [l.split() for l in new if l.strip()]
if [r[2] for r in ref] != [n[2] for n in new]:
    sys.exit('layout-pad: error: the padded kernel has other symbols than the unpadded one')
moved = {0: 0, pad: 0}
bad, submit_bio = [], None
for r, n in zip(ref, new):
    d = int(n[0], 16) - int(r[0], 16)
    if r[2] == 'submit_bio':
        submit_bio = d
    if d == 0 or (d == pad and r[1] in 'tTwW'):
        moved[d] += 1
    else:
        bad.append(f'{r[2]} ({r[1]}) {d:+d}')
if bad:
    sys.exit(f'layout-pad: error: {len(bad)} symbols moved otherwise than text by {pad} bytes: '
             + ', '.join(bad[:10]))
if submit_bio != pad:
    sys.exit('layout-pad: error: submit_bio() did not move')
print(f'layout-pad: {moved[pad]} text symbols moved by {pad} bytes (submit_bio() among them), '
      f'{moved[0]} symbols stayed')
EOF
echo "layout-pad: $obj/arch/x86/boot/bzImage"
