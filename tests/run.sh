#!/bin/bash
# Host-side test runner: boot KERNEL under QEMU (TCG) once per test file with
# the project initramfs, collect the KTAP each test prints, fail a test on a
# kernel BUG/WARNING/Oops/KASAN/lockdep report, a panic or a timeout, and
# close with "N passed, N failed".
#
# usage: tests/run.sh KERNEL [TEST.sh ...]     (default: every tests/NN-*.sh)
# env:   SMP (2), LOGDIR (build/logs/<kernel>), TEST_TIMEOUT_SCALE (1)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TOP=${TOP:-$(dirname "$here")}
BUILD=${BUILD:-$TOP/build}
kernel=${1:?usage: tests/run.sh KERNEL [TEST.sh ...]}
shift
[ -f "$kernel" ] || { echo "run.sh: error: no kernel at $kernel (make kernel?)" >&2; exit 2; }
[ -f "$BUILD/initramfs.cpio" ] || { echo "run.sh: error: no initramfs at $BUILD/initramfs.cpio (make initramfs)" >&2; exit 2; }
export TOP BUILD
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

# Patterns of a kernel report that fails the running test.
bad_re='BUG:|WARNING:|Oops|Kernel panic|KASAN:|UBSAN:|general protection fault|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|ODEBUG:|kernel BUG at|Call Trace:'

passed=0 failed=0 skipped=0
total_start=$(date +%s)
for t in "${tests[@]}"; do
	t=$(basename "$t")
	f=$here/$t
	[ -f "$f" ] || { echo "run.sh: no test $t" >&2; failed=$((failed + 1)); continue; }
	mem=$(sed -n 's/^# vm:.*mem=\([0-9]*\).*/\1/p' "$f" | head -1)
	to=$(sed -n 's/^# vm:.*timeout=\([0-9]*\).*/\1/p' "$f" | head -1)
	extra=$(sed -n 's/^# vm-append: //p' "$f" | head -1)
	mem=${mem:-2048}
	to=$(( ${to:-600} * scale ))
	log=$logdir/${t%.sh}.log
	echo "# ---- $t (kernel $kernel, ${mem}M, ${smp} vCPUs, timeout ${to}s)"
	start=$(date +%s)
	"$TOP/scripts/qemu-run.sh" "$kernel" "$log" "$mem" "$to" "$t" "$extra ${TEST_CMDLINE:-}"
	qrc=$?
	secs=$(( $(date +%s) - start ))
	body=$(sed -n "/^SYNCIO-TEST-BEGIN $t/,/^SYNCIO-TEST-END $t/p" "$log")
	# Show the test's own KTAP and diagnostics.
	grep -E '^(KTAP|[0-9]+\.\.|ok |not ok |# )' <<< "$body"
	p=$(grep -cE '^ok [0-9]+ ' <<< "$body" | tr -d ' ')
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' <<< "$body" | tr -d ' ')
	n=$(grep -cE '^not ok [0-9]+ ' <<< "$body" | tr -d ' ')
	passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + n))
	plan=$(grep -m1 -E '^1\.\.[0-9]+' <<< "$body" | cut -d. -f3)
	if ! grep -q "^SYNCIO-TEST-END $t" "$log"; then
		why="did not finish"
		[ $qrc -eq 124 ] || [ $qrc -eq 137 ] && why="timed out after ${to}s"
		echo "not ok - $t: $why (log $log)"
		tail -n 30 "$log" | sed 's/^/#   /'
		failed=$((failed + 1))
	elif [ -n "$plan" ] && [ $((p + n)) -ne "$plan" ]; then
		echo "not ok - $t: planned $plan results, got $((p + n))"
		failed=$((failed + 1))
	fi
	if grep -qE "$bad_re" "$log"; then
		echo "not ok - $t: kernel report in the log ($log):"
		grep -m1 -B2 -A25 -E "$bad_re" "$log" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
	echo "# $t: ${secs}s, $p ok ($s skipped), $n not ok"
done
echo "# suite: $(( $(date +%s) - total_start ))s, logs in $logdir"
[ $skipped -gt 0 ] && echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
