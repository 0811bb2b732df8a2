#!/bin/bash
# Host-side self-test of the VM test runner (tests/run.sh + tests/judge.py),
# no VM: every recorded log shape under tests/host/fixtures/runner/ (a good
# run, a skip, a failure, no plan, no output, death before the plan, a plan
# mismatch, a non-zero exit, results misnumbered, a kernel report, kmemleak
# switching itself off (its leak scan void), a timeout,
# a log cut short, a test that never started, a plan line split by a kernel
# message on the console) is run through tests/run.sh with a stand-in for
# scripts/qemu-run.sh that replays the recorded console and KTAP logs.
# Each broken shape must end in "N passed, M failed" with M >= 1 and the
# expected reason; each good one in exactly its own counts.  The recorded-*
# fixtures are real logs of the series kernel (recorded-good: a clean run;
# the others: make test-inject's runner cases); the rest are shaped after
# them.  Prints KTAP.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests=$(dirname "$here")
fix=$here/fixtures/runner
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A TOP whose scripts/qemu-run.sh replays $RUNNER_FIXTURE.
mkdir -p "$tmp/top/scripts" "$tmp/build"
cat > "$tmp/top/scripts/qemu-run.sh" <<'EOF'
#!/bin/bash
# qemu-run.sh KERNEL LOG MEM TIMEOUT SCRIPTS EXTRA: replay a fixture.
[ "$1" = --check-smp ] && exit 0
cp "$RUNNER_FIXTURE/console.log" "$2"
cp "$RUNNER_FIXTURE/ktap.log" "$KTAP_LOG"
exit "$(cat "$RUNNER_FIXTURE/qrc")"
EOF
chmod +x "$tmp/top/scripts/qemu-run.sh"
: > "$tmp/build/initramfs.cpio"
: > "$tmp/bzImage"

cases=("$fix"/*/)
echo "KTAP version 1"
echo "1..$(( ${#cases[@]} * 2 ))"
n=0 bad=0
check() {	# check DESC CONDITION-STATUS DETAILS
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		sed 's/^/#   /' <<< "$3"
		bad=$((bad + 1))
	fi
}

for c in "${cases[@]}"; do
	c=${c%/}
	name=$(basename "$c")
	read -r kind rest < "$c/expect"
	# The test file the fixture was recorded for (default 10-raw-integrity.sh).
	t=10-raw-integrity.sh
	[ -f "$c/name" ] && t=$(cat "$c/name")
	# 1. The judge alone: its summary must say what the fixture expects.
	out=$(python3 "$tests/judge.py" "$t" "$c/console.log" "$c/ktap.log" \
		"$(cat "$c/qrc")" 600 --summary "$tmp/summary" 2>&1)
	sum=$(cat "$tmp/summary" 2>/dev/null)
	if [ "$kind" = counts ]; then
		grep -qx "counts $rest" <<< "$sum" && ! grep -q '^runner ' <<< "$sum"
		check "judge: $name gives exactly counts $rest" $? "$out"
	else
		grep -q "^runner $rest" <<< "$sum" && grep -qE '^counts [0-9]+ [0-9]+ [1-9]' <<< "$sum"
		check "judge: $name is a failure: $rest" $? "$out"
	fi
	# 2. The whole runner: its closing line.
	out=$(TOP=$tmp/top BUILD=$tmp/build LOGDIR=$tmp/logs RUNNER_FIXTURE=$c \
		"$tests/run.sh" "$tmp/bzImage" "$t" 2>&1)
	rc=$?
	last=$(tail -n 1 <<< "$out")
	if [ "$kind" = counts ]; then
		read -r p s f <<< "$rest"
		want="$p passed, $f failed"
		[ "$s" -gt 0 ] && want+=", $s skipped"
		ok=1
		if [ "$last" = "$want" ]; then
			# run.sh exits 0 exactly when nothing failed.
			{ [ "$f" -eq 0 ] && [ $rc -eq 0 ]; } || { [ "$f" -gt 0 ] && [ $rc -ne 0 ]; } && ok=0
		fi
		[ $ok -eq 0 ]
		check "run.sh: $name closes with '$want'" $? "$out"
	else
		[[ $last =~ ^[0-9]+\ passed,\ [1-9][0-9]*\ failed ]] && [ $rc -ne 0 ] &&
			grep -q "^not ok - $t: $rest" <<< "$out"
		check "run.sh: $name fails the run ('$last')" $? "$out"
	fi
done
exit $((bad > 0))
