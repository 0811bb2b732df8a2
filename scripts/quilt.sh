#!/bin/bash
# quilt on the work tree with this repository's patches/ and series.
# Fuzz is a defect: pushes use --fuzz=0 and any reject fails loudly.
# SERIES_DIR (default $TOP) holds the series file and patches/.
set -euo pipefail
SERIES_DIR=${SERIES_DIR:-$TOP}
cd "$TREE"
ln -sfn "$SERIES_DIR/patches" patches
ln -sfn "$SERIES_DIR/series" series
export QUILT_PATCHES=patches QUILT_SERIES=series
quilt() { command quilt --quiltrc=/dev/null "$@"; }

# Has the series changed under applied patches?  Then pop first.
resync() {
	local applied
	# Read quilt's own record: "quilt applied" refuses to answer once the
	# series no longer lists an applied patch, which is the case here.
	applied=$(cat .pc/applied-patches 2>/dev/null || true)
	[ -n "$applied" ] || return 0
	local i=0 p
	mapfile -t want < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]].*//' "$SERIES_DIR/series")
	while read -r p; do
		p=${p#patches/}
		if [ "${want[$i]:-}" != "$p" ] || ! cmp -s "$SERIES_DIR/patches/$p" ".pc/$p.orig-patch" 2>/dev/null; then
			echo "quilt: series or patch changed at $p; popping all"
			quilt pop -a -f -q >/dev/null
			rm -rf .pc/*.orig-patch
			return 0
		fi
		i=$((i + 1))
	done <<< "$applied"
}

case "$1" in
apply)
	resync
	if [ -z "$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$SERIES_DIR/series")" ]; then
		echo "quilt: series is empty; tree stays at the base"
		exit 0
	fi
	out=$(quilt push -a --fuzz=0 2>&1) && rc=0 || rc=$?
	if [ $rc -eq 2 ] && grep -q 'File series fully applied' <<< "$out"; then
		echo "quilt: series fully applied ($(quilt applied | wc -l) patches)"
		exit 0
	fi
	if [ $rc -ne 0 ] || grep -qiE 'fuzz|reject|FAILED' <<< "$out"; then
		echo "$out" >&2
		top=$(quilt next 2>/dev/null || quilt top 2>/dev/null || true)
		echo "quilt: error: patch ${top#patches/} does not apply cleanly (fuzz or rejects are defects); fix it in patches/" >&2
		exit 1
	fi
	for p in $(quilt applied); do cp "$SERIES_DIR/patches/${p#patches/}" ".pc/${p#patches/}.orig-patch"; done
	echo "quilt: series applied ($(quilt applied | wc -l) patches)"
	;;
unapply)
	# Not "quilt applied": it refuses to answer when the series changed.
	if [ -s .pc/applied-patches ]; then
		quilt pop -a -f -q >/dev/null
	fi
	rm -rf .pc/*.orig-patch
	echo "quilt: tree at base"
	;;
*) echo "usage: $0 apply|unapply" >&2; exit 2 ;;
esac
