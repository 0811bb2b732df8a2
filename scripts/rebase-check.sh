#!/bin/bash
# make rebase-check [TO=6.1.N] [REBASE_SRC=orig|linux-source] [REBASE_BUILD=1]:
# does the series apply to a newer 6.1.y?  Takes the newest (or the given)
# 6.1.y source that Debian's archive serves, verifies its checksum, unpacks
# it under build/rebase/, and tries the series on it patch by patch:
#
#   applies         git apply, no fuzz (offsets allowed, as with quilt)
#   fuzz            applies only with less context (git apply -C1)
#   3-way           applies only as a 3-way merge (git am -3, with the
#                   v6.1.4 blobs of the base tree)
#   upstream        already there: the patch reverse-applies cleanly, or
#                   the tree has what the patch's notes name in a line
#                   "rebase-check: upstream-if FILE TEXT" (for a change
#                   upstream made with other text or at another place)
#   ported          conflicts, but ports/6.1.M/ of this repository has the
#                   patch resolved (M: the newest version not above N whose
#                   ports/ directory has this patch), and it applies
#   conflict        none of these
#
# and prints the table.  When no patch conflicts, the rebased series (the
# patches that are not upstream yet, regenerated with git format-patch) is
# written to build/rebase/patches/ and build/rebase/series, and the tree is
# left at build/rebase/linux-6.1.N on branch "series".  REBASE_BUILD=1 then
# builds it like make kernel (scripts/build-kernel.sh, tinyconfig + the
# fragments) in build/rebase/obj-6.1.N.
#
# Sources, in this order (REBASE_SRC=linux-source: only the second):
#   - the source package "linux" (apt-get source --download-only, through
#     the private deb-src configuration of make base, build/apt/): its
#     pristine linux_6.1.N.orig.tar.xz, sha256 checked against the .dsc
#     (which apt checks against the signed Sources index).  The archive
#     lists versions whose files it no longer serves; those are skipped;
#   - the binary package linux-source-6.1 (apt-get download): Debian's
#     patched tree in /usr/src/linux-source-6.1.tar.xz, the .deb's sha256
#     checked against the signed Packages index and the tarball's md5
#     against the package's own md5sums.
#
# Inputs: TOP BUILD TREE AUTHOR_NAME AUTHOR_EMAIL FRAGMENTS (make exports
# them); TO, REBASE_SRC, REBASE_BUILD.
set -euo pipefail
: "${TOP:?}" "${BUILD:?}" "${TREE:?}" "${AUTHOR_NAME:?}" "${AUTHOR_EMAIL:?}"
to=${TO:-}
src_kind=${REBASE_SRC:-}
rb=$BUILD/rebase
dl=$rb/dl
mkdir -p "$dl"
die() { echo "rebase-check: error: $*" >&2; exit 1; }
[ -z "$to" ] || [[ $to =~ ^6\.1\.[0-9]+$ ]] || die "TO=$to is not a 6.1.N version"
case $src_kind in ''|orig|linux-source) ;; *) die "REBASE_SRC=$src_kind: orig or linux-source" ;; esac

# The private apt configuration with deb-src entries (as make base makes it).
apt=$BUILD/apt
if [ ! -f "$apt/apt.conf" ]; then
	"$TOP/scripts/deb-src-apt.sh" "$apt" ||
		echo "rebase-check: warning: no apt sources on this machine to derive deb-src entries from"
fi
echo "rebase-check: apt-get update (deb-src, $apt)"
APT_CONFIG=$apt/apt.conf apt-get -q update > "$apt/update.log" 2>&1 ||
	echo "rebase-check: warning: apt-get update failed, using the lists as they are"
srcapt() { APT_CONFIG=$apt/apt.conf "$@"; }

# want VERSION: is this Debian version one we look for?
want() { local up=${1%-*}; up=${up%%+*}; [[ $up == 6.1.* ]] && { [ -z "$to" ] || [ "$up" = "$to" ]; }; }

tarball='' upver='' origin=''
if [ "$src_kind" != linux-source ]; then
	mapfile -t vers < <(srcapt apt-cache showsrc linux 2>/dev/null | sed -n 's/^Version: //p' | sort -urV)
	for v in "${vers[@]}"; do
		want "$v" || continue
		up=${v%-*}
		orig=linux_$up.orig.tar.xz
		dsc=linux_$v.dsc
		if [ ! -f "$dl/$dsc" ] || [ ! -f "$dl/$orig" ]; then
			echo "rebase-check: apt-get source --download-only linux=$v"
			if ! (cd "$dl" && srcapt apt-get -q source --download-only "linux=$v") > "$dl/get-$v.log" 2>&1; then
				echo "rebase-check: linux=$v: the archive lists it but does not serve its files (skipped)"
				continue
			fi
		fi
		sum=$(awk -v f="$orig" '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 }
			on && $3 == f { print $1 }' "$dl/$dsc")
		[ -n "$sum" ] || die "$dsc names no sha256 for $orig"
		got=$(sha256sum "$dl/$orig" | cut -d' ' -f1)
		[ "$got" = "$sum" ] || die "checksum mismatch for $dl/$orig
  expected sha256 $sum (from $dsc)
  got      sha256 $got"
		echo "rebase-check: $orig: sha256 $sum, as $dsc says"
		tarball=$dl/$orig upver=$up origin="Debian source package linux=$v, $orig (pristine upstream)"
		break
	done
fi
if [ -z "$tarball" ]; then
	mapfile -t vers < <(apt-cache madison linux-source-6.1 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -urV)
	for v in "${vers[@]}"; do
		want "$v" || continue
		deb=linux-source-6.1_${v}_all.deb
		if [ ! -f "$dl/$deb" ]; then
			echo "rebase-check: apt-get download linux-source-6.1=$v"
			(cd "$dl" && apt-get -q download "linux-source-6.1=$v") > "$dl/get-$v.log" 2>&1 ||
				{ echo "rebase-check: linux-source-6.1=$v is not served (skipped)"; continue; }
		fi
		sum=$(apt-cache show "linux-source-6.1=$v" | sed -n 's/^SHA256: //p' | head -1)
		got=$(sha256sum "$dl/$deb" | cut -d' ' -f1)
		[ "$got" = "$sum" ] || die "checksum mismatch for $dl/$deb: index says $sum, file is $got"
		up=${v%-*}
		t=$dl/linux-source-$v.tar.xz
		if [ ! -f "$t" ]; then
			dpkg-deb --fsys-tarfile "$dl/$deb" | tar -xO ./usr/src/linux-source-6.1.tar.xz > "$t.tmp"
			md5=$(dpkg-deb --ctrl-tarfile "$dl/$deb" | tar -xO ./md5sums | awk '$2 == "usr/src/linux-source-6.1.tar.xz" { print $1 }')
			[ "$(md5sum < "$t.tmp" | cut -d' ' -f1)" = "$md5" ] || die "$deb: md5 of linux-source-6.1.tar.xz is not its md5sums'"
			mv "$t.tmp" "$t"
		fi
		echo "rebase-check: $deb: sha256 $sum as the Packages index says; tarball md5 as its md5sums say"
		tarball=$t upver=$up origin="Debian binary package linux-source-6.1=$v (Debian's patched tree)"
		break
	done
fi
[ -n "$tarball" ] || die "no 6.1${to:+ ($to)} source served by the archive"

# The tree: one commit tagged v$upver, on which the series is tried.
tree=$rb/linux-$upver
tag=v$upver
if ! git -C "$tree" rev-parse -q --verify "refs/tags/$tag" >/dev/null 2>&1; then
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	echo "rebase-check: unpacking $(basename "$tarball")"
	tar -C "$tree.tmp" -xf "$tarball" --strip-components=1
	(
		cd "$tree.tmp"
		git init -q -b base
		git config core.autocrlf false
		git config gc.auto 0
		git add -A -f .
		GIT_AUTHOR_NAME="Linux $upver" GIT_AUTHOR_EMAIL="tarball@localhost" \
		GIT_COMMITTER_NAME="Linux $upver" GIT_COMMITTER_EMAIL="tarball@localhost" \
			git commit -q -m "Linux $upver ($origin)"
		git tag "$tag"
	)
	mv "$tree.tmp" "$tree"
fi
git -C "$tree" config user.name "$AUTHOR_NAME"
git -C "$tree" config user.email "$AUTHOR_EMAIL"
# git am -3 needs the blobs the patches' index lines name: the base tree's
# object store, read only, as an alternate.
alt=$(git -C "$TREE" rev-parse --path-format=absolute --git-common-dir)/objects
grep -qxF "$alt" "$tree/.git/objects/info/alternates" 2>/dev/null ||
	echo "$alt" >> "$tree/.git/objects/info/alternates"
git -C "$tree" am --abort >/dev/null 2>&1 || true
git -C "$tree" checkout -q -f -B series "$tag"
git -C "$tree" clean -fdq

# The port of patch P for this version: ports/V/P of the newest V not
# newer than it that has P (a port made for 6.1.187 serves later 6.1.y
# until one of them needs its own).
port_for() {
	local d v n
	[[ $upver =~ ^6\.1\.([0-9]+)$ ]] || return 1
	n=${BASH_REMATCH[1]}
	while read -r v; do
		[ -f "$TOP/ports/$v/$1" ] && { echo "ports/$v/$1"; return 0; }
	done < <(for d in "$TOP"/ports/6.1.*/; do
			v=$(basename "$d")
			[[ $v =~ ^6\.1\.([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le "$n" ] && echo "$v"
		done | sort -t. -k3,3nr)
	return 1
}

echo "rebase-check: the series on $upver ($origin)"
printf '%-4s %-60s %s\n' patch subject result
declare -A res=()
kept=()
conflicts=0 k=0
while read -r p; do
	k=$((k + 1))
	f=$TOP/patches/$p
	s=$(sed -n 's/^Subject: \(\[[^]]*\] \)\{0,1\}//p' "$f" | head -1)
	detail=
	# A patch whose change upstream made in other words says how to see
	# it in its notes: "rebase-check: upstream-if FILE TEXT" (TEXT, a
	# fixed string, present in FILE of the target tree).
	mark=$(sed -n '/^---$/,/^diff --git /s/^    rebase-check: upstream-if //p' "$f" | head -1)
	if [ -n "$mark" ] && grep -qF -- "${mark#* }" "$tree/${mark%% *}" 2>/dev/null; then
		r=upstream
		detail="${mark%% *} has \"${mark#* }\""
	elif git -C "$tree" apply --check "$f" 2>/dev/null; then
		r=applies
		git -C "$tree" am -q --keep-cr "$f"
	elif git -C "$tree" apply --check -R "$f" 2>/dev/null; then
		r=upstream
	elif git -C "$tree" apply --check -C1 "$f" 2>/dev/null; then
		r=fuzz
		git -C "$tree" am -q --keep-cr -C1 "$f"
	elif git -C "$tree" am -q --keep-cr -3 "$f" >/dev/null 2>&1; then
		r=3-way
	elif port=$(port_for "$p") &&
	     { git -C "$tree" am --abort >/dev/null 2>&1 || true; } &&
	     git -C "$tree" am -q --keep-cr -3 "$TOP/$port" >/dev/null 2>&1; then
		r=ported
		detail=$port
	else
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		r=conflict
		detail=$(git -C "$tree" apply --check "$f" 2>&1 | sed -n 's/^error: patch failed: //p' | paste -sd' ' - || true)
		conflicts=$((conflicts + 1))
	fi
	[ "$r" = upstream ] || [ "$r" = conflict ] || kept+=("$p")
	res[$r]=$(( ${res[$r]:-0} + 1 ))
	printf '%-4s %-60.60s %s\n' "$(printf '%02d' "$k")" "$s" "$r${detail:+ ($detail)}"
done < <("$TOP/scripts/series-list.sh")
summary=
for r in applies fuzz 3-way ported upstream conflict; do summary+="${summary:+, }${res[$r]:-0} $r"; done
echo "rebase-check: $upver: $summary"

if [ "$conflicts" -gt 0 ]; then
	echo "rebase-check: $conflicts conflicting; no rebased series written"
	exit 1
fi
rm -rf "$rb/patches"
git -C "$tree" format-patch -q -N --no-signature --zero-commit --diff-algorithm=histogram \
	--base="$tag" -o "$rb/patches" "$tag..series"
( cd "$rb/patches" && ls -- *.patch ) > "$rb/series"
echo "rebase-check: rebased series ($(wc -l < "$rb/series") patches) in $rb/patches and $rb/series; tree $tree, branch series"
if [ "${REBASE_BUILD:-}" = 1 ]; then
	: "${FRAGMENTS:?}"
	# shellcheck disable=SC2086 # FRAGMENTS is a list of paths
	"$TOP/scripts/build-kernel.sh" "$tree" "$rb/obj-$upver" $FRAGMENTS
	echo "rebase-check: bzImage: $rb/obj-$upver/arch/x86/boot/bzImage (make test KERNEL=... boots it)"
fi
