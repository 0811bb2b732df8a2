#!/bin/bash
# Build the test initramfs from Debian packages (busybox-static, bash, fio,
# e2fsprogs, bc) and this project's own code (tests/, static C tools, the
# tree's zram kselftests).  Rebuilt only when an input changed.
set -euo pipefail
: "${TOP:?}" "${BUILD:?}" "${TREE:?}"
out=$BUILD/initramfs.cpio
stage=$BUILD/initramfs
tools_src=$TOP/tests/tools
tools_bin=$BUILD/tools

die() { echo "mkinitramfs: error: $*" >&2; exit 1; }
for b in /bin/busybox /bin/bash /usr/bin/fio /sbin/mke2fs /usr/bin/bc /sbin/swapon /sbin/losetup; do
	[ -x "$b" ] || die "$b is missing (make deps)"
done

# Static C tools.
mkdir -p "$tools_bin"
for c in "$tools_src"/*.c "$TOP"/benchmarks/tools/*.c; do
	[ -f "$c" ] || continue
	b=$tools_bin/$(basename "$c" .c)
	if [ ! -x "$b" ] || [ "$c" -nt "$b" ]; then
		gcc -O2 -Wall -Wextra -Werror -static -pthread -o "$b" "$c" -lm ||
			die "could not build $c"
	fi
done

inputs=$( (find "$TOP/tests" "$TOP/benchmarks/guest" "$TOP/scripts/mkinitramfs.sh" "$tools_bin" -type f \
		-not -path '*/tools/*.c' -print0 | sort -z | xargs -0 sha256sum;
	   sha256sum /bin/busybox /bin/bash /usr/bin/fio) | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.inputs" 2>/dev/null)" = "$inputs" ]; then
	exit 0
fi

rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,run,mnt,root,etc,tests,var}
cp /bin/busybox "$stage/bin/"
for a in $(/bin/busybox --list); do
	[ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
done

copy_bin() {	# copy a dynamic binary and the libraries it needs
	local b=$1 dst=$2
	cp -L "$b" "$stage$dst"
	ldd "$b" | awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/lib/ {print $1}' |
	while read -r l; do
		[ -e "$stage$l" ] && continue
		mkdir -p "$stage$(dirname "$l")"
		cp -L "$l" "$stage$l"
	done
}
rm -f "$stage/bin/bash" "$stage/bin/bc"
copy_bin /bin/bash /bin/bash
copy_bin /usr/bin/fio /usr/bin/fio
copy_bin /sbin/mke2fs /sbin/mke2fs
copy_bin /usr/bin/bc /usr/bin/bc
for m in mkfs.ext4 mkfs.ext2; do ln -sf mke2fs "$stage/sbin/$m"; done
# util-linux tools: busybox lacks swapon -p, losetup --show and blkdiscard -z.
for b in swapon swapoff mkswap losetup blkdiscard; do
	rm -f "$stage/bin/$b"
	copy_bin "/sbin/$b" "/sbin/$b"
done
cp "$tools_bin"/* "$stage/bin/"

# Tests and the kselftests they run.
cp -r "$TOP/tests/." "$stage/tests/"
rm -rf "$stage/tests/tools"
mkdir -p "$stage/bench"
cp -r "$TOP/benchmarks/guest/." "$stage/bench/"
mkdir -p "$stage/tests/kselftest"
cp -r "$TREE/tools/testing/selftests/zram" "$stage/tests/kselftest/"
cp "$TOP/tests/lib/init" "$stage/init"
chmod +x "$stage/init"
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$stage/etc/passwd"
printf 'root:x:0:\n' > "$stage/etc/group"

# Uncompressed: fio's libraries are large and TCG decompresses slowly.
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
echo "$inputs" > "$out.inputs"
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1))"
