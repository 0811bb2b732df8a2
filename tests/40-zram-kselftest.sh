#!/bin/bash
# vm: mem=2048 timeout=600
# The tree's own zram kselftests (tools/testing/selftests/zram), run in the
# guest from a copy of the tested tree.  zram01 makes, mounts and fills an
# ext4 filesystem and checks the compression ratio; zram02 makes swap on
# zram and swaps on it.  Each script's PASS/FAIL line is one KTAP result;
# a kselftest skip (exit 4) is a KTAP skip.
. /tests/lib/common.sh
ktap_plan 2
cd /tests/kselftest/zram || { ktap_fail "zram01"; ktap_fail "zram02"; ktap_done; }
# Injections: zram-kselftest gives zram01 a compression algorithm that does
# not exist, which it must report as a failure; zram02-small gives zram02 a
# one-page device, on which mkswap and swapon must fail.
injecting zram-kselftest && sed -i 's/^zram_algs=.*/zram_algs="nosuchalg"/' zram01.sh
injecting zram02-small && sed -i 's/^zram_sizes=.*/zram_sizes="4096"/' zram02.sh
for t in zram01 zram02; do
	out=$(bash ./$t.sh 2>&1)
	rc=$?
	echo "$out" | tail -n 12 | sed 's/^/#   /'
	if [ $rc -eq 4 ]; then
		ktap_skip "kselftest zram/$t.sh"
	elif [ $rc -eq 0 ] && grep -q "$t : \[PASS\]" <<< "$out" && ! grep -q '^FAIL' <<< "$out"; then
		ktap_ok "kselftest zram/$t.sh"
	else
		ktap_fail "kselftest zram/$t.sh (rc=$rc)"
	fi
done
ktap_done
