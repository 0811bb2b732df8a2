#!/bin/bash
# make stable-kernel: the base with the fixes in stable/ (for the 6.1.y
# trees without the series, not part of it) applied, built like the test
# kernel.  The tree is a worktree of the base at build/st/linux-base and
# the objects go to build/st/obj/base: the same relative path from the
# object directory to the source as for the base kernel, so that ccache
# (whose base_dir makes paths relative) serves every object the fixes do
# not touch from the base kernel's build.
set -euo pipefail
: "${TOP:?}" "${TREE:?}" "${BUILD:?}" "${BASE_VERSION:?}" "${FRAGMENTS:?}"
src=$BUILD/st/linux-base obj=$BUILD/st/obj/base
base=$(git -C "$TREE" rev-parse "v$BASE_VERSION^{commit}" 2>/dev/null || git -C "$TREE" rev-parse HEAD)
mapfile -t fixes < <(ls "$TOP"/stable/*.patch 2>/dev/null)
[ ${#fixes[@]} -gt 0 ] || { echo "stable-kernel: error: no patches in $TOP/stable" >&2; exit 2; }
mkdir -p "$BUILD/st"
[ -e "$src" ] || git -C "$TREE" worktree add -q --detach "$src" "$base"
# Apply the fixes afresh on the base, with the identity of their From: lines.
git -C "$src" am --abort >/dev/null 2>&1 || true
git -C "$src" checkout -q --detach "$base"
git -C "$src" -c user.name=stable -c user.email=stable@invalid am -q "${fixes[@]}" ||
	{ echo "stable-kernel: error: a patch in stable/ does not apply to v$BASE_VERSION" >&2; exit 1; }
echo "stable-kernel: v$BASE_VERSION + ${#fixes[@]} fix(es): $(git -C "$src" log --format=%s "$base..HEAD" | paste -sd ';')"
# shellcheck disable=SC2086
"$TOP/scripts/build-kernel.sh" "$src" "$obj" $FRAGMENTS
echo "stable-kernel: $obj/arch/x86/boot/bzImage"
