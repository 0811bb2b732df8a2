#!/bin/bash
# make stable-kernel: the base with the fixes in stable/ (for the 6.1.y
# trees without the series, not part of it) and the series' patches marked
# for stable applied, built like the test
# kernel.  The tree is a worktree of the base at build/st/linux-base and
# the objects go to build/st/obj/base: the same relative path from the
# object directory to the source as for the base kernel, so that ccache
# (whose base_dir makes paths relative) serves every object the fixes do
# not touch from the base kernel's build.
set -euo pipefail
: "${TOP:?}" "${TREE:?}" "${BUILD:?}" "${BASE_VERSION:?}" "${FRAGMENTS:?}"
src=$BUILD/st/linux-base obj=$BUILD/st/obj/base
base=$(git -C "$TREE" rev-parse "v$BASE_VERSION^{commit}" 2>/dev/null || git -C "$TREE" rev-parse HEAD)
# The fixes: stable/ (for bugs the series removes with their code), then
# the series' own patches marked for stable (Cc: stable@vger.kernel.org),
# which fix bugs of v6.1.4 that the series keeps and apply to it alone.
mapfile -t fixes < <(ls "$TOP"/stable/*.patch 2>/dev/null
	while read -r p; do
		grep -q '^Cc: stable@vger.kernel.org' "$TOP/patches/$p" && echo "$TOP/patches/$p"
	done < <("$TOP/scripts/series-list.sh"))
[ ${#fixes[@]} -gt 0 ] || { echo "stable-kernel: error: no patches in $TOP/stable and none marked for stable in the series" >&2; exit 2; }
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
