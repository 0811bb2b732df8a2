#!/bin/bash
# make sparse: rebuild every C file the series touches with sparse (C=2)
# and W=1, on the base tree and on the patched tree, and fail if the
# patched tree has any warning the base does not (line numbers ignored).
set -uo pipefail
: "${TOP:?}" "${BUILD:?}" "${TREE:?}" "${BASETREE:?}" "${OBJ:?}" "${BASEOBJ:?}"
read -r -a frags <<< "$FRAGMENTS"
files=$(cat "$TOP"/patches/*.patch 2>/dev/null | sed -n 's|^+++ b/\(.*\.c\)$|\1|p' | sort -u)
[ -n "$files" ] || { echo "sparse: no C files touched"; exit 0; }
out=$BUILD/logs/sparse
mkdir -p "$out"
check() {	# check SRC OBJ LABEL
	local src=$1 obj=$2 label=$3 f
	: > "$out/$label.txt"
	for f in $files; do
		[ -f "$src/$f" ] || continue
		# W=1's warnings come from the compiler: an object that is up to
		# date would not be compiled, and its warnings not seen
		rm -f "$obj/${f%.c}.o"
		make -s -C "$src" O="$obj" ARCH=x86_64 C=2 W=1 CHECK="sparse -Wno-decl" "${f%.c}.o" 2>&1 |
			grep -E 'warning:|error:' | sed -E 's/:[0-9]+(:[0-9]+)?:/:/; s|^.*/linux[^/]*/||' >> "$out/$label.txt"
	done
	sort -u -o "$out/$label.txt" "$out/$label.txt"
}
command -v sparse >/dev/null || { echo "sparse: error: sparse is not installed (make deps)" >&2; exit 2; }
[ -f "$BASEOBJ/.config" ] || make --no-print-directory -C "$TOP" base-kernel >/dev/null || exit 1
[ -f "$OBJ/.config" ] || make --no-print-directory -C "$TOP" kernel >/dev/null || exit 1
check "$BASETREE" "$BASEOBJ" base
check "$TREE" "$OBJ" series
new=$(comm -13 "$out/base.txt" "$out/series.txt")
echo "sparse: $(echo "$files" | wc -l) files checked with C=2 W=1; base $(wc -l < "$out/base.txt") warnings, series $(wc -l < "$out/series.txt")"
if [ -n "$new" ]; then
	echo "sparse: FAIL: new warnings:"
	echo "$new" | sed 's/^/  /'
	exit 1
fi
echo "sparse: no new warnings"
