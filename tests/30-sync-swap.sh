#!/bin/bash
# vm: mem=2048 timeout=900
# Synchronous swap in effect.  With vm.page-cluster=3, swapverify writes a
# working set, pushes it to swap with MADV_PAGEOUT and a cgroup memory.max,
# then reads it back (first sequentially, then at random), verifies every
# page, and reports major faults and pswpin.
#
# On a synchronous device (zram, brd, pmem, btt) the kernel reads exactly the
# faulting page (SWP_SYNCHRONOUS_IO bypasses the swap cache and readahead),
# so pswpin per major fault must lie in [MIN_SYNC_RATIO, MAX_SYNC_RATIO] in
# the sequential pass: above the upper bound means readahead; below the
# lower bound means faults were served without a swap-in being counted
# (another path, or PSWPIN not counted).  On a device that is not
# synchronous (a loop device over tmpfs) the sequential pass must show
# readahead: pswpin per major fault above MIN_RA_RATIO.
#
# The random pass cannot tell readahead from none: readahead shrinks its
# window to one page under random access.  It checks what it can: every
# page read back at random verifies, and (synchronous devices) pswpin per
# major fault is at least MIN_SYNC_RATIO.  On the loop device it checks
# the data only.
#
# Injections (make test-inject):
#   sync-swap-loop   the loop device is expected to be synchronous: the
#                    readahead check must fail "loop seq"
#   sync-swap-zswap  zswap, on for brd's passes, stores brd's (compressible)
#                    pages and serves their faults without pswpin: the
#                    lower bound must fail "brd seq" and "brd rand"
. /tests/lib/common.sh
SET_MB=${SET_MB:-32}
MIN_SYNC_RATIO=0.90
MAX_SYNC_RATIO=1.10
MIN_RA_RATIO=1.50

sysctl -qw vm.page-cluster=3
zram=$(zram_setup 128M lzo)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
loop=$(loop_setup 128)
devs=("zram:$zram:sync" "brd:$(brd_dev 0):sync" "pmem:$pmem:sync" "btt:$btt:sync" "loop:$loop:async")
# With syncio.inject=sync-swap-loop the loop device is expected to be
# synchronous: the readahead check must catch that it is not.
injecting sync-swap-loop && devs[4]="loop:$loop:sync"
ktap_plan $(( ${#devs[@]} * 2 ))
# MADV_PAGEOUT alone leaves pages written to an asynchronous device in the
# swap cache (writeback completes after reclaim looked at them), so the set
# also runs under a memory.max of a quarter of it: memcg reclaim frees them.
cg=$(memcg_setup syncswap "$((SET_MB / 4))M")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

for d in "${devs[@]}"; do
	IFS=: read -r name dev kind <<< "$d"
	for mode in seq rand; do
		if [ ! -b "$dev" ] || ! swap_on "$dev"; then
			ktap_fail "$name $mode: cannot swap on '$dev'"
			continue
		fi
		flags="-o -n 4000 -w 0"
		[ $mode = seq ] && flags="-o -q"
		zswap=/sys/module/zswap/parameters/enabled
		if injecting sync-swap-zswap && [ "$name" = brd ]; then
			# Compressible pages, so that zswap keeps them all.
			echo zsmalloc > /sys/module/zswap/parameters/zpool
			echo 1 > $zswap
			flags+=" -Z"
		fi
		# shellcheck disable=SC2086
		out=$(run_in_cg "$cg" swapverify -s "$SET_MB" $flags 2>&1)
		rc=$?
		[ -w $zswap ] && echo 0 > $zswap
		swapoff "$dev" || { rc=3; diag "$name $mode: swapoff failed"; }
		flt=$(sed -n 's/^access_majflt=//p' <<< "$out")
		pin=$(sed -n 's/^access_pswpin=//p' <<< "$out")
		r=$(ratio "${pin:-0}" "${flt:-0}")
		msg="$name $mode: $flt major faults, $pin pages swapped in, $r pages/fault"
		diag "$msg (fill pswpout $(sed -n 's/^fill_pswpout=//p' <<< "$out"))"
		if [ $rc -ne 0 ]; then
			grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
			ktap_fail "$msg: data mismatch or error (rc=$rc)"
		elif [ "${flt:-0}" -lt 500 ]; then
			ktap_fail "$msg: too few major faults to judge"
		elif [ "$kind" = sync ] && ! le $MIN_SYNC_RATIO "$r"; then
			ktap_fail "$msg: below $MIN_SYNC_RATIO pages per fault: faults served without a counted swap-in"
		elif [ "$kind" = sync ] && [ $mode = rand ]; then
			ktap_ok "$msg (data verified, at least $MIN_SYNC_RATIO pages/fault; random access cannot show readahead)"
		elif [ "$kind" = sync ]; then
			if le "$r" $MAX_SYNC_RATIO; then ktap_ok "$msg (synchronous: $MIN_SYNC_RATIO-$MAX_SYNC_RATIO pages/fault, no readahead)"
			else ktap_fail "$msg: readahead on a synchronous device"; fi
		elif [ $mode = seq ]; then
			if le $MIN_RA_RATIO "$r"; then ktap_ok "$msg (readahead, not synchronous)"
			else ktap_fail "$msg: no readahead on an asynchronous device"; fi
		else
			ktap_ok "$msg (asynchronous, random: data verified; pages/fault informational)"
		fi
	done
done
ktap_done
