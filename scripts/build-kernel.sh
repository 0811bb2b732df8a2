#!/bin/bash
# Configure (tinyconfig + fragments) and build a kernel out of tree.
# usage: build-kernel.sh SRC OBJ FRAGMENT...
# Honours JOBS, and uses ccache when CC is not set by the caller.
set -euo pipefail
src=$1 obj=$2
shift 2
frags=()
for f in "$@"; do frags+=("$(realpath "$f")"); done	# merge_config runs in $obj
JOBS=${JOBS:-$(nproc)}
mkdir -p "$obj"
obj=$(realpath "$obj")
src=$(realpath "$src")

die() { echo "build-kernel: error: $*" >&2; exit 1; }
[ -f "$src/Makefile" ] || die "$src is not a kernel tree (run make base)"

export ARCH=x86_64
cc="gcc"
command -v ccache >/dev/null && cc="ccache gcc"
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
export CCACHE_BASEDIR=$src
export KBUILD_BUILD_TIMESTAMP="2023-01-07"
export KBUILD_BUILD_USER=syncio KBUILD_BUILD_HOST=qemu
kmake() { make -s -C "$src" O="$obj" ARCH=x86_64 CC="$cc" -j"$JOBS" "$@"; }

# Reconfigure when the fragment list or any fragment changed.
stamp="$obj/.fragments"
want=$(for f in "${frags[@]}"; do echo "$f $(sha256sum < "$f")"; done)
if [ ! -f "$obj/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	rm -f "$stamp"	# a failed reconfiguration must not look done
	kmake tinyconfig >/dev/null
	(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${frags[@]}" >"$obj/merge.log" 2>&1) ||
		{ cat "$obj/merge.log" >&2; die "merge_config.sh failed"; }
	kmake olddefconfig >/dev/null
	# Every requested option must survive olddefconfig: the last fragment
	# that names an option wins, as in merge_config.sh.
	declare -A req=()
	for f in "${frags[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*) req[${line%%=*}]=$line ;;
			"# CONFIG_"*" is not set") o=${line#\# }; o=${o%% *}; req[$o]="# $o is not set" ;;
			esac
		done < "$f"
	done
	bad=()
	for o in "${!req[@]}"; do
		want_line=${req[$o]}
		if [[ $want_line == "# "* ]]; then
			grep -q "^$o=" "$obj/.config" && bad+=("$o: requested 'not set', got '$(grep "^$o=" "$obj/.config")'")
		else
			grep -qxF "$want_line" "$obj/.config" ||
				bad+=("$o: requested '${want_line#*=}', got '$(grep -E "^$o=|^# $o is not set" "$obj/.config" || echo absent)'")
		fi
	done
	if [ ${#bad[@]} -gt 0 ]; then
		printf 'build-kernel: requested option did not survive olddefconfig: %s\n' "${bad[@]}" >&2
		rm -f "$stamp"
		die "${#bad[@]} requested option(s) missing from $obj/.config (see above); fix kconfig-fragments/"
	fi
	echo "$want" > "$stamp"
fi

targets=(bzImage)
grep -q '^CONFIG_MODULES=y' "$obj/.config" && targets+=(modules)
kmake "${targets[@]}" ${KMAKE_EXTRA:-}
echo "build-kernel: $obj/arch/x86/boot/bzImage"
