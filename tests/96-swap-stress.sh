#!/bin/bash
# vm: mem=2048 smp=4 timeout=1500
# Swap under stress, on 4 vCPUs, on the base and on the series: the races
# of the synchronous swap-in path and swap spread over two devices of
# different kinds, one of which is switched off under memory pressure.
#  1-4. zram (lzo), brd, pmem, btt, each the only swap device: swapthreads
#       (tests/tools/swapthreads.c) on 24 MiB, 4 walker threads and a
#       pageout thread, 4 rounds.  Each page has an owner thread, which
#       checks every word of it against its current version and writes
#       the next one; the other walkers fault it at the same time (a read),
#       while the pageout thread keeps calling MADV_PAGEOUT on the whole
#       set.  These devices are synchronous (SWP_SYNCHRONOUS_IO) on both
#       kernels, so do_swap_page() reads a page with a swap count of 1
#       without the swap cache and the walkers race for each pte, with
#       pages swapped in, rewritten and swapped out again under them: a
#       stale copy installed by a losing fault is caught by the owner's
#       next check or by a last pass over every page.  Fails on any page
#       that read wrong data, on too little swap (pswpin or pswpout under
#       the page count), or when swapoff fails or hangs;
#  5-6. two devices of different kinds at the same priority (so the
#       kernel spreads slots over both): zram + pmem, then brd + btt.
#       swapverify works on 96 MiB under a 32 MiB memory.max; once its
#       access phase has begun (pswpin moving) and the first device holds
#       at least SWAPOFF_MIN_KB of swap, that device is switched off
#       while swapverify runs: swapoff must succeed within 300 s (its
#       pages come back in and reclaim sends them to the other device),
#       the device must leave /proc/swaps, swapverify must verify every
#       page (random phase and a final pass over all) with no mismatch
#       and end within 600 s, and the second swapoff must succeed.
# The runner fails any subtest whose run printed a kernel report.  The
# last line is a summary: tests, page checks, mismatches, hangs.
#
# Injections (make test-inject):
#   stress-threads-corrupt  swapthreads -c on brd: one page gets a version
#                           its owner did not record, which its next
#                           check must catch;
#   stress-corrupt          in the brd + btt pair, swapverify -c flips one
#                           byte of one page before its final verify: the
#                           pair's subtest must catch it.
. /tests/lib/common.sh
SET_MB=${SET_MB:-96}
MAX_MB=$((SET_MB / 3))
OPS=${OPS:-30000}
THR_MB=${THR_MB:-24}
THREADS=${THREADS:-4}
ROUNDS=${ROUNDS:-4}
SWAPOFF_MIN_KB=${SWAPOFF_MIN_KB:-8192}

zram=$(zram_setup 256M lzo)
brd=$(brd_dev 0)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
devs=("zram:$zram" "brd:$brd" "pmem:$pmem" "btt:$btt")
ktap_plan $(( ${#devs[@]} + 2 ))
cg=$(memcg_setup swapstress "${MAX_MB}M")
SUM_PAGES=0 SUM_BAD=0 SUM_HANG=0
diag "$(nproc) CPUs online"

# 1-4: threads faulting the same pages while they are paged out.
for d in "${devs[@]}"; do
	name=${d%%:*} dev=${d#*:}
	what="$name: $THREADS threads fault the same pages while they are paged out"
	if [ ! -b "$dev" ]; then ktap_fail "$what: no device ($dev)"; continue; fi
	if ! swap_on "$dev"; then ktap_fail "$what: swapon $dev failed"; continue; fi
	flags=""
	injecting stress-threads-corrupt && [ "$name" = brd ] && flags="-c 1000"
	# shellcheck disable=SC2086
	within 900 swapthreads -s "$THR_MB" -t "$THREADS" -r "$ROUNDS" $flags > /tmp/swapthreads.out 2>&1
	rc=$?
	out=$(cat /tmp/swapthreads.out)
	[ $rc -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	within 120 swapoff "$dev"
	src=$?
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	pages=$(kv pages) pin=$(kv pswpin) pout=$(kv pswpout) bad=$(kv bad_pages)
	checks=$(kv checks) fc=$(kv failed_checks) po=$(kv pageouts) flt=$(kv majflt)
	SUM_PAGES=$((SUM_PAGES + ${checks:-0})) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	diag "$name: $pages pages, $ROUNDS rounds, $THREADS walkers: ${checks:-0} page checks, ${bad:-?} pages wrong (${fc:-?} failed checks); $po page-out passes, $flt major faults, pswpin $pin, pswpout $pout"
	if [ $rc -eq 124 ]; then
		ktap_fail "$what: swapthreads still running after 900 s"
	elif [ $rc -ne 0 ]; then
		grep swapthreads <<< "$out" | head -3 | sed 's/^/#   /'
		ktap_fail "$what: swapthreads rc=$rc, ${bad:-?} pages read wrong data"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff $dev $([ $src -eq 124 ] && echo 'hung (120 s)' || echo "failed ($src)")"
	elif [ "${pin:-0}" -lt "${pages:-1}" ] || [ "${pout:-0}" -lt "${pages:-1}" ]; then
		ktap_fail "$what: too little swap (pswpin $pin, pswpout $pout for $pages pages)"
	else
		ktap_ok "$what: $checks page checks, 0 pages wrong, pswpin $pin"
	fi
done

# 5-6: two kinds of device at once, the first switched off under pressure.
pair() {
	local first=$1 second=$2 what="$3" flags="" sv out_f=/tmp/swapstress.out
	local f=${first#*:} s=${second#*:} used=0 sused src src2 rc running=0
	local out bad ver in0 t_end
	if [ ! -b "$f" ] || [ ! -b "$s" ]; then ktap_fail "$what: no device ($f, $s)"; return; fi
	if ! swap_on "$f" || ! swap_on "$s"; then ktap_fail "$what: swapon failed"; swapoff "$f" 2>/dev/null; return; fi
	injecting stress-corrupt && [ "${first%%:*}" = brd ] && flags="-c 1000"
	in0=$(vmstat pswpin)
	# shellcheck disable=SC2086
	run_in_cg "$cg" swapverify -s "$SET_MB" -n "$OPS" -w 30 -S "$KTAP_N" $flags > $out_f 2>&1 &
	sv=$!
	# the access phase (pages coming back in) with enough on the first
	t_end=$(( $(date +%s) + 300 ))
	while [ "$(date +%s)" -lt $t_end ] && kill -0 $sv 2>/dev/null; do
		used=$(swap_used_kb "$f")
		[ "${used:-0}" -ge "$SWAPOFF_MIN_KB" ] &&
			[ $(( $(vmstat pswpin) - in0 )) -ge 256 ] && break
		sleep 0.2
	done
	sused=$(swap_used_kb "$s")
	kill -0 $sv 2>/dev/null && running=1
	within 300 swapoff "$f"
	src=$?
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	t_end=$(( $(date +%s) + 600 ))
	while kill -0 $sv 2>/dev/null && [ "$(date +%s)" -lt $t_end ]; do sleep 0.5; done
	if kill -0 $sv 2>/dev/null; then
		kill -9 $sv
		wait $sv
		rc=124
		SUM_HANG=$((SUM_HANG + 1))
	else
		wait $sv
		rc=$?
	fi
	out=$(cat $out_f)
	within 120 swapoff "$s"
	src2=$?
	[ $src2 -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	bad=$(kv mismatches) ver=$(kv pages_verified)
	SUM_PAGES=$((SUM_PAGES + ${ver:-0})) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	diag "$what: swapoff ${first%%:*} with ${used:-0} KiB on it (${sused:-0} KiB on ${second%%:*}), swapverify running: $running; swapoff rc $src; swapverify rc $rc, ${ver:-0} page checks, ${bad:-?} mismatches; swapoff ${second%%:*} rc $src2"
	if [ $rc -eq 124 ]; then
		ktap_fail "$what: swapverify still running 600 s after the swapoff"
	elif [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: swapverify rc=$rc, ${bad:-?} mismatches"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff ${first%%:*} $([ $src -eq 124 ] && echo 'hung (300 s)' || echo "failed ($src)") under pressure"
	elif grep -q "^$f " /proc/swaps; then
		ktap_fail "$what: ${first%%:*} still in /proc/swaps after swapoff"
	elif [ $src2 -ne 0 ]; then
		ktap_fail "$what: swapoff ${second%%:*} $([ $src2 -eq 124 ] && echo 'hung (120 s)' || echo "failed ($src2)") afterwards"
	elif [ "${used:-0}" -lt "$SWAPOFF_MIN_KB" ] || [ "${sused:-0}" -eq 0 ] || [ $running = 0 ]; then
		ktap_fail "$what: not under pressure at the swapoff (${used:-0} KiB on ${first%%:*}, ${sused:-0} KiB on ${second%%:*}, swapverify running: $running)"
	else
		ktap_ok "$what: $ver page checks, 0 mismatches"
	fi
}
pair "zram:$zram" "pmem:$pmem" "zram + pmem, zram switched off under pressure"
pair "brd:$brd" "btt:$btt" "brd + btt, brd switched off under pressure"

diag "summary: $KTAP_N tests, $SUM_PAGES page checks, $SUM_BAD pages wrong, $SUM_HANG hangs (kernel reports: the runner's verdict)"
ktap_done
