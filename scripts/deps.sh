#!/bin/bash
# Install the Debian packages the build, tests and benchmarks need, if any
# are missing.  Needs root (or sudo) only when something is missing.
# usage: scripts/deps.sh [PACKAGE ...]
# Without arguments: what make needs.  With arguments: those packages
# instead (make mail/send/mail-selftest ask for git-email and b4 this way,
# so that make and make check do not need them).
set -euo pipefail
if [ $# -gt 0 ]; then
	pkgs=("$@")
else
	pkgs=(build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils
	      git quilt ccache python3 perl kmod sparse
	      qemu-system-x86 busybox-static fio bash gnuplot-nox
	      e2fsprogs mount util-linux)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; then
	$sudo apt-get update -q >/dev/null
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null ||
		{ echo "deps: error: could not install: ${missing[*]}" >&2; exit 1; }
fi
