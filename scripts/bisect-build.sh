#!/bin/bash
# make bisect-build: apply the series one patch at a time on the quilt tree
# and build the test configuration after each; one line per patch with its
# result and time.  Fails naming the first patch that does not apply or
# build; a new warning is a failure too.  At the last patch, build the
# 0-day style variant configurations too (--variants-only builds just those,
# on the applied series).
#
# Object directories (README, "Build times"):
#  - every patch builds in the series' own build/obj/series, which so ends
#    at the last patch.  What a patch's build recompiles is what includes
#    the files that differ from the directory's last build; the one header
#    of the series that nearly every object includes
#    (include/linux/compiler_attributes.h) is patched first, so walking
#    the series back to patch 1 recompiles only the objects that include
#    the block, mm and driver files of the later patches;
#  - a variant's directory starts as a copy of build/obj/series at the last
#    patch: kbuild tracks, per object, the configuration symbols it reads
#    and its command line, so it recompiles only the objects the variant's
#    options can change, then links vmlinux and runs modpost.  Later runs
#    build it in place.
# build-kernel.sh judges the files the series touches by content in each
# directory (.srcstate), so walking the tree through the patches does not
# make the other directories rebuild.
#
# What each patch builds: the patches before the last link vmlinux (every
# object compiled, modpost, the kallsyms link, objtool, sorttable; the
# line says "[vmlinux]"), the last patch bzImage and modules as well.  No
# patch edits the boot image's files (arch/x86/boot) or the test
# configuration's one module (x86_pkg_temp_thermal), but both include
# headers the series changes (compiler_attributes.h, fs.h): a break there
# that a later patch mends goes unseen, for 2-4 s less per patch.
# BISECT_IMAGES=1 or SAVE_KERNELS=1 builds bzImage and modules at every
# patch.
#
# Inputs: SAVE_KERNELS=1 keeps each patch's bzImage as
# build/kernels/NN-<patch>.bzImage (for make bisect-test and make
# bisect-bench); BISECT_VARIANTS=0 skips the variants; BISECT_FROM=N pushes
# patches 1..N-1 without building them (make test-inject-build: those are
# the states of the real series, which make check builds); SERIES_DIR (see
# series-list.sh).
set -uo pipefail
: "${TOP:?}" "${TREE:?}" "${OBJ:?}" "${BUILD:?}"
export SERIES_DIR=${SERIES_DIR:-$TOP}
read -r -a frags <<< "$FRAGMENTS"
logdir=$BUILD/logs/bisect-build
mkdir -p "$logdir"
: > "$logdir/times.tsv"
export QUILT_PATCHES=patches QUILT_SERIES=series
export NEW_WARNINGS=fail
q() { (cd "$TREE" && quilt --quiltrc=/dev/null "$@"); }

# CPU seconds (user + system) of this script's finished children, in $cpu
# ("times" must run in this shell, not in a command substitution).
cpu() {
	times > "$logdir/.times"
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } printf "%.0f\n", s }' "$logdir/.times")
}
build() {	# build LABEL OBJDIR FRAGMENT...
	local label=$1 obj=$2 t0 c0 rc log
	shift 2
	log=$logdir/$(tr -c 'A-Za-z0-9._\n-' _ <<< "$label").log
	cpu; t0=$(date +%s) c0=$cpu
	"$TOP/scripts/build-kernel.sh" "$TREE" "$obj" "$@" > "$log" 2>&1
	rc=$?	# 99: built, but with new warnings (build-kernel.sh)
	printf '%-60s %s %4ss\n' "$label" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" $(( $(date +%s) - t0 ))
	# Wall and CPU seconds per build, for the README's times.
	cpu
	printf '%s\t%s\t%s\t%s\n' "$label" "$(basename "$obj")" $(( $(date +%s) - t0 )) $(( cpu - c0 )) >> "$logdir/times.tsv"
	if [ $rc -ne 0 ]; then
		grep -E 'error|warning|ERROR|undefined reference|Error [0-9]' "$log" |
			grep -v '^build-kernel: new warnings:' | head -20 | sed 's/^/    /'
		echo "    (full log: $log)"
	fi
	return $rc
}

variants() {
	local v rc=0 vobj
	for v in $VARIANTS; do
		vobj=$BUILD/obj/variant-$v
		if [ ! -e "$vobj/include/config/auto.conf" ]; then
			# A new variant directory starts from the series' objects.
			if [ ! -f "$OBJ/.srcstate" ] || [ ! -f "$OBJ/vmlinux" ]; then
				build "series (the variants start from it)" "$OBJ" "${frags[@]}" || return 1
			fi
			local t0=$(date +%s)
			rm -rf "$vobj"
			cp -a "$OBJ" "$vobj" || return 1
			# The tools' own build (objtool) records absolute paths: point
			# them at the copy, or it relinks objtool, on which every
			# object depends.
			local from=$(realpath "$OBJ") to=$(realpath "$vobj")
			grep -rlI --include='.*.cmd' --include='.*.d' -F "$from/" "$to/tools" 2>/dev/null |
				while read -r f; do sed "s|$from/|$to/|g" "$f" > "$f.new" && touch -r "$f" "$f.new" && mv "$f.new" "$f"; done
			echo "    ($vobj starts as a copy of $OBJ: $(( $(date +%s) - t0 ))s)"
		fi
		build "variant: $v" "$vobj" "${frags[@]}" "$TOP/kconfig-fragments/variant-$v.config" || rc=1
	done
	return $rc
}

if [ "${1:-}" = --variants-only ]; then
	variants
	exit
fi

"$TOP/scripts/quilt.sh" unapply >/dev/null || exit 1
mapfile -t patches < <("$TOP/scripts/series-list.sh")
n=${#patches[@]}
if [ $n -eq 0 ]; then
	build "base (empty series)" "$OBJ" "${frags[@]}" || { echo "bisect-build: the base does not build"; exit 1; }
fi
from=${BISECT_FROM:-1}
# Saved kernels are named for the patch: drop those of an older series, or
# from BISECT_FROM on, those this run builds again.
if [ "${SAVE_KERNELS:-0}" = 1 ]; then
	for f in "$BUILD"/kernels/*.bzImage; do
		[ -e "$f" ] || continue
		k=$(basename "$f")
		k=${k%%-*}
		case $k in
		[0-9][0-9]) [ "$from" -gt 1 ] && [ $((10#$k)) -lt "$from" ] && continue ;;
		esac
		rm -f "$f"
	done
fi
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	out=$(q push --fuzz=0 2>&1)
	if [ $? -ne 0 ] || grep -qiE 'fuzz|reject|FAILED' <<< "$out"; then
		echo "$out" | sed 's/^/    /'
		echo "bisect-build: FAIL: patch $i ($p) does not apply cleanly"
		exit 1
	fi
	[ $i -ge "$from" ] || continue
	targets= label=$(printf '%02d %s' "$i" "$p")
	if [ "$i" -lt "$n" ] && [ "${SAVE_KERNELS:-0}" != 1 ] && [ "${BISECT_IMAGES:-0}" != 1 ]; then
		targets=vmlinux label+=" [vmlinux]"
	fi
	if ! BUILD_KERNEL_TARGETS=$targets build "$label" "$OBJ" "${frags[@]}"; then
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
