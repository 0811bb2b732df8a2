#!/bin/bash
# make export: write the commits of the git tree's "series" branch back to
# patches/ (git format-patch, numbered file names) and rewrite series.
# Notes below "---" are kept: they are taken from git notes (refs/notes/commits)
# of each commit, as git format-patch --notes does.
set -euo pipefail
: "${TOP:?}" "${GITTREE:?}" "${BASE_VERSION:?}"
base=$(git -C "$GITTREE" rev-parse "v$BASE_VERSION^{commit}")
tmp=$(mktemp -d)
git -C "$GITTREE" format-patch -q -N --no-signature --notes --zero-commit --diff-algorithm=histogram --base="$base" \
	-o "$tmp" "$base..series"
rm -f "$TOP"/patches/*.patch
: > "$TOP/series"
for f in "$tmp"/*.patch; do
	[ -e "$f" ] || continue
	cp "$f" "$TOP/patches/"
	basename "$f" >> "$TOP/series"
done
rm -rf "$tmp"
echo "export: $(wc -l < "$TOP/series") patches in patches/, series rewritten"
