#!/bin/bash
# Configure (tinyconfig + fragments) and build a kernel out of tree.
# usage: build-kernel.sh SRC OBJ FRAGMENT...
# With BASECONFIG set (KCONFIG=distro), the fragments are merged over that
# configuration file instead of tinyconfig.
# Honours JOBS and BUILD_KERNEL_TARGETS (kbuild targets instead of bzImage
# and modules), and uses ccache when CC is not set by the caller.
# New warnings (compiler, objtool, linker: any ": warning: " line but the
# base's own iomap_copy_64 one) are printed at the end; with
# NEW_WARNINGS=fail (make bisect-build) they fail the build (exit 99).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
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

# The options the fragments request: the last fragment that names an
# option wins, as in merge_config.sh.
declare -A req=()
for f in "${frags[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) req[${line%%=*}]=$line ;;
		"# CONFIG_"*" is not set") o=${line#\# }; o=${o%% *}; req[$o]="# $o is not set" ;;
		esac
	done < "$f"
done
# Those the tree defines: a fragment may name an option that only a later
# patch of the series adds (CONFIG_BLK_DEV_PMEM_DMA), which an earlier
# patch's tree or the base cannot have.  When a patch adds or removes one,
# the configuration is redone, so that the option is set as requested from
# the patch that adds it on, not left at its default by kbuild's syncconfig.
keys=("${!req[@]}")
syms=("${keys[@]#CONFIG_}")
defined=$(IFS='|'; grep -rhoE "^(menu)?config (${syms[*]})\$" --include='Kconfig*' "$src" |
	awk '{ print "CONFIG_" $2 }' | sort -u | tr '\n' ' ' || true)

# Reconfigure when the fragment list, any fragment or the defined set changed.
stamp="$obj/.fragments"
want=$(for f in "${frags[@]}"; do echo "$f $(sha256sum < "$f")"; done; echo "defined: $defined"
	[ -z "${BASECONFIG:-}" ] || echo "base config: $(sha256sum < "$BASECONFIG")")
if [ ! -f "$obj/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	rm -f "$stamp"	# a failed reconfiguration must not look done
	if [ -n "${BASECONFIG:-}" ]; then
		[ -f "$BASECONFIG" ] || die "no $BASECONFIG (scripts/distro-config.sh makes it)"
		cp "$BASECONFIG" "$obj/.config"
	else
		kmake tinyconfig >/dev/null
	fi
	(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${frags[@]}" >"$obj/merge.log" 2>&1) ||
		{ cat "$obj/merge.log" >&2; die "merge_config.sh failed"; }
	kmake olddefconfig >/dev/null
	# Every requested option the tree defines must survive olddefconfig.
	bad=()
	for o in "${!req[@]}"; do
		[[ " $defined" == *" $o "* ]] || continue
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

# The files the series touches are judged by content, not by mtime.  quilt
# gives every file it pops or pushes a new mtime, and make bisect-build
# walks the tree through every patch, so by mtime alone each object
# directory would rebuild everything that includes a header the series
# touches (include/linux/compiler_attributes.h: every object) after each
# bisect-build.  $obj/.srcstate records, for each such file, the content
# hash and the mtime this directory last built with: a file whose content
# is the same again gets that mtime back, any other one is made newer than
# every object here.  So make rebuilds exactly what changed since this
# directory's last build, whatever other directories built in between.
# No record (a new directory, or the last build printed a warning) means
# every watched file counts as changed.
srcstate() {
	local rec=$obj/.srcstate sha mt f
	local -A rsha=() rmt=()
	if [ -f "$rec" ]; then
		while read -r sha mt f; do rsha[$f]=$sha; rmt[$f]=$mt; done < "$rec"
	fi
	local -a files=()
	mapfile -t files < <({ TOP=${TOP:-$(dirname "$here")} "$here/series-list.sh" --files
		[ ${#rsha[@]} -eq 0 ] || printf '%s\n' "${!rsha[@]}"; } | sort -u |
		(cd "$src" && while read -r f; do [ -f "$f" ] && echo "$f"; done))
	rm -f "$rec"
	[ ${#files[@]} -gt 0 ] || return 0
	local built=0
	[ -e "$obj/include/config/auto.conf" ] && built=1
	(cd "$src" && sha1sum -- "${files[@]}") | while read -r sha f; do
		if [ "${rsha[$f]:-}" = "$sha" ]; then
			touch -m -d "@${rmt[$f]}" "$src/$f"
		elif [ $built = 1 ]; then
			touch -m "$src/$f"
		fi
		echo "$sha $(stat -c %.9Y "$src/$f") $f"
	done > "$rec.new"
	mv "$rec.new" "$rec"
}
srcstate

# BUILD_KERNEL_TARGETS replaces the default targets: make bisect-build
# links vmlinux alone at the patches before the last.  A bzImage that such
# a build leaves behind would not match vmlinux and System.map: it goes.
targets=()
read -r -a targets <<< "${BUILD_KERNEL_TARGETS:-}"
if [ ${#targets[@]} -eq 0 ]; then
	targets=(bzImage)
	grep -q '^CONFIG_MODULES=y' "$obj/.config" && targets+=(modules)
fi
image=$obj/arch/x86/boot/bzImage
[[ " ${targets[*]} " == *" bzImage "* ]] || image=
[ -n "$image" ] || rm -f "$obj/arch/x86/boot/bzImage"
log=$obj/.build-kernel.log
set +e
kmake "${targets[@]}" ${KMAKE_EXTRA:-} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
warnings=$(grep -E ': warning: ' "$log" | grep -v 'iomap_copy_64' || true)
if [ -n "$warnings" ]; then
	# The objects that warned are built: drop the record so that the next
	# build here recompiles (ccache replays the warnings) instead of
	# passing silently.
	rm -f "$obj/.srcstate"
	echo "build-kernel: new warnings:" >&2
	echo "$warnings" | sed 's/^/    /' >&2
	[ $rc -ne 0 ] || [ "${NEW_WARNINGS:-}" != fail ] || rc=99
fi
[ $rc -eq 0 ] || exit $rc
echo "build-kernel: ${image:-$obj (${targets[*]})}"
