#!/bin/bash
# make checkpatch: every patch of the series, the stable-only fixes in
# stable/ and the patches resolved for a 6.1.y in ports/, through the base
# tree's scripts/checkpatch.pl --strict.  Any ERROR, WARNING or CHECK fails, unless
# the patch's notes below "---" justify that message type with a line
#     checkpatch: TYPE: why it is right here
# (TYPE as printed by --show-types, e.g. LONG_LINE).  CHECKPATCH_PATCHES
# (newline-separated paths) and TREE check other patches against another
# tree: make mainline-check uses them for mainline/ on v6.12.
set -uo pipefail
: "${TOP:?}" "${TREE:?}"
cp=$TREE/scripts/checkpatch.pl
[ -f "$cp" ] || { echo "checkpatch: error: $cp missing (make base)" >&2; exit 2; }
fail=0 n=0
while read -r f; do
	p=${f#"$TOP"/}
	n=$((n + 1))
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		echo "checkpatch: FAIL $p: no such readable file"
		fail=$((fail + 1))
		continue
	fi
	# Types justified in the notes (between the first "---" and the diff).
	allowed=$(awk '/^---$/ {notes=1; next} /^diff --git/ {exit} notes' "$f" |
		sed -n 's/^[[:space:]]*checkpatch: \([A-Z_][A-Z_]*\):.*/\1/p' | sort -u)
	out=$(cd "$TREE" && perl "$cp" --strict --show-types --no-summary --terse --root="$TREE" "$f" 2>&1)
	bad=""
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		type=$(sed -n 's/.*\(ERROR\|WARNING\|CHECK\):\([A-Z_]*\):.*/\2/p' <<< "$line")
		[ -n "$type" ] || continue
		if grep -qx "$type" <<< "$allowed"; then
			echo "checkpatch: $p: justified in notes: $line"
		else
			bad+="$line"$'\n'
		fi
	done <<< "$out"
	if [ -n "$bad" ]; then
		echo "checkpatch: FAIL $p:"
		printf '%s' "$bad" | sed 's/^/  /'
		fail=$((fail + 1))
	else
		echo "checkpatch: ok   $p"
	fi
done < <(if [ -n "${CHECKPATCH_PATCHES:-}" ]; then printf '%s\n' "$CHECKPATCH_PATCHES"
	else "$TOP/scripts/series-list.sh" | sed "s|^|$TOP/patches/|"
		ls "$TOP"/stable/*.patch "$TOP"/ports/*/*.patch 2>/dev/null
	fi)
echo "checkpatch: $n patches, $fail with unjustified errors/warnings/checks"
[ $fail -eq 0 ]
