#!/bin/bash
# A pristine worktree of the base (no patches) for building the A kernel.
set -euo pipefail
: "${TREE:?}" "${BASETREE:?}" "${BASE_VERSION:?}"
base=$(git -C "$TREE" rev-parse "v$BASE_VERSION^{commit}" 2>/dev/null || git -C "$TREE" rev-parse HEAD)
if [ ! -e "$BASETREE" ]; then
	git -C "$TREE" worktree add -q --detach "$BASETREE" "$base"
fi
[ "$(git -C "$BASETREE" rev-parse HEAD)" = "$base" ] || git -C "$BASETREE" checkout -q --detach "$base"
