#!/bin/bash
# vm: mem=2048 timeout=1500
# Priority inversion through blk-throttle on swap, on the base and on the
# series.  On v6.1.4 swap to zram went through ->rw_page and never met
# blk-throttle; on the series a swap-out is a bio charged to the memory
# cgroup of the page it writes (swap_bio_set_dev()), and on a
# synchronous device the writer waits for it in submit_bio_wait().  So
# an io.max write limit of one cgroup could make reclaim on behalf of
# anybody else (kswapd, another cgroup's direct reclaim) wait on that
# limit whenever it picks that cgroup's pages.
#
# Setup: zram (lzo) as the only swap, both checkers with compressible
# content (swapverify -Z), so that a swap-out frees memory; a ramfs file
# pins RAM so that about LEFT_MB MiB stay available; two cgroups without
# memory limits:
# "throttled", whose zram writes io.max limits to WBPS bytes and WIOPS
# writes per second in the limited runs, and "other".
#
# 1. the limit works: an 8 MiB O_DIRECT write from "throttled" to brd
#    with the same wbps takes at least 1.5 s and at least 3 times as
#    long as the same write without a limit (so the setup can throttle).
#    The limit is WBPS (2 MiB/s), or an eighth of the rate of that
#    unlimited write when the guest is slower than 8 times WBPS (a
#    debug kernel, a loaded host), in 4 KiB/s steps and 64 KiB/s at
#    least: a limit the guest cannot reach unlimited could not tell,
#    here or in 5, a limit that holds from one that does not.  (A guest
#    that needs more than about 40 s for the unlimited write meets the
#    64 KiB/s floor and fails here.)
# 2-4. the pair, three times: without the limit, with it, without it.
#    "throttled" fills A_MB MiB with swapverify and pauses (-P); "other"
#    fills B_MB MiB, which does not fit beside it, so that global reclaim
#    swaps out the cold pages of "throttled"; then both verify every page.
#    Timed: the fill of "other".  Each run fails on a mismatch, a checker
#    that failed or hung, or when "throttled" had less than MIN_OUT_MB
#    swapped out during the fill of "other" (no pressure, nothing
#    measured).
# 5. the stall: fails when the limited run did not finish (no fill
#    time), when the fill of "other" in it took more than STALL_MAX times
#    the slower of the two unlimited runs (reclaim for "other" stalled
#    behind the limit of "throttled"), or, where swap-outs are bios
#    charged to "throttled" (its io.stat wbytes on zram move), when they
#    went out at no more than 1.5 times WBPS during that fill: the limit
#    held them back (judged only when both unlimited runs swapped out at
#    3 times WBPS or more; nearer the limit the rate cannot tell).  The
#    rate check needs no timing margin; on a kernel whose zram swap
#    bypasses bios (v6.1.4's ->rw_page) nothing is charged and only the
#    time is judged.  In the limited run the limit is read back from
#    io.max, so that a limit that did not take cannot pass for one that
#    was not needed.
# A summary line: fill times, the stall ratio, MiB of "throttled"
# swapped out during each fill, pages verified, mismatches, hangs.
#
# Injection (make test-inject):
#   throttle-stall  the verdict's bound drops to 0.5 (a limited run
#                   "stalls" when it takes half as long as the slower
#                   unlimited one): subtest 5 must report it.  This
#                   exercises the verdict only; the kernel-side proof that
#                   subtest 5 fails is the series before its blk-throttle
#                   patch, where the limited run does stall.
#   throttle-corrupt  "throttled" flips a byte of one page before its final
#                   verify in the limited run (swapverify -c): subtest 3
#                   must fail.
#   throttle-nolimit  subtest 1's limited write is made with the limit
#                   set to max, as on a kernel where io.max has no effect
#                   on the write: subtest 1 must fail (its time is then
#                   that of the unlimited write, far below 3 times it).
. /tests/lib/common.sh
LEFT_MB=${LEFT_MB:-320}
A_MB=${A_MB:-192}
B_MB=${B_MB:-224}
WBPS_MAX=${WBPS:-2097152}
WBPS=$WBPS_MAX
WIOPS=${WIOPS:-512}
STALL_MAX=${STALL_MAX:-2}
injecting throttle-stall && STALL_MAX=0.5
MIN_OUT_MB=${MIN_OUT_MB:-16}
HOG=/tmp/thr-hog
R=/sys/fs/cgroup

ktap_plan 5
SUM_PAGES=0 SUM_BAD=0 SUM_HANG=0
now() { cut -d' ' -f1 /proc/uptime; }
since() { echo "$(now) $1" | awk '{ printf "%.2f", $1 - $2 }'; }

echo "+memory +io" > $R/cgroup.subtree_control 2>/dev/null
CA=$R/throttled CB=$R/other
mkdir -p $CA $CB
ZDEV=$(zram_setup 768M lzo)
ZMM=$(cat "/sys/block/$(basename "$ZDEV")/dev")
BDEV=$(brd_dev 1)
BMM=$(cat "/sys/block/$(basename "$BDEV")/dev")
setup_err=""
[ -w $CA/io.max ] || setup_err="no io.max (kernel without CONFIG_BLK_DEV_THROTTLING)"
[ -n "$setup_err" ] || swap_on "$ZDEV" || setup_err="swapon $ZDEV failed"

# limit DEV_MM CG on|off
limit() {
	if [ "$3" = on ]; then
		echo "$1 wbps=$WBPS wiops=$WIOPS" > "$2/io.max"
	else
		echo "$1 wbps=max wiops=max" > "$2/io.max"
	fi
}

# 1: the limit throttles an ordinary write.
rc=0
what="io.max wbps throttles an 8 MiB O_DIRECT write to brd from the cgroup, and only with the limit"
if [ -n "$setup_err" ]; then
	diag "$setup_err"
	rc=1
else
	t=$(now)
	run_in_cg $CA dd if=/dev/zero of="$BDEV" bs=64k count=128 oflag=direct 2>/dev/null || rc=1
	free_s=$(since "$t")
	# an eighth of the unlimited rate, in 4 KiB/s steps, 64 KiB/s at
	# least, WBPS at most
	WBPS=$(awk -v s="$free_s" -v m="$WBPS_MAX" 'BEGIN {
		r = int(8388608 / (s > 0.01 ? s : 0.01) / 8 / 4096) * 4096
		if (r < 65536) r = 65536
		print (r < m ? r : m) }')
	lim_desc="wbps=$WBPS wiops=$WIOPS"
	if injecting throttle-nolimit; then
		limit "$BMM" $CA off
		lim_desc="io.max at max (throttle-nolimit)"
	else
		limit "$BMM" $CA on
	fi
	t=$(now)
	run_in_cg $CA dd if=/dev/zero of="$BDEV" bs=64k count=128 oflag=direct 2>/dev/null || rc=1
	lim_s=$(since "$t")
	limit "$BMM" $CA off
	diag "8 MiB to brd: $free_s s without the limit, $lim_s s with $lim_desc"
	awk -v a="$free_s" -v b="$lim_s" 'BEGIN { exit !(b >= 1.5 && b >= 3 * a) }' || rc=1
fi
ktap_result $rc "$what"

# Pin RAM (no swap is used yet) so that about LEFT_MB MiB stay available.
mkdir -p $HOG && mount -t ramfs ramfs $HOG
avail=$(meminfo_mib MemAvailable)
pin=$((avail - LEFT_MB))
[ $pin -gt 0 ] && dd if=/dev/zero of=$HOG/pin bs=1M count=$pin 2>/dev/null
diag "$avail MiB available, $pin MiB pinned, $(meminfo_mib MemAvailable) MiB left; A $A_MB MiB, B $B_MB MiB"

# wbytes: what "throttled" wrote to zram so far (io.stat), 0 if nothing.
wbytes() {
	local w
	w=$(sed -n "s/^$ZMM .*wbytes=\([0-9]*\).*/\1/p" $CA/io.stat)
	echo "${w:-0}"
}

LIMIT_OK=1
# pair LABEL on|off: one run; sets FILL_S (the fill of "other", seconds),
# OUT_MB (MiB of "throttled" swapped out meanwhile), WOUT (bytes it was
# charged as zram writes meanwhile) and returns non-zero
# on a failure, with diag lines saying which.
pair() {
	local label=$1 lim=$2 rc=0 apid arc brc
	rm -f /tmp/thr.ready /tmp/thr.go
	limit "$ZMM" $CA "$lim"
	local cflag=""
	[ "$lim" = on ] && injecting throttle-corrupt && cflag="-c 100"
	# shellcheck disable=SC2086 # cflag: empty or an option and its value
	run_in_cg $CA swapverify -Z -s "$A_MB" -n 4000 -w 20 -S 11 $cflag -P /tmp/thr > /tmp/thrA.out 2>&1 &
	apid=$!
	for _ in $(seq 1200); do
		[ -e /tmp/thr.ready ] && break
		kill -0 $apid 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -e /tmp/thr.ready ]; then
		diag "$label: the fill of \"throttled\" did not finish in 120 s"
		SUM_HANG=$((SUM_HANG + 1))
		touch /tmp/thr.go
		limit "$ZMM" $CA off
		FILL_S=0 OUT_MB=0 WOUT=0
		return 1
	fi
	if [ "$lim" = on ] &&
	   ! grep -q "^$ZMM .*wbps=$WBPS .*wiops=$WIOPS" $CA/io.max; then
		diag "$label: the limit did not take: io.max reads '$(cat $CA/io.max)'"
		LIMIT_OK=0
	fi
	local s0 s1 w0 w1
	s0=$(cat $CA/memory.swap.current)
	w0=$(wbytes)
	# busybox timeout in the foreground, not within(): bash 5.2 polling a
	# background job lost track of a child here on the KASAN kernel
	# ("wait_for: No record of process N", the test shell gone with 254)
	run_in_cg $CB timeout 600 swapverify -Z -s "$B_MB" -n 0 -S 12 > /tmp/thrB.out 2>&1
	brc=$?
	# timed out: busybox timeout ends it with SIGTERM
	[ $brc -eq 143 ] && brc=124
	s1=$(cat $CA/memory.swap.current)
	w1=$(wbytes)
	WOUT=$((w1 - w0))
	# the limit off before "throttled" reads its pages back
	limit "$ZMM" $CA off
	touch /tmp/thr.go
	for _ in $(seq 6000); do
		kill -0 $apid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $apid 2>/dev/null; then
		arc=124
	else
		wait $apid
		arc=$?
	fi
	FILL_S=$(sed -n 's/^fill_seconds=//p' /tmp/thrB.out)
	FILL_S=${FILL_S:-0}
	OUT_MB=$(( (s1 - s0) >> 20 ))
	local v
	for v in A B; do
		SUM_PAGES=$((SUM_PAGES + $(sed -n 's/^pages_verified=//p' /tmp/thr$v.out | head -1)))
		SUM_BAD=$((SUM_BAD + $(sed -n 's/^mismatches=//p' /tmp/thr$v.out | head -1)))
	done 2>/dev/null
	[ $brc -eq 124 ] && { SUM_HANG=$((SUM_HANG + 1)); diag "$label: \"other\" hung (600 s)"; rc=1; }
	[ $arc -eq 124 ] && { SUM_HANG=$((SUM_HANG + 1)); diag "$label: \"throttled\" hung (600 s)"; rc=1; }
	if [ $brc -ne 0 ] && [ $brc -ne 124 ]; then
		rc=1
		diag "$label: swapverify of \"other\" failed (rc $brc): $(grep swapverify /tmp/thrB.out | head -2 | tr '\n' ' ')"
	fi
	if [ $arc -ne 0 ] && [ $arc -ne 124 ]; then
		rc=1
		diag "$label: swapverify of \"throttled\" failed (rc $arc): $(grep swapverify /tmp/thrA.out | head -2 | tr '\n' ' ')"
	fi
	if [ $OUT_MB -lt "$MIN_OUT_MB" ]; then
		rc=1
		diag "$label: only $OUT_MB MiB of \"throttled\" swapped out while \"other\" filled (at least $MIN_OUT_MB needed)"
	fi
	diag "$label: fill of \"other\" $FILL_S s, $OUT_MB MiB of \"throttled\" swapped out meanwhile, $((WOUT >> 20)) MiB charged to it as zram writes; throttled: $(grep -E '^(pages_verified|mismatches)=' /tmp/thrA.out | tr '\n' ' '); other: $(grep -E '^(pages_verified|mismatches|fill_pswpout)=' /tmp/thrB.out | tr '\n' ' ')"
	[ -n "$(sed -n "s/^$ZMM //p" $CA/io.stat)" ] && diag "$label: io.stat of \"throttled\" on zram: $(sed -n "s/^$ZMM //p" $CA/io.stat)"
	return $rc
}

F1=0 F2=0 F3=0 O1=0 O2=0 O3=0 W1=0 W2=0 W3=0
for i in 1 2 3; do
	lim=off
	[ $i = 2 ] && lim=on
	what="zram swap, \"other\" fills $B_MB MiB beside $A_MB MiB of \"throttled\", io.max on \"throttled\" $lim (run $i)"
	if [ -n "$setup_err" ]; then
		ktap_fail "$what"
		continue
	fi
	rc=0
	pair "run $i ($lim)" $lim || rc=1
	eval "F$i=$FILL_S O$i=$OUT_MB W$i=$WOUT"
	if [ $i = 3 ]; then
		# judge the limited run against the slower run without it
		ref=$(awk -v a="$F1" -v b="$F3" 'BEGIN { print (a > b ? a : b) }')
		ratio=$(awk -v l="$F2" -v r="$ref" 'BEGIN { printf "%.2f", (r > 0 ? l / r : 0) }')
		diag "stall: the fill of \"other\" took $F2 s with the limit against $F1 and $F3 s without it: $ratio times the slower"
		STALLED=0
		awk -v x="$ratio" -v m="$STALL_MAX" 'BEGIN { exit !(x > m) }' && STALLED=1
	fi
	ktap_result $rc "$what"
done
rm -f $HOG/pin
umount $HOG
swapoff "$ZDEV" 2>/dev/null
rc=0
what="reclaim for \"other\" does not stall behind the io.max of \"throttled\" (limited run within ${STALL_MAX}x, swap-outs not held to the limit)"
# times_wbps BYTES SECONDS: that write rate in units of WBPS, 2 decimals
times_wbps() {
	awk -v w="$1" -v t="$2" -v b="$WBPS" 'BEGIN { printf "%.2f", (t > 0 ? w / t / b : 0) }'
}
rate="" urate=""
if [ "$W2" -gt 0 ]; then
	rate=$(times_wbps "$W2" "$F2")
	# the slower of the two unlimited runs, in the same unit
	urate=$(awk -v x="$(times_wbps "$W1" "$F1")" -v y="$(times_wbps "$W3" "$F3")" \
		'BEGIN { print (x < y ? x : y) }')
	diag "in the limited run \"throttled\" wrote $((W2 >> 20)) MiB to zram in $F2 s: $rate times its wbps ($urate without the limit, the slower run)"
else
	diag "nothing charged to \"throttled\" on zram: its swap-outs are not bios here; only the time is judged"
fi
if [ -n "$setup_err" ] || [ "$F1" = 0 ] || [ "$F3" = 0 ]; then
	rc=1
	diag "an unlimited run did not finish: nothing to compare with"
elif [ "$F2" = 0 ]; then
	rc=1
	diag "the limited run did not finish"
elif [ "$LIMIT_OK" = 0 ]; then
	rc=1
elif [ "$STALLED" = 1 ]; then
	rc=1
	diag "the limited run's fill took $ratio times the slower unlimited one (more than $STALL_MAX)"
elif [ -n "$rate" ] && awk -v u="$urate" 'BEGIN { exit !(u < 3) }'; then
	diag "without the limit \"throttled\" swapped out at only $urate times wbps: too close to the limit for the rate to tell; only the time is judged"
elif [ -n "$rate" ] && awk -v r="$rate" 'BEGIN { exit !(r <= 1.5) }'; then
	rc=1
	diag "the swap-outs of \"throttled\" went out at the limit's rate ($rate times wbps): the limit held reclaim back"
fi
diag "swap-throttle summary: wbps=$WBPS, fill $F1 / $F2 / $F3 s (off/on/off), stall ratio ${ratio:-?}, swap-out rate ${rate:-n/a} times wbps, throttled swapped out $O1 / $O2 / $O3 MiB (charged as zram writes $((W1 >> 20)) / $((W2 >> 20)) / $((W3 >> 20)) MiB), pages verified $SUM_PAGES, mismatches $SUM_BAD, hangs $SUM_HANG"
ktap_result $rc "$what"
ktap_done
