#!/bin/bash
# make test-inject-build: prove that the build stage of make check (make
# bisect-build) catches what it is there to catch.  Each case adds a
# deliberately broken patch to a copy of the series and runs bisect-build on
# that copy, in a tree and object directories of its own under
# build/inject-build/ (build/linux and build/obj are not touched).  A case
# passes only when the failure comes from the expected build (the per-patch
# build at the expected patch, or exactly the expected variant, every other
# build passing) and that build's log shows the expected message.
#
# The states before the first injected patch are those of the real series,
# which make check itself builds; bisect-build starts at the injected patch
# (BISECT_FROM) unless INJECT_FULL=1.  The breakages are generated with
# quilt at run time (appended blocks, so they follow the series);
# INJECT_DRY=1 only generates and prints them.
# Prints KTAP, a table, and closes with "N passed, N failed".
# usage: scripts/inject-build.sh [CASE ...]
set -uo pipefail
: "${TOP:?}" "${BUILD:?}" "${TREE:?}" "${BASE_VERSION:?}"
IB=$BUILD/inject-build
itree=$IB/linux
mkdir -p "$IB"
export QUILT_PATCHES=patches QUILT_SERIES=series
qq() { (cd "$itree" && quilt --quiltrc=/dev/null "$@"); }

# A tree of its own: a git worktree of the base.  It and its object
# directories sit at the same depth as build/linux and build/obj/*, so the
# paths ccache hashes (relative to the tree, CCACHE_BASEDIR) are the real
# builds' and most objects are cache hits.
if [ ! -e "$itree/.git" ]; then
	base=$(git -C "$TREE" rev-parse "v$BASE_VERSION^{commit}" 2>/dev/null || git -C "$TREE" rev-parse HEAD)
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$itree" "$base" || { echo "inject-build: cannot make $itree"; exit 1; }
fi

# The breakages: each appends a block between markers to a file, so that
# the fix patch of the mid-series case can take it out again.
append() {	# append FILE TEXT
	printf '\n/* syncio-inject begin */\n%s\n/* syncio-inject end */\n' "$2" >> "$itree/$1"
}
unappend() { sed -i '/syncio-inject begin/,/syncio-inject end/d' "$itree/$1"; }
undeclared='static int __maybe_unused syncio_inject_%s(void)
{
	return syncio_inject_undeclared;
}'
# shellcheck disable=SC2059
edit_modules_error() { append drivers/block/brd.c "#ifdef MODULE
$(printf "$undeclared" modules)
#endif"; }
edit_modules_export() {
	append block/bdev.c 'int syncio_inject_helper(void);
int syncio_inject_helper(void)
{
	return 0;
}'
	append drivers/block/brd.c 'int syncio_inject_helper(void);
static int (*syncio_inject_ref)(void) __used = syncio_inject_helper;'
}
# shellcheck disable=SC2059
edit_noswap_error() { append drivers/block/zram/zram_drv.c "#ifndef CONFIG_SWAP
$(printf "$undeclared" noswap)
#endif"; }
# shellcheck disable=SC2059
edit_nodma_error() { append drivers/nvdimm/pmem.c "#if !IS_ENABLED(CONFIG_DMA_ENGINE)
$(printf "$undeclared" nodma)
#endif"; }
# Not in btt.c: without the pmem driver, ND_BTT is not selected and btt.c
# is not built at all.
# shellcheck disable=SC2059
edit_nopmem_error() { append block/bdev.c "#if !IS_ENABLED(CONFIG_BLK_DEV_PMEM)
$(printf "$undeclared" nopmem)
#endif"; }
edit_warning() { append drivers/block/brd.c 'void syncio_inject_warn(void);
void syncio_inject_warn(void)
{
	int syncio_inject_unused;
}'; }
# shellcheck disable=SC2059
edit_mid_series() { append drivers/block/brd.c "$(printf "$undeclared" mid)"; }
# Compiles, and fails only where vmlinux is linked: the per-patch builds
# before the last link vmlinux (scripts/bisect-build.sh).
edit_mid_link() { append drivers/block/brd.c 'int syncio_inject_nowhere(void);
int syncio_inject_link(void);
int syncio_inject_link(void)
{
	return syncio_inject_nowhere();
}'; }

n_real=$(SERIES_DIR=$TOP "$TOP/scripts/series-list.sh" | wc -l)
end=$n_real
mid=$(( n_real / 2 ))
# name|files|insert after patch|fix after patch|expected catch|message (ERE)
# expected catch: "patch N" (the per-patch build at patch N of the injected
# series) or "variant: V".
cases=(
	"modules-error|drivers/block/brd.c|$end||variant: modules|syncio_inject_undeclared"
	"modules-export|block/bdev.c drivers/block/brd.c|$end||variant: modules|modpost: \"syncio_inject_helper\" \\[drivers/block/brd\\.ko\\] undefined"
	"noswap-error|drivers/block/zram/zram_drv.c|$end||variant: noswap|syncio_inject_undeclared"
	"nodma-error|drivers/nvdimm/pmem.c|$end||variant: nodma|syncio_inject_undeclared"
	"nopmem-error|block/bdev.c|$end||variant: nopmem|syncio_inject_undeclared"
	"warning|drivers/block/brd.c|$end||patch $((end + 1))|warning: unused variable .syncio_inject_unused."
	"mid-series|drivers/block/brd.c|$mid|$((mid + 3))|patch $((mid + 1))|syncio_inject_undeclared"
	"mid-link|drivers/block/brd.c|$mid|$((mid + 3))|patch $((mid + 1))|undefined reference to .syncio_inject_nowhere."
)
if [ $# -gt 0 ]; then
	sel=()
	for want in "$@"; do
		for c in "${cases[@]}"; do [ "${c%%|*}" = "$want" ] && sel+=("$c"); done
	done
	[ ${#sel[@]} -eq $# ] || { echo "inject-build: unknown case among: $*" >&2; exit 2; }
	cases=("${sel[@]}")
fi

# mkseries NAME FILES AFTER [FIXAFTER]: $IB/series-NAME/{series,patches/},
# the series with inject-NAME.patch after patch AFTER (and, with FIXAFTER,
# inject-NAME-fix.patch taking the block out again after real patch
# FIXAFTER), made with quilt in the tree.
mkseries() {
	local name=$1 files=$2 after=$3 fixafter=${4:-} sd=$IB/series-$1 p f
	local -a real
	rm -rf "$sd"
	mkdir -p "$sd/patches"
	mapfile -t real < <(SERIES_DIR=$TOP "$TOP/scripts/series-list.sh")
	printf '%s\n' "${real[@]}" > "$sd/series"
	for p in "${real[@]}"; do cp "$TOP/patches/$p" "$sd/patches/"; done
	SERIES_DIR=$sd TREE=$itree "$TOP/scripts/quilt.sh" unapply >/dev/null || return 1
	qq push -q --fuzz=0 "${real[$((after - 1))]}" >/dev/null || return 1
	qq new "inject-$name.patch" || return 1
	for f in $files; do qq add "$f" >/dev/null || return 1; done
	"edit_${name//-/_}" || return 1
	qq refresh -p ab --no-timestamps --no-index >/dev/null || return 1
	if [ -n "$fixafter" ]; then
		qq push -q --fuzz=0 "${real[$((fixafter - 1))]}" >/dev/null || return 1
		qq new "inject-$name-fix.patch" || return 1
		for f in $files; do qq add "$f" >/dev/null || return 1; unappend "$f"; done
		qq refresh -p ab --no-timestamps --no-index >/dev/null || return 1
	fi
	qq push -a -q --fuzz=0 >/dev/null 2>&1
	qq pop -a -q >/dev/null || return 1
	rm -rf "$itree/.pc"/*.orig-patch
}

# run NAME FROM [VARIANT]: bisect-build on the injected series from patch
# FROM, then the one variant VARIANT (none without it: the other variants
# are make check's to build, and building them here would only repeat
# that); output in $IB/NAME.out.  The object directories under $IB stay
# between cases and runs, so only the first build there is a full one
# (from ccache).
run() {
	local name=$1 from=$2 v=${3:-}
	TREE=$itree OBJ=$IB/obj/series BUILD=$IB SERIES_DIR=$IB/series-$name \
		BISECT_FROM=$from SAVE_KERNELS=0 \
		BISECT_VARIANTS=$([ -n "$v" ] && echo 1 || echo 0) VARIANTS=$v \
		"$TOP/scripts/bisect-build.sh" > "$IB/$name.out" 2>&1
}

echo "KTAP version 1"
nmid=$(printf '%s\n' "${cases[@]}" | grep -c '^mid-')
[ "${INJECT_DRY:-0}" = 1 ] && nmid=0
echo "1..$(( ${#cases[@]} + nmid ))"
passed=0 failed=0 k=0
table=()
result() {	# result OK|FAIL NAME EXPECT WHY SECS
	k=$((k + 1))
	if [ "$1" = OK ]; then
		echo "ok $k $2: caught by $3 ($5s)"
		table+=("| $2 | $3 | caught ($5s) |")
		passed=$((passed + 1))
	else
		echo "not ok $k $2: expected $3: $4 ($5s; $IB/$2.out)"
		table+=("| $2 | $3 | NOT caught: $4 |")
		failed=$((failed + 1))
	fi
}
for c in "${cases[@]}"; do
	IFS='|' read -r name files after fixafter expect msg <<< "$c"
	t0=$(date +%s)
	if ! mkseries "$name" "$files" "$after" "$fixafter" > "$IB/$name.mkseries" 2>&1; then
		result FAIL "$name" "$expect" "could not make the injected series ($IB/$name.mkseries)" 0
		continue
	fi
	if [ "${INJECT_DRY:-0}" = 1 ]; then	# only make the series, show the patches
		for f in "$IB/series-$name"/patches/inject-*.patch; do echo "# $f:"; sed 's/^/#   /' "$f"; done
		result OK "$name" "$expect (dry run: series made)" "" 0
		continue
	fi
	from=$((after + 1))
	[ "${INJECT_FULL:-0}" = 1 ] && from=1
	v=
	[[ $expect == variant:* ]] && v=${expect#variant: }
	run "$name" "$from" "$v"
	rc=$?
	out=$IB/$name.out
	secs=$(( $(date +%s) - t0 ))
	why=""
	[ $rc -ne 0 ] || why="bisect-build passed"
	# Every build line: "NN patch ok|FAIL" or "variant: V ok|FAIL".
	fails=$(grep -E '^([0-9]{2} |variant: |series ).* FAIL +[0-9]+s$' "$out" | sed -E 's/ +FAIL +[0-9]+s$//')
	case $expect in
	patch*)
		num=$(printf '%02d' "${expect#patch }")
		want=$(grep -E "^$num " <<< "$fails")
		[ -n "$want" ] || why+="${why:+; }patch $num did not fail"
		others=$(grep -vE "^$num " <<< "$fails")
		;;
	variant*)
		want=$(grep -xF "$expect" <<< "$fails")
		[ -n "$want" ] || why+="${why:+; }$expect did not fail"
		others=$(grep -vxF "$expect" <<< "$fails")
		grep -qE '^bisect-build: FAIL: (first patch|patch)' "$out" && why+="${why:+; }the per-patch build failed"
		;;
	esac
	[ -z "$others" ] || why+="${why:+; }other builds failed too: $(echo $others)"
	if [ -n "$want" ]; then
		log=$(grep -A40 -F "$want" "$out" | sed -n 's/^ *(full log: \(.*\))$/\1/p' | head -1)
		if [ -z "$log" ] || ! grep -qE -- "$msg" "$log"; then
			why+="${why:+; }its log lacks /$msg/"
		fi
	fi
	if [ -z "$why" ]; then result OK "$name" "$expect" "" "$secs"; else result FAIL "$name" "$expect" "$why" "$secs"; fi
	grep -E '^([0-9]{2} |variant: |series |bisect-build:)' "$out" | sed 's/^/#   /'
	if [[ $name == mid-* ]]; then
		# Only the per-patch build can catch it: the last patch
		# builds.
		t0=$(date +%s)
		n_inj=$(SERIES_DIR=$IB/series-$name "$TOP/scripts/series-list.sh" | wc -l)
		run "$name" "$n_inj"
		rc=$?
		secs=$(( $(date +%s) - t0 ))
		grep -E '^([0-9]{2} |variant: |series |bisect-build:)' "$out" | sed 's/^/#   /'
		if [ $rc -eq 0 ]; then
			result OK "$name-top" "nothing: the last patch builds" "" "$secs"
		else
			result FAIL "$name-top" "nothing: the last patch builds" "bisect-build from patch $n_inj failed" "$secs"
		fi
	fi
done
echo "#"
echo "# | case | expected catch | result |"
echo "# |---|---|---|"
printf '# %s\n' "${table[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
