# shellcheck shell=bash
# Sourced by bench.sh, insn-profile.sh and tcg-hostprof.sh (needs TOP and
# BUILD).
# built_objdir base|series|series@N: build that kernel if it is not up to
# date and print its build directory (the bzImage is arch/x86/boot/bzImage
# in it, System.map beside).  series@N is the series up to and including
# patch N, built in build/obj/at-NN: the quilt tree is popped to patch N
# for the build and pushed back after it.  A new at-NN starts as a copy
# of build/obj/series, so only what patches N+1.. touch is recompiled.
built_objdir() {
	case $1 in
	base) make --no-print-directory -C "$TOP" base-kernel >&2 || return 1
	      echo "${BASEOBJ:-$BUILD/obj/base}" ;;
	series) make --no-print-directory -C "$TOP" kernel >&2 || return 1
		echo "${OBJ:-$BUILD/obj/series}" ;;
	series@[0-9]*) built_at "${1#series@}" ;;
	*) echo "built_objdir: '$1' is neither base, series nor series@N" >&2
	   return 1 ;;
	esac
}

built_at() {	# built_at N
	local n=$((10#$1)) p obj rc=0
	p=$("$TOP/scripts/series-list.sh" | sed -n "${n}p")
	if [ "$n" -lt 1 ] || [ -z "$p" ]; then
		echo "built_objdir: the series has no patch $1" >&2
		return 1
	fi
	local series=${OBJ:-$BUILD/obj/series} pre=
	[ "${KCONFIG:-test}" = test ] || pre=$KCONFIG-
	obj=$BUILD/obj/${pre}at-$(printf %02d "$n")
	# Up to date (same patches 1..N, same fragments): no pop, no build, so
	# the quilt tree's files keep their times and build/obj/series is not
	# rebuilt after every use of series@N.
	if [ -f "$obj/arch/x86/boot/bzImage" ] &&
	   [ "$(cat "$obj/.series-at" 2>/dev/null)" = "$(series_at_stamp "$n")" ]; then
		echo "built_objdir: series@$n is up to date in $obj" >&2
		echo "$obj"
		return 0
	fi
	make --no-print-directory -C "$TOP" apply >&2 || return 1
	if [ ! -d "$obj" ] && [ -f "$series/.config" ]; then
		cp -a "$series" "$obj.tmp" && mv "$obj.tmp" "$obj" || return 1
	fi
	rm -f "$obj/.series-at"
	echo "built_objdir: building the series up to patch $n ($p) in $obj" >&2
	(cd "$TREE" && quilt --quiltrc=/dev/null pop -q "$p") >&2 || return 1
	# shellcheck disable=SC2086 # FRAGMENTS is a list of paths
	"$TOP/scripts/build-kernel.sh" "$TREE" "$obj" ${FRAGMENTS:-"$TOP"/kconfig-fragments/[0-9]*.config} >&2 || rc=1
	(cd "$TREE" && quilt --quiltrc=/dev/null push -a -q --fuzz=0) >&2 ||
		{ echo "built_objdir: cannot push the series back onto $TREE" >&2; return 1; }
	if [ "$rc" = 0 ]; then
		series_at_stamp "$n" > "$obj/.series-at"
		echo "$obj"
	fi
	return "$rc"
}

# series_at_stamp N: a digest of patches 1..N, the config fragments and
# the base configuration (KCONFIG=distro).
# shellcheck disable=SC2086 # FRAGMENTS is a list of paths
series_at_stamp() {
	local p
	"$TOP/scripts/series-list.sh" | head -n "$1" | while read -r p; do
		cat "$TOP/patches/$p"
	done | cat - ${FRAGMENTS:-"$TOP"/kconfig-fragments/[0-9]*.config} ${BASECONFIG:-} |
		sha256sum | cut -d' ' -f1
}

# spec_objdir NAME SPEC: the build directory of base, series or series@N
# (built if needed), or SPEC itself if it is a kernel build directory (with
# System.map and arch/x86/boot/bzImage); NAME starts the error message.
spec_objdir() {
	case $2 in
	base|series|series@[0-9]*) built_objdir "$2" ;;
	*) if [ ! -f "$2/System.map" ] || [ ! -f "$2/arch/x86/boot/bzImage" ]; then
		echo "$1: error: '$2' is not base, series, series@N or a kernel build directory" >&2
		return 1
	   fi
	   realpath "$2" ;;
	esac
}
