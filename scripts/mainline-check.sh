#!/bin/bash
# make mainline-check: the patches in mainline/, the mainline forms of the
# series' fixes that mainline needs too, against Debian's v6.12 source
# (package linux-source-6.12, installed if missing).  They must apply with
# git am, pass that tree's checkpatch.pl --strict (types justified in a
# patch's notes allowed, as for make checkpatch), and every file they
# touch must compile with W=1 in x86_64_defconfig with the drivers they
# touch built in, with no warning that the same file does not give
# without them.  The tree is build/mainline/linux-source-6.12 (a git
# repository made from the tarball once), objects in build/mainline/obj.
# MAINLINE_PATCHES=DIR checks the patches in DIR instead of mainline/.
set -euo pipefail
: "${TOP:?}" "${BUILD:?}"
die() { echo "mainline-check: error: $*" >&2; exit 1; }
dir_patches=$(realpath "${MAINLINE_PATCHES:-$TOP/mainline}")
mapfile -t patches < <(ls "$dir_patches"/*.patch 2>/dev/null)
[ ${#patches[@]} -gt 0 ] || die "no patches in $dir_patches"
"$TOP/scripts/deps.sh" linux-source-6.12
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -1 || true)
[ -n "$tarball" ] || die "linux-source-6.12 is installed but /usr/src/linux-source-6.12.tar.* is missing"
dir=$BUILD/mainline src=$BUILD/mainline/linux-source-6.12 obj=$BUILD/mainline/obj
mkdir -p "$dir"
# Unpacked and committed once; a run interrupted before the tag starts over.
if ! git -C "$src" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	echo "mainline-check: unpacking $tarball"
	rm -rf "$src"
	tar -C "$dir" -xf "$tarball"
	git -C "$src" init -q
	git -C "$src" add -f -A .	# Debian's .gitignore ignores the top level
	git -C "$src" -c user.name=base -c user.email=base@invalid commit -q -m "$(basename "$tarball")"
	git -C "$src" tag base
fi
version=$(make -s -C "$src" kernelversion)
git -C "$src" am --abort >/dev/null 2>&1 || true
git -C "$src" checkout -q -f --detach base
git -C "$src" clean -q -fdx
git -C "$src" -c user.name=mainline-check -c user.email=mainline-check@invalid am -q "${patches[@]}" ||
	die "a patch in $dir_patches does not apply to v$version"
echo "mainline-check: ${#patches[@]} patch(es) apply to v$version"

CHECKPATCH_PATCHES=$(printf '%s\n' "${patches[@]}") TREE=$src "$TOP/scripts/checkpatch.sh"

# The C files the patches touch; the drivers they belong to built in.
mapfile -t files < <(git -C "$src" diff --name-only base HEAD -- '*.c')
objs=()
for f in "${files[@]}"; do objs+=("${f%.c}.o"); done
[ ${#objs[@]} -gt 0 ] || die "the patches touch no C file: nothing to build"
mkdir -p "$obj"
make -s -C "$src" O="$obj" x86_64_defconfig
"$src/scripts/config" --file "$obj/.config" -e ZSMALLOC -e ZRAM -e LIBNVDIMM -e BLK_DEV_PMEM -e ND_BTT -e BTT \
	-e X86_PMEM_LEGACY -e ZONE_DEVICE -e MEMORY_HOTPLUG -e MEMORY_HOTREMOVE \
	-d WERROR	# warnings are compared below, not fatal
make -s -C "$src" O="$obj" olddefconfig
for c in ZRAM BTT; do
	grep -q "^CONFIG_$c=y" "$obj/.config" || die "CONFIG_$c is not built in after olddefconfig"
done
build() {	# build LOG: W=1 build of the touched objects, warnings to LOG
	make -s -C "$src" O="$obj" W=1 -j"$(nproc)" "${objs[@]}" 2> "$1" ||
		{ cat "$1" >&2; die "W=1 build of ${objs[*]} failed on v$version $2"; }
	{ grep -E 'warning:' "$1" || true; } | sed -E 's/:[0-9]+:[0-9]+:/:/' | sort -u
}
patched=$(git -C "$src" rev-parse HEAD)
with=$(build "$dir/build-with.log" "with the patches")
git -C "$src" checkout -q --detach base
without=$(build "$dir/build-without.log" "without the patches")
git -C "$src" checkout -q --detach "$patched"
new=$(comm -23 <(echo "$with") <(echo "$without") | sed '/^$/d')
if [ -n "$new" ]; then
	echo "mainline-check: FAIL: new W=1 warnings:"
	echo "$new" | sed 's/^/  /'
	exit 1
fi
echo "mainline-check: ok: ${objs[*]} build with W=1 on v$version, no new warnings ($(echo "$with" | sed '/^$/d' | wc -l) kinds of warning with the patches, all also without)"
