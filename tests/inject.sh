#!/bin/bash
# make test-inject: prove that every test family can fail, and fails where it
# should.  Each case boots one test file with syncio.inject=<case> on the
# kernel command line, which breaks one thing on purpose, and names what
# must fail:
#   - a data case names the subtests (a regular expression on the KTAP
#     description) that must be "not ok"; it is caught only when exactly
#     those are not ok, every other subtest of the file passes, and the
#     runner itself found nothing (a crash, a timeout, a plan mismatch or a
#     kernel report is not a catch);
#   - a runner case names the runner-level failure tests/judge.py must
#     report (no plan, plan mismatch, kernel report, timeout, exit status),
#     with no subtest failing.
# Prints a table (injection, test, expected failure, result) and closes with
# "N passed, N failed", passed = injections caught at their target.
# usage: tests/inject.sh KERNEL [CASE ...]    (CASE: an injection name)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$(dirname "$here")/build}
kernel=${1:?usage: tests/inject.sh KERNEL [CASE ...]}
shift

# injection|test file|subtests that must fail (regex)|runner failure (regex)|timeout
cases=(
	"raw-overwrite|10-raw-integrity.sh|^zram write bs=4k:||"
	"raw-part-overwrite|10-raw-integrity.sh|^pmem partition:||"
	"stack-corrupt|14-stacked-submit.sh|^stacked O_DIRECT:||"
	"stack-nested|14-stacked-submit.sh|^bio lists, ||"
	"stack-lower-nested|14-stacked-submit.sh|^bio lists, no nested ->submit_bio:||"
	"stack-unordered|14-stacked-submit.sh|^bio lists, lower level first:||"
	"swap-corrupt|20-swap-integrity.sh|^zram 4k pages: data mismatch||"
	"swap-slot-brd|20-swap-integrity.sh|^brd 4k pages: data mismatch||"
	"swap-slot-pmem|20-swap-integrity.sh|^pmem 4k pages: data mismatch||"
	"swap-failreq|20-swap-integrity.sh|^brd 4k pages: swapverify killed by signal 7 \\(BUS\\)||"
	"swap-nolimit|20-swap-integrity.sh|^btt 4k pages: too little swap||"
	"sync-swap-loop|30-sync-swap.sh|^loop seq:.*readahead on a synchronous device||"
	"sync-swap-zswap|30-sync-swap.sh|^brd [a-z]+:.*below||"
	"zram-kselftest|40-zram-kselftest.sh|zram01||"
	"zram02-small|40-zram-kselftest.sh|zram02||"
	"conc-corrupt|50-concurrency.sh|^swapper 1: rc=1,||"
	"conc-noswapon|50-concurrency.sh|^swapper [12]:||"
	"conc-fio-corrupt|50-concurrency.sh|^fio verify on /dev/pmem||"
	"bio-wait-corrupt|60-bio-wait.sh|^bio-wait zram:||"
	"zram-wb-corrupt|65-zram-writeback.sh|^zram writeback to ||"
	"biocache-corrupt|70-bio-cache.sh|^null_blk irqmode=2:||"
	"biocache-teardown|70-bio-cache.sh|^bio_set teardown:||"
	"biocache-pressure|70-bio-cache.sh|^global memory pressure:||"
	"dma-corrupt|80-dma-engine.sh|^dmatest on every swdma channel||"
	"pmemmq-corrupt|90-pmem-mq.sh|^mq DMA for every request||"
	"pmemmq-nodma|90-pmem-mq.sh|^mq DMA for every request||"
	"pmemmq-fail-corrupt|90-pmem-mq.sh|^mq DMA with swdma fail_every||"
	"pmemmq-reorder-corrupt|90-pmem-mq.sh|^mq DMA with swdma reorder||"
	"pmemmq-lost-write|90-pmem-mq.sh|^mq flush/FUA||"
	"pmemmq-sysfs-valid|90-pmem-mq.sh|^sysfs: bad writes||"
	"pmemmq-no-badblocks|90-pmem-mq.sh|^known bad blocks||"
	"pmemmq-raw-pages|90-pmem-mq.sh|^a namespace without struct pages||"
	"pmemmq-abort-none|90-pmem-mq.sh|^mq DMA with swdma abort_every||"
	"swaperr-corrupt|95-swap-errors.sh|^brd: swap under||"
	"swaperr-reset|95-swap-errors.sh|^zram: reset refused||"
	"stress-threads-corrupt|96-swap-stress.sh|^brd: .*swapthreads rc=1,||"
	"stress-corrupt|96-swap-stress.sh|^brd \\+ btt.*swapverify rc=1,||"
	"throttle-stall|97-swap-throttle.sh|^reclaim for \"other\" does not stall||"
	"throttle-corrupt|97-swap-throttle.sh|^zram swap, .*io.max on \"throttled\" on \(run 2\)||"
	"throttle-nolimit|97-swap-throttle.sh|^io.max wbps throttles||"
	"allocfail-corrupt|98-swap-faults.sh|^brd: swap under .*data mismatch||"
	"allocfail-none|98-swap-faults.sh|^btt: swap under .*nothing injected||"
	"pmemoff-corrupt|98-swap-faults.sh|^pmem: namespace unbound.*wrong data||"
	"runner-noplan|60-bio-wait.sh||printed no plan||"
	"runner-plan|60-bio-wait.sh||planned 7 results, printed 6||"
	"runner-report|60-bio-wait.sh||kernel report in the console log||"
	"runner-hang|60-bio-wait.sh||timed out after|120"
	"runner-exit|60-bio-wait.sh||exited with status 3||"
)
if [ $# -gt 0 ]; then
	sel=()
	for want in "$@"; do
		for c in "${cases[@]}"; do [ "${c%%|*}" = "$want" ] && sel+=("$c"); done
	done
	[ ${#sel[@]} -eq $# ] || { echo "inject.sh: unknown case among: $*" >&2; exit 2; }
	cases=("${sel[@]}")
fi

mkdir -p "$BUILD/logs"
passed=0 failed=0 n=0
table=()
echo "KTAP version 1"
echo "1..${#cases[@]}"
for c in "${cases[@]}"; do
	IFS='|' read -r inj t target runner to <<< "$c"
	n=$((n + 1))
	logdir=$BUILD/logs/inject-$inj
	t0=$(date +%s)
	KLABEL=inject-$inj LOGDIR=$logdir TEST_CMDLINE="syncio.inject=$inj" TEST_TIMEOUT=${to:-} \
		"$here/run.sh" "$kernel" "$t" > "$logdir.out" 2>&1
	secs=$(( $(date +%s) - t0 ))
	sum=$logdir/${t%.sh}.judge
	why=""
	if [ ! -f "$sum" ]; then
		why="no judgement (run.sh failed: $logdir.out)"
	elif [ -n "$runner" ]; then
		grep -qE "^runner .*$runner" "$sum" || why="runner did not report '$runner'"
		bad=$(grep -c '^result fail ' "$sum")
		[ "$bad" -eq 0 ] || why+="${why:+; }$bad subtest(s) failed too"
	else
		r=$(grep '^runner ' "$sum" | head -1)
		[ -z "$r" ] || why="runner-level failure, not a catch: ${r#runner }"
		hit=0
		while read -r _ kind num desc; do
			if grep -qE -- "$target" <<< "$desc"; then
				hit=$((hit + 1))
				[ "$kind" = fail ] || why+="${why:+; }target subtest $num still $kind: $desc"
			elif [ "$kind" = fail ]; then
				why+="${why:+; }subtest $num failed too: $desc"
			fi
		done < <(grep '^result ' "$sum")
		[ $hit -gt 0 ] || why+="${why:+; }no subtest matches '$target'"
	fi
	expect=${target:-runner: $runner}
	if [ -z "$why" ]; then
		echo "ok $n $inj: $t fails at '$expect' only (${secs}s)"
		table+=("| $inj | $t | $expect | caught (${secs}s) |")
		passed=$((passed + 1))
	else
		echo "not ok $n $inj: $t: $why (${secs}s; $logdir.out)"
		grep -E '^(not ok|# )' "$logdir.out" | head -8 | sed 's/^/#   /'
		table+=("| $inj | $t | $expect | NOT caught: $why |")
		failed=$((failed + 1))
	fi
done
echo "#"
echo "# | injection | test | expected failure | result |"
echo "# |---|---|---|---|"
printf '# %s\n' "${table[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
