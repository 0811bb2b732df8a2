#!/bin/bash
# The starting configuration of the distribution benchmark kernels
# (make ... KCONFIG=distro): Debian's own 6.1 configuration for its
# cloud-amd64 flavour, from the package linux-config-6.1, with every
# module turned off (the drivers the benchmarks use are built in by
# kconfig-fragments/distro/distro.config).  Writes $BASECONFIG
# and, beside it, the package version it came from.
#
# apt-get download checks the package against Debian's signed index; the
# .deb is kept in build/distro and used again while its version is the
# one the registry serves (or when the registry cannot be reached).
set -euo pipefail
: "${BUILD:?}" "${BASECONFIG:?}"
dir=$(dirname "$BASECONFIG")
mkdir -p "$dir"
cd "$dir"
die() { echo "distro-config: error: $*" >&2; exit 1; }

want=$(apt-cache policy linux-config-6.1 2>/dev/null | awk '/Candidate:/ { print $2 }')
deb=$(ls linux-config-6.1_*_amd64.deb 2>/dev/null | sort -V | tail -1 || true)
if [ -n "$want" ] && [ "$want" != "(none)" ] &&
   [ "$deb" != "linux-config-6.1_${want//:/%3a}_amd64.deb" ]; then
	# apt's sandbox user cannot write here; downloading as root is fine
	if apt-get download -q "linux-config-6.1=$want" >/dev/null 2>download.log; then
		rm -f "$deb"
		deb=$(ls linux-config-6.1_*_amd64.deb | sort -V | tail -1)
	elif [ -n "$deb" ]; then
		echo "distro-config: warning: apt-get download linux-config-6.1=$want failed; using the kept $deb" >&2
	else
		cat download.log >&2
		die "apt-get download linux-config-6.1=$want failed"
	fi
fi
[ -n "$deb" ] || die "no linux-config-6.1 package: apt-get update, or check the Debian registry"
ver=$(dpkg-deb -f "$deb" Version)
src=usr/src/linux-config-6.1/config.amd64_none_cloud-amd64.xz
if [ ! -f "$BASECONFIG" ] || [ "$(cat "$BASECONFIG.version" 2>/dev/null)" != "$ver" ]; then
	rm -rf x
	dpkg-deb -x "$deb" x
	[ -f "x/$src" ] || die "$deb has no $src"
	xz -dc "x/$src" > cloud-amd64.config
	rm -rf x
	# Every module off: CONFIG_X=m becomes "not set".
	sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' cloud-amd64.config > "$BASECONFIG.tmp"
	mv "$BASECONFIG.tmp" "$BASECONFIG"
	echo "$ver" > "$BASECONFIG.version"
fi
echo "distro-config: Debian linux-config-6.1 $ver, cloud-amd64, modules off: $BASECONFIG"
