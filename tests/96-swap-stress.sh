#!/bin/bash
# vm: mem=2048 smp=4 timeout=1500
# Swap under stress, on 4 vCPUs, on the base and on the series: the races
# of the synchronous swap-in path and swap spread over two devices of
# different kinds, one of which is switched off under memory pressure.
#  1-4. zram (lzo), brd, pmem, btt, each the only swap device: swapthreads
#       (tests/tools/swapthreads.c) pages 24 MiB out with MADV_PAGEOUT and
#       has 4 threads read every page in the same order at once, 4
#       rounds, one page in 3 rewritten between rounds.  These devices are
#       synchronous (SWP_SYNCHRONOUS_IO) on both kernels, so do_swap_page()
#       reads a page with a swap count of 1 without the swap cache and the
#       threads race for each pte.  Fails on any page that reads wrong
#       data (every thread checks every word of every page, then a last
#       single-threaded pass), on too little swap-in (pswpin under a third
#       of pages x rounds: the race was not exercised), or when swapoff
#       fails or hangs;
#  5-6. two devices of different kinds at the same priority (so the
#       kernel spreads slots over both): zram + pmem, then brd + btt.
#       swapverify works on 96 MiB under a 32 MiB memory.max; once the
#       first device holds at least SWAPOFF_MIN_KB of swap, it is switched
#       off while swapverify runs: swapoff must succeed within 300 s (its
#       pages come back in and reclaim sends them to the other device) and
#       the device must leave /proc/swaps; swapverify must verify every
#       page (random phase and a final pass over all) with no mismatch.
# The runner fails any subtest whose run printed a kernel report.  The
# last line is a summary: tests, pages verified, mismatches, hangs.
#
# Injection (make test-inject):
#   stress-corrupt  in the brd + btt pair, swapverify -c flips one byte
#                   of one page before its final verify: the pair's
#                   subtest must catch it.
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
kv() { sed -n "s/^$1=//p" <<< "$out"; }	# a key=value of $out

# 1-4: threads faulting the same swapped-out pages.
for d in "${devs[@]}"; do
	name=${d%%:*} dev=${d#*:}
	what="$name: $THREADS threads fault the same swapped-out pages"
	if [ ! -b "$dev" ]; then ktap_fail "$what: no device ($dev)"; continue; fi
	if ! swap_on "$dev"; then ktap_fail "$what: swapon $dev failed"; continue; fi
	out=$(swapthreads -s "$THR_MB" -t "$THREADS" -r "$ROUNDS" -k 3 2>&1)
	rc=$?
	within 120 swapoff "$dev"
	src=$?
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	pages=$(kv pages) pin=$(kv pswpin) bad=$(kv mismatches) flt=$(kv majflt)
	checks=$(( ${pages:-0} * (ROUNDS * THREADS + 1) ))
	SUM_PAGES=$((SUM_PAGES + checks)) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	diag "$name: $pages pages x $ROUNDS rounds x $THREADS threads: $checks page checks, $bad mismatches; $flt major faults, pswpin $pin"
	if [ $rc -ne 0 ]; then
		grep swapthreads <<< "$out" | head -3 | sed 's/^/#   /'
		ktap_fail "$what: swapthreads rc=$rc, ${bad:-?} pages read wrong data"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff $dev $([ $src -eq 124 ] && echo 'hung (120 s)' || echo "failed ($src)")"
	elif [ "${pin:-0}" -lt $(( ${pages:-0} * ROUNDS / 3 )) ]; then
		ktap_fail "$what: too little swap-in (pswpin $pin for $pages pages x $ROUNDS rounds)"
	else
		ktap_ok "$what: $checks page checks, 0 mismatches, pswpin $pin"
	fi
done

# 5-6: two kinds of device at once, the first switched off under pressure.
swap_used_kb() { awk -v d="$1" '$1 == d { print $4 }' /proc/swaps; }
pair() {
	local first=$1 second=$2 what="$3" flags="" sv out_f=/tmp/swapstress.out
	local f=${first#*:} s=${second#*:} used=0 src rc
	if [ ! -b "$f" ] || [ ! -b "$s" ]; then ktap_fail "$what: no device ($f, $s)"; return; fi
	if ! swap_on "$f" || ! swap_on "$s"; then ktap_fail "$what: swapon failed"; swapoff "$f" 2>/dev/null; return; fi
	injecting stress-corrupt && [ "${first%%:*}" = brd ] && flags="-c 1000"
	# shellcheck disable=SC2086
	run_in_cg "$cg" swapverify -s "$SET_MB" -n "$OPS" -w 30 -S "$KTAP_N" $flags > $out_f 2>&1 &
	sv=$!
	for _ in $(seq 1200); do
		used=$(swap_used_kb "$f")
		[ "${used:-0}" -ge "$SWAPOFF_MIN_KB" ] && break
		kill -0 $sv 2>/dev/null || break
		sleep 0.1
	done
	local sused
	sused=$(swap_used_kb "$s")
	within 300 swapoff "$f"
	src=$?
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	local running=0
	kill -0 $sv 2>/dev/null && running=1
	wait $sv
	rc=$?
	out=$(cat $out_f)
	within 120 swapoff "$s" || SUM_HANG=$((SUM_HANG + 1))
	local bad ver
	bad=$(kv mismatches) ver=$(kv pages_verified)
	SUM_PAGES=$((SUM_PAGES + ${ver:-0})) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	diag "$what: swapoff ${first%%:*} with ${used:-0} KiB on it (${sused:-0} KiB on ${second%%:*}), swapverify $([ $running = 1 ] && echo 'still running' || echo 'already done') then; rc $src; swapverify rc $rc, $ver page checks, $bad mismatches"
	if [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: swapverify rc=$rc, ${bad:-?} mismatches"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff ${first%%:*} $([ $src -eq 124 ] && echo 'hung (300 s)' || echo "failed ($src)") under pressure"
	elif grep -q "^$f " /proc/swaps; then
		ktap_fail "$what: ${first%%:*} still in /proc/swaps after swapoff"
	elif [ "${used:-0}" -lt "$SWAPOFF_MIN_KB" ] || [ "${sused:-0}" -eq 0 ] || [ $running = 0 ]; then
		ktap_fail "$what: not under pressure at the swapoff (${used:-0} KiB on ${first%%:*}, ${sused:-0} KiB on ${second%%:*}, swapverify running: $running)"
	else
		ktap_ok "$what: $ver page checks, 0 mismatches"
	fi
}
pair "zram:$zram" "pmem:$pmem" "zram + pmem, zram switched off under pressure"
pair "brd:$brd" "btt:$btt" "brd + btt, brd switched off under pressure"

diag "summary: $KTAP_N tests, 0 faults injected, $SUM_PAGES pages verified, $SUM_BAD mismatches, $SUM_HANG hangs (kernel reports: the runner's verdict)"
ktap_done
