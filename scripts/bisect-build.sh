#!/bin/bash
# make bisect-build: apply the series one patch at a time on the quilt tree
# and build the test configuration after each; one line per patch with its
# result and time.  Fails naming the first patch that does not apply or
# build.  At the last patch, build the 0-day style variant configurations
# too (--variants-only builds just those, on the applied series).
# SAVE_KERNELS=1 keeps each patch's bzImage as build/kernels/NN-<patch>.bzImage
# (for make bisect-test and make bisect-bench).
set -uo pipefail
: "${TOP:?}" "${TREE:?}" "${OBJ:?}" "${BUILD:?}"
read -r -a frags <<< "$FRAGMENTS"
logdir=$BUILD/logs/bisect-build
mkdir -p "$logdir"
export QUILT_PATCHES=patches QUILT_SERIES=series
q() { (cd "$TREE" && quilt --quiltrc=/dev/null "$@"); }

build() {	# build LABEL OBJDIR FRAGMENT...
	local label=$1 obj=$2 t0 rc log
	shift 2
	log=$logdir/$(tr -c 'A-Za-z0-9._\n-' _ <<< "$label").log
	t0=$(date +%s)
	"$TOP/scripts/build-kernel.sh" "$TREE" "$obj" "$@" > "$log" 2>&1
	rc=$?
	# New compiler warnings are failures too.
	if [ $rc -eq 0 ] && grep -E ': warning: |: error: ' "$log" | grep -v 'iomap_copy_64' | grep -q .; then
		rc=99
	fi
	printf '%-60s %s %4ss\n' "$label" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" $(( $(date +%s) - t0 ))
	if [ $rc -ne 0 ]; then
		grep -E 'error|warning' "$log" | head -20 | sed 's/^/    /'
		echo "    (full log: $log)"
	fi
	return $rc
}

variants() {
	local v rc=0
	for v in $VARIANTS; do
		build "variant: $v" "$BUILD/obj/variant-$v" "${frags[@]}" "$TOP/kconfig-fragments/variant-$v.config" || rc=1
	done
	return $rc
}

if [ "${1:-}" = --variants-only ]; then
	variants
	exit
fi

"$TOP/scripts/quilt.sh" unapply >/dev/null || exit 1
mapfile -t patches < <("$TOP/scripts/series-list.sh")
if [ ${#patches[@]} -eq 0 ]; then
	build "base (empty series)" "$OBJ" "${frags[@]}" || { echo "bisect-build: the base does not build"; exit 1; }
fi
# Saved kernels are named for the patch: drop those of an older series.
[ "${SAVE_KERNELS:-0}" = 1 ] && rm -f "$BUILD"/kernels/*.bzImage
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	out=$(q push --fuzz=0 2>&1)
	if [ $? -ne 0 ] || grep -qiE 'fuzz|reject|FAILED' <<< "$out"; then
		echo "$out" | sed 's/^/    /'
		echo "bisect-build: FAIL: patch $i ($p) does not apply cleanly"
		exit 1
	fi
	if ! build "$(printf '%02d %s' "$i" "$p")" "$OBJ" "${frags[@]}"; then
		echo "bisect-build: FAIL: first patch that does not build: $i ($p)"
		exit 1
	fi
	if [ "${SAVE_KERNELS:-0}" = 1 ]; then
		mkdir -p "$BUILD/kernels"
		cp "$OBJ/arch/x86/boot/bzImage" "$BUILD/kernels/$(printf %02d "$i")-${p%.patch}.bzImage"
	fi
done
"$TOP/scripts/quilt.sh" apply >/dev/null || exit 1
if [ "${BISECT_VARIANTS:-1}" = 1 ]; then
	variants || { echo "bisect-build: FAIL: a variant configuration does not build at the last patch"; exit 1; }
fi
echo "bisect-build: ${#patches[@]} patches, each builds"
