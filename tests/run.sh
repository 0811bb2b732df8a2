#!/bin/bash
# Host-side test runner: boot KERNEL under QEMU (TCG) once per test file with
# the project initramfs, collect the KTAP each test prints and judge it with
# tests/judge.py (no plan, no result, a plan mismatch, a non-zero exit, a
# timeout or a kernel report fail the test file), and close with
# "N passed, N failed".
#
# usage: tests/run.sh KERNEL [TEST.sh ...]     (default: every tests/NN-*.sh)
# env:   SMP (2), LOGDIR (build/logs/<kernel>), TEST_TIMEOUT_SCALE (1),
#        TEST_TIMEOUT (seconds, overrides every test's own), TEST_CMDLINE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TOP=${TOP:-$(dirname "$here")}
BUILD=${BUILD:-$TOP/build}
kernel=${1:?usage: tests/run.sh KERNEL [TEST.sh ...]}
shift
[ -f "$kernel" ] || { echo "run.sh: error: no kernel at $kernel (make kernel?)" >&2; exit 2; }
[ -f "$BUILD/initramfs.cpio" ] || { echo "run.sh: error: no initramfs at $BUILD/initramfs.cpio (make initramfs)" >&2; exit 2; }
export TOP BUILD
"$TOP/scripts/qemu-run.sh" --check-smp || exit 2
if [ $# -gt 0 ]; then
	tests=("$@")
elif [ -n "${TESTS:-}" ]; then
	read -r -a tests <<< "$TESTS"
else
	tests=()
	for t in "$here"/[0-9][0-9]-*.sh; do tests+=("$(basename "$t")"); done
fi
label=${KLABEL:-$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$kernel")")")")")}
logdir=${LOGDIR:-$BUILD/logs/$label}
mkdir -p "$logdir"
smp=${SMP:-2}
scale=${TEST_TIMEOUT_SCALE:-1}

# The test modules (tests/modules/), built for this kernel when it can load
# them: an initramfs with them appended.
initrd=
if [ -x "$TOP/scripts/test-modules.sh" ]; then	# (absent in the runner's self-test)
	initrd=$("$TOP/scripts/test-modules.sh" "$kernel") || exit 2
fi
[ -z "$initrd" ] || echo "# test modules: $initrd"
export INITRD=${initrd:-$BUILD/initramfs.cpio}

passed=0 failed=0 skipped=0
total_start=$(date +%s)
for t in "${tests[@]}"; do
	t=$(basename "$t")
	f=$here/$t
	[ -f "$f" ] || { echo "not ok - run.sh: no test $t"; failed=$((failed + 1)); continue; }
	mem=$(sed -n 's/^# vm:.*mem=\([0-9]*\).*/\1/p' "$f" | head -1)
	to=$(sed -n 's/^# vm:.*timeout=\([0-9]*\).*/\1/p' "$f" | head -1)
	extra=$(sed -n 's/^# vm-append: //p' "$f" | head -1)
	tsmp=$(sed -n 's/^# vm:.*smp=\([0-9]*\).*/\1/p' "$f" | head -1)
	tsmp=${tsmp:-$smp}
	mem=${mem:-2048}
	to=$(( ${TEST_TIMEOUT:-${to:-600}} * scale ))
	log=$logdir/${t%.sh}.log
	ktap=$logdir/${t%.sh}.ktap
	rm -f "$log" "$ktap"
	echo "# ---- $t (kernel $kernel, ${mem}M, ${tsmp} vCPUs, timeout ${to}s)"
	start=$(date +%s)
	# The test's output goes to a second serial port (syncio.ktap=ttyS1),
	# apart from the kernel console: see tests/judge.py.
	KTAP_LOG=$ktap SMP=$tsmp "$TOP/scripts/qemu-run.sh" "$kernel" "$log" "$mem" "$to" "$t" \
		"syncio.ktap=ttyS1 $extra ${TEST_CMDLINE:-}"
	qrc=$?
	secs=$(( $(date +%s) - start ))
	out=$(python3 "$here/judge.py" "$t" "$log" "$ktap" "$qrc" "$to" \
		--seconds "$secs" --summary "$logdir/${t%.sh}.judge")
	grep -v '^JUDGE ' <<< "$out"
	p= s= n=
	read -r _ p s n < <(grep '^JUDGE ' <<< "$out")
	if [ -z "${n:-}" ]; then
		echo "not ok - $t: the judge failed (run.sh bug)"
		p=0 s=0 n=1
	fi
	passed=$((passed + p)); skipped=$((skipped + s)); failed=$((failed + n))
done
echo "# suite: $(( $(date +%s) - total_start ))s, logs in $logdir"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
