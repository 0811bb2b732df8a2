#!/bin/bash
# make test-inject: prove that every test family can fail.  Each test runs
# once with syncio.inject=<case> on the kernel command line, which breaks
# one thing on purpose (data overwritten behind fio's back, a page corrupted
# before swapverify's final check, a wrong expectation of synchronous swap,
# a bad compressor for the zram kselftest); the test must report "not ok".
# Closes with "N passed, N failed" where passed = injections caught.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernel=${1:?usage: tests/inject.sh KERNEL}
cases=("10-raw-integrity.sh:raw-overwrite" "20-swap-integrity.sh:swap-corrupt"
       "30-sync-swap.sh:sync-swap-loop" "40-zram-kselftest.sh:zram-kselftest"
       "50-concurrency.sh:conc-corrupt" "60-bio-wait.sh:bio-wait-corrupt")
passed=0 failed=0 n=0
echo "KTAP version 1"
echo "1..${#cases[@]}"
for c in "${cases[@]}"; do
	t=${c%%:*} inj=${c#*:}
	n=$((n + 1))
	out=$(KLABEL=inject-$inj TEST_CMDLINE="syncio.inject=$inj" "$here/run.sh" "$kernel" "$t" 2>&1)
	caught=$(grep -c '^not ok' <<< "$out")
	grep -E '^not ok' <<< "$out" | head -3 | sed 's/^/#   /'
	if [ "$caught" -gt 0 ]; then
		echo "ok $n $t catches $inj ($caught not ok)"
		passed=$((passed + 1))
	else
		echo "not ok $n $t did not catch $inj"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
