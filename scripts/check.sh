#!/bin/bash
# make check: the harness's host-side self-tests, checkpatch, per-patch
# build (bisect-build, with the variants in CHECK_VARIANTS; make
# check-full builds all of VARIANTS), then the VM tests on the fully
# patched kernel.  Each stage that is not a VM test counts as one result;
# the closing line adds them to the VM tests' own count.
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
mkdir -p "$BUILD/logs"
passed=0 failed=0
stage() {	# stage NAME CMD...
	local name=$1 t0=$(date +%s)
	shift
	echo "### $name"
	if "$@"; then
		echo "ok - $name ($(( $(date +%s) - t0 ))s)"
		passed=$((passed + 1))
		return 0
	fi
	echo "not ok - $name ($(( $(date +%s) - t0 ))s)"
	failed=$((failed + 1))
	return 1
}
t0=$(date +%s)
# Runs a runner that closes with "N passed, N failed[, N skipped]" and adds
# its counts; a runner that closes otherwise is one failure.
add_counts() {	# add_counts LABEL CMD...
	local label=$1 out line
	shift
	out=$BUILD/logs/check-$label.out
	"$@" | tee "$out"
	line=$(tail -1 "$out")
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ [0-9]+\ skipped)?$ ]]; then
		passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
	else
		echo "not ok - $label printed no result line"
		failed=$((failed + 1))
	fi
}
echo "### host self-tests (tests/host)"
add_counts host "$TOP/tests/run-host.sh"
stage checkpatch make --no-print-directory -C "$TOP" checkpatch
stage bisect-build make --no-print-directory -C "$TOP" bisect-build BISECT_VARIANTS="${BISECT_VARIANTS:-1}" \
	VARIANTS="${CHECK_VARIANTS-}"
if stage "kernel + initramfs" make --no-print-directory -C "$TOP" kernel initramfs; then
	add_counts tests "$TOP/tests/run.sh" "${KERNEL:-$BUILD/obj/series/arch/x86/boot/bzImage}"
fi
echo "# make check: $(( $(date +%s) - t0 ))s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
