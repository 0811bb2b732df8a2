#!/bin/bash
# Host-side self-tests of the harness (no VM, seconds): run every executable
# file in tests/host/, judge its KTAP with tests/judge.py exactly as a VM
# test is judged (plan, result count, exit status), close with
# "N passed, N failed".
# usage: tests/run-host.sh [tests/host/NAME ...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$(dirname "$here")/build}
logdir=$BUILD/logs/host
mkdir -p "$logdir"
if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=()
	for t in "$here"/host/*; do
		[ -f "$t" ] && [ -x "$t" ] && tests+=("$t")
	done
fi
passed=0 failed=0 skipped=0
for t in "${tests[@]}"; do
	name=$(basename "$t")
	k=$logdir/$name.ktap
	t0=$(date +%s)
	{ echo "SYNCIO-TEST-BEGIN $name"; "$t" 2>&1; echo "SYNCIO-TEST-END $name rc=$?"; } > "$k"
	out=$(python3 "$here/judge.py" "$name" /dev/null "$k" 0 0 \
		--seconds $(( $(date +%s) - t0 )) --summary "$logdir/$name.judge")
	grep -v '^JUDGE ' <<< "$out"
	p= s= n=
	read -r _ p s n < <(grep '^JUDGE ' <<< "$out")
	[ -n "${n:-}" ] || { echo "not ok - $name: the judge failed"; p=0 s=0 n=1; }
	passed=$((passed + p)); skipped=$((skipped + s)); failed=$((failed + n))
done
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
