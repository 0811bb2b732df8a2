#!/bin/bash
# Fetch the pinned v6.1.4 base and turn it into a git tree tagged v6.1.4.
#
# Inputs (environment, all optional):
#   KSRC=/path/to/linux.git   use a git worktree of this tree at $BASE instead
#   BASE=v6.1.4               the ref of KSRC to use
#   BASE_TARBALL=/path        use this linux_6.1.4.orig.tar.xz instead of apt
# Output: $TREE, a git repository whose HEAD is tagged v6.1.4 (pristine).
set -euo pipefail

: "${TREE:?}" "${BUILD:?}" "${BASE_SHA256:?}" "${DEB_VERSION:?}" "${BASE_VERSION:?}"
BASE=${BASE:-v$BASE_VERSION}
tarname="linux_${BASE_VERSION}.orig.tar.xz"
dl="$BUILD/dl"

die() { echo "fetch-base: error: $*" >&2; exit 1; }

if [ -d "$TREE/.git" ] || [ -f "$TREE/.git" ]; then
	if git -C "$TREE" rev-parse -q --verify "refs/tags/v$BASE_VERSION" >/dev/null ||
	   git -C "$TREE" rev-parse -q --verify "$BASE" >/dev/null; then
		echo "fetch-base: $TREE already present"
		exit 0
	fi
	die "$TREE exists but has no $BASE; remove it (make distclean) and retry"
fi

mkdir -p "$dl"

if [ -n "${KSRC:-}" ]; then
	git -C "$KSRC" rev-parse --git-dir >/dev/null 2>&1 ||
		die "KSRC=$KSRC is not a git repository"
	git -C "$KSRC" rev-parse -q --verify "$BASE^{commit}" >/dev/null ||
		die "KSRC=$KSRC has no ref '$BASE'; fetch it (git -C $KSRC fetch --tags) or set BASE="
	echo "fetch-base: adding a detached worktree of $KSRC at $BASE (your checkout is not touched)"
	git -C "$KSRC" worktree add --detach "$(realpath -m "$TREE")" "$BASE"
	# Give the worktree the tag name the rest of the pipeline uses.
	if ! git -C "$TREE" rev-parse -q --verify "refs/tags/v$BASE_VERSION" >/dev/null; then
		echo "fetch-base: note: $BASE is used as the base; the tag v$BASE_VERSION is not in KSRC"
	fi
	exit 0
fi

tarball="${BASE_TARBALL:-$dl/$tarname}"
if [ -z "${BASE_TARBALL:-}" ] && [ ! -f "$tarball" ]; then
	# Private apt configuration derived from the machine's own sources
	# (deb-src instead of deb); no system file is modified.
	apt="$BUILD/apt"
	"$(dirname "$0")/deb-src-apt.sh" "$apt" ||
		die "no apt sources on this machine; give BASE_TARBALL=/path/to/$tarname or KSRC=/path/to/linux.git"
	export APT_CONFIG="$apt/apt.conf"
	echo "fetch-base: apt-get update (private configuration in $apt)"
	apt-get -q update >"$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; die "apt-get update failed"; }
	( cd "$dl" && apt-get -q source --download-only "linux=$DEB_VERSION" ) ||
		die "could not download Debian source package linux=$DEB_VERSION; give BASE_TARBALL=/path/to/$tarname or KSRC=/path/to/linux.git"
fi
[ -f "$tarball" ] || die "BASE_TARBALL=$tarball does not exist"

echo "fetch-base: verifying $tarball"
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$sum" != "$BASE_SHA256" ]; then
	die "checksum mismatch for $tarball
  expected sha256 $BASE_SHA256
  got      sha256 $sum
Delete the file (or fix BASE_TARBALL) and run make base again."
fi

tmp="$TREE.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "fetch-base: extracting"
tar -C "$tmp" -xf "$tarball" --strip-components=1
(
	cd "$tmp"
	git init -q -b base
	git config core.autocrlf false
	git config gc.auto 0
	git add -A -f .
	GIT_AUTHOR_DATE="2023-01-07 00:00:00 +0000" GIT_COMMITTER_DATE="2023-01-07 00:00:00 +0000" \
	GIT_AUTHOR_NAME="Linux $BASE_VERSION" GIT_AUTHOR_EMAIL="tarball@localhost" \
	GIT_COMMITTER_NAME="Linux $BASE_VERSION" GIT_COMMITTER_EMAIL="tarball@localhost" \
		git commit -q -m "Linux $BASE_VERSION (Debian $tarname, sha256 $BASE_SHA256)"
	git tag "v$BASE_VERSION"
	printf '%s\n' .pc /patches /series >> .git/info/exclude
)
mv "$tmp" "$TREE"
echo "fetch-base: $TREE ready at tag v$BASE_VERSION ($(git -C "$TREE" rev-parse --short HEAD))"
