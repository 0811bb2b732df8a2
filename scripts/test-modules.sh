#!/bin/bash
# Build tests/modules/ against the kernel under test and print the path of
# an initramfs for it: the project initramfs with /tests/modules/*.ko
# appended as a second cpio archive (the kernel unpacks both).  Prints
# nothing, and the runner uses the plain initramfs, when the kernel has no
# object directory beside it (a copied bzImage), no module support or no
# dmaengine core (the KCONFIG=distro benchmark kernels); the tests that
# need a module then say so.
# usage: scripts/test-modules.sh KERNEL
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
kernel=$(realpath "$1")
obj=${kernel%/arch/x86/boot/bzImage}
[ "$obj" != "$kernel" ] && [ -f "$obj/Module.symvers" ] && grep -q '^CONFIG_MODULES=y' "$obj/.config" || exit 0
grep -q '^CONFIG_DMA_ENGINE=y' "$obj/.config" || exit 0
key=$(cat "$obj/include/config/kernel.release" "$obj/Module.symvers" "$TOP"/tests/modules/* "$BUILD/initramfs.cpio" | sha256sum | cut -c1-16)
out=$BUILD/test-modules/$key
if [ ! -f "$out/initramfs.cpio" ]; then
	rm -rf "$out"
	mkdir -p "$out/src" "$out/root/tests/modules"
	cp "$TOP"/tests/modules/* "$out/src/"
	if ! make -s -C "$obj" M="$out/src" modules > "$out/build.log" 2>&1; then
		echo "test-modules: error: tests/modules does not build against $obj (log: $out/build.log)" >&2
		sed 's/^/    /' "$out/build.log" | tail -20 >&2
		exit 1
	fi
	if grep -E ': warning: ' "$out/build.log" >&2; then
		echo "test-modules: error: warnings building tests/modules (log: $out/build.log)" >&2
		exit 1
	fi
	cp "$out"/src/*.ko "$out/root/tests/modules/"
	{ cat "$BUILD/initramfs.cpio"; (cd "$out/root" && find tests | cpio -o -H newc --quiet); } > "$out/initramfs.cpio.new" &&
		mv "$out/initramfs.cpio.new" "$out/initramfs.cpio"
fi
echo "$out/initramfs.cpio"
