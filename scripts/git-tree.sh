#!/bin/bash
# make git-tree: a branch "series" in a git worktree of the base tree with
# one commit per patch, made with git am, for bisecting and for editing.
# Edit there, then "make export" writes the commits back to patches/.
set -euo pipefail
: "${TOP:?}" "${TREE:?}" "${GITTREE:?}" "${BASE_VERSION:?}"
base=$(git -C "$TREE" rev-parse "v$BASE_VERSION^{commit}" 2>/dev/null || git -C "$TREE" rev-parse HEAD)
if [ -e "$GITTREE" ]; then
	if [ -n "$(git -C "$GITTREE" status --porcelain --untracked-files=no)" ]; then
		echo "git-tree: error: $GITTREE has uncommitted changes; commit or stash them first" >&2
		exit 1
	fi
	git -C "$GITTREE" am --abort >/dev/null 2>&1 || true
	git -C "$GITTREE" checkout -q -B series "$base"
else
	git -C "$TREE" worktree add -q -B series "$GITTREE" "$base"
fi
git -C "$GITTREE" config user.name >/dev/null || git -C "$GITTREE" config user.name "${AUTHOR_NAME:?}"
git -C "$GITTREE" config user.email >/dev/null || git -C "$GITTREE" config user.email "${AUTHOR_EMAIL:?}"
# Keep the notes with their commits through git rebase and commit --amend.
git -C "$GITTREE" config notes.rewriteRef refs/notes/commits
n=0
while read -r p; do
	if ! git -C "$GITTREE" am -q --keep-cr "$TOP/patches/$p"; then
		git -C "$GITTREE" am --abort || true
		echo "git-tree: error: git am failed on patches/$p" >&2
		exit 1
	fi
	# The notes below "---" (format-patch --notes writes them, git am
	# drops them): back into refs/notes/commits, so that make export
	# writes them out again.
	notes=$(awk '/^---$/ { s = 1; next }
		s && !n && /^$/ { next }
		s && /^Notes:$/ { n = 1; next }
		n && /^    / { sub(/^    /, ""); print; next }
		n && /^$/ { print; next }
		s { exit }' "$TOP/patches/$p" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
	[ -z "$notes" ] || git -C "$GITTREE" notes add -f -m "$notes" HEAD
	n=$((n + 1))
done < <("$TOP/scripts/series-list.sh")
echo "git-tree: $GITTREE on branch series: v$BASE_VERSION + $n commits"
