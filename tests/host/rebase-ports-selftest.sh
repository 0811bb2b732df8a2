#!/bin/bash
# Host-side self-test of make rebase-check's choice of a port
# (port_for() in scripts/rebase-check.sh, no download, no kernel tree): a
# port in ports/6.1.M/ serves a 6.1.N with M <= N until a newer directory
# has the same patch; a directory for a later version is never used; a
# version that is not 6.1.N gets no port; the ports/ directories the
# repository ships hold format-patch files whose name is a patch of the
# series.  Prints KTAP.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$(dirname "$here")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eval "$(sed -n '/^port_for() {/,/^}/p' "$top/scripts/rebase-check.sh")"
declare -F port_for >/dev/null || { echo "1..0 # SKIP port_for() not found"; exit 1; }

TOP=$tmp
mkdir -p "$TOP/ports/6.1.9" "$TOP/ports/6.1.187" "$TOP/ports/6.1.192" "$TOP/ports/notes"
touch "$TOP/ports/6.1.9/A" "$TOP/ports/6.1.187/A" "$TOP/ports/6.1.187/B" \
	"$TOP/ports/6.1.192/C" "$TOP/ports/notes/A"
# upver  A B C (- for none)
cases=(
	"6.1.8 - - -"
	"6.1.9 6.1.9 - -"
	"6.1.100 6.1.9 - -"
	"6.1.187 6.1.187 6.1.187 -"
	"6.1.190 6.1.187 6.1.187 -"
	"6.1.192 6.1.187 6.1.187 6.1.192"
	"6.1.200 6.1.187 6.1.187 6.1.192"
	"6.1.192+x - - -"
	"6.2.1 - - -"
)
n=0
echo "KTAP version 1"
echo "1..$(( ${#cases[@]} + 1 ))"
for c in "${cases[@]}"; do
	read -r upver ea eb ec <<< "$c"
	n=$((n + 1))
	got= want=
	for p in A B C; do
		case $p in A) e=$ea ;; B) e=$eb ;; C) e=$ec ;; esac
		r=$(port_for "$p") || r=-
		want+=" $p=$( [ "$e" = - ] && echo - || echo "ports/$e/$p")"
		got+=" $p=$r"
	done
	if [ "$got" = "$want" ]; then
		echo "ok $n port for $upver:$got"
	else
		echo "not ok $n port for $upver:$got, expected$want"
	fi
done
# The shipped ports: each is named as a patch of the series and is a patch.
n=$((n + 1))
bad=
for f in "$top"/ports/*/*.patch; do
	[ -e "$f" ] || continue
	grep -qxF "$(basename "$f")" "$top/series" || bad+=" $(basename "$f"): not in series"
	grep -q '^diff --git ' "$f" || bad+=" $(basename "$f"): no diff"
done
if [ -z "$bad" ]; then
	echo "ok $n every file in ports/ is named as a patch of the series and holds a diff"
else
	echo "not ok $n ports/:$bad"
fi
