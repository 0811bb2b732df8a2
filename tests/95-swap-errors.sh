#!/bin/bash
# vm: mem=2048 timeout=1500
# Swap I/O errors, on the base and on the series.  For each swap device
# (zram lzo, brd, pmem, btt, and a loop device over a tmpfs file, which is
# not synchronous and takes the swap cache path on every kernel), the
# kernel's own fault injection, fail_make_request, fails FAIL_PCT% of the
# device's bios (should_fail_bio(), reads and writes alike) while
# swapverify works on 96 MiB under a 32 MiB memory.max, with -B: a swap-in
# that fails gives the process SIGBUS, which swapverify counts and retries
# (up to RETRIES times per access; a page still unreadable then is counted
# and left out).  A subtest passes when:
#   - no page comes back with wrong data (every page that reads is
#     verified, in the random phase and in a final pass over all of them);
#   - swapverify was not killed and swap really happened (pswpin and
#     pswpout at least MIN_SWAP pages): a failed swap-out must leave the
#     page dirty and intact in memory, to be written again later;
#   - errors were injected (a kretprobe on should_fail_bio() counts the
#     failures it returned), except on a kernel whose device still has
#     ->rw_page (v6.1.4's zram, brd, pmem, btt: swap there bypasses bios,
#     so fail_make_request has no injection point; reported, not failed);
#   - swapoff then succeeds with injection off, within 120 s, and the
#     kernel printed no report (the runner checks the console log).
# A last subtest resets the zram device while it backs active swap with
# pages out: the reset must fail (EBUSY) and the swapping process verify.
# Pages that stayed unreadable are reported: on a synchronous device the
# swap cache is skipped and the next fault reads the slot again, so the
# count should be 0; on loop a failed read can leave a !Uptodate page in
# the swap cache that fails every fault until reclaim drops it (6.1's
# documented SIGBUS, not wrong data).  One summary line at the end.
#
# Injection (make test-inject):
#   swaperr-corrupt  one byte of one page flipped in memory before the
#                    final verify (brd): the verify must catch it.
#   swaperr-reset    the zram reset only after the run and its swapoff:
#                    the reset succeeds, which the last subtest must report.
. /tests/lib/common.sh
SET_MB=${SET_MB:-96}
MAX_MB=$((SET_MB / 3))
OPS=${OPS:-30000}
MIN_SWAP=${MIN_SWAP:-2048}
FAIL_PCT=${FAIL_PCT:-2}
RETRIES=${RETRIES:-50}
F=/sys/kernel/debug/fail_make_request

devs=("zram:$(zram_setup 256M lzo)" "brd:$(brd_dev 0)" "pmem:$(pmem_dev 0)" "btt:$(btt_setup 1 4096)" "loop:$(loop_setup 160)")
ktap_plan $(( ${#devs[@]} + 1 ))
cg=$(memcg_setup swaperr "${MAX_MB}M")
SUM_INJ=0 SUM_PAGES=0 SUM_BAD=0 SUM_HANG=0 SUM_BUS=0 SUM_LOST=0 SUM_REP=0

# Count the failures should_fail_bio() returns with a kretprobe event.
PROBE=0
[ -d $F ] && retprobe_on sfb should_fail_bio && PROBE=1
[ -d $F ] || diag "no $F: kernel without CONFIG_FAIL_MAKE_REQUEST, nothing can be injected"
[ $PROBE = 1 ] || diag "no kretprobe on should_fail_bio(): injected failures not counted"
injected() {
	local n=0
	[ $PROBE = 1 ] && n=$(retprobe_count sfb)
	echo "${n:-0}"
}

# Swap on this device bypasses bios when the kernel still has ->rw_page
# (bdev_read_page() goes with it, patch "block: remove ->rw_page").
rw_page_dev() { [ "$1" != loop ] && grep -q ' bdev_read_page$' /proc/kallsyms; }
swoff() { swapoff "$1"; }

for d in "${devs[@]}"; do
	name=${d%%:*} dev=${d#*:} what="$name: swap under ${FAIL_PCT}% failed bios"
	if [ ! -b "$dev" ]; then ktap_fail "$what: no device ($dev)"; continue; fi
	if ! swap_on "$dev"; then ktap_fail "$what: swapon $dev failed"; continue; fi
	flags=""
	injecting swaperr-corrupt && [ "$name" = brd ] && flags="-c 1000"
	[ $PROBE = 1 ] && retprobe_reset
	rep0=$(kernel_reports)
	rerr0=$(dmesg | grep -c 'Read-error on swap-device') werr0=$(dmesg | grep -c 'Write-error on swap-device')
	[ -d $F ] && fail_requests "$dev" on "$FAIL_PCT"
	# shellcheck disable=SC2086
	out=$(run_in_cg "$cg" swapverify -s "$SET_MB" -n "$OPS" -w 30 -B "$RETRIES" -S "$KTAP_N" $flags 2>&1)
	rc=$?
	[ -d $F ] && fail_requests "$dev" off
	inj=$(injected)
	within 120 swoff "$dev"
	src=$?
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	rerr=$(( $(dmesg | grep -c 'Read-error on swap-device') - rerr0 ))
	werr=$(( $(dmesg | grep -c 'Write-error on swap-device') - werr0 ))
	rep=$(( $(kernel_reports) - rep0 ))
	pin=$(kv total_pswpin) pout=$(kv total_pswpout) bad=$(kv mismatches)
	bus=$(kv sigbus) pbus=$(kv pages_sigbus) lost=$(kv pages_unreadable) ver=$(kv pages_verified)
	diag "$name: $inj failures injected; $ver page checks, $bad mismatches; SIGBUS $bus (on $pbus pages), $lost pages unreadable after $RETRIES retries; pswpin $pin, pswpout $pout; kernel said Read-error $rerr, Write-error $werr (ratelimited)"
	SUM_INJ=$((SUM_INJ + inj)) SUM_PAGES=$((SUM_PAGES + ${ver:-0})) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	SUM_BUS=$((SUM_BUS + ${bus:-0})) SUM_LOST=$((SUM_LOST + ${lost:-0})) SUM_REP=$((SUM_REP + rep))
	if [ $rc -eq 1 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: data mismatch ($bad pages)"
	elif [ $rc -gt 128 ]; then
		ktap_fail "$what: swapverify killed by signal $((rc - 128)) ($(kill -l $((rc - 128))))"
	elif [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: swapverify error (rc=$rc)"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff $dev $([ $src -eq 124 ] && echo 'hung (120 s)' || echo "failed ($src)") after the injection"
	elif [ "${pin:-0}" -lt "$MIN_SWAP" ] || [ "${pout:-0}" -lt "$MIN_SWAP" ]; then
		ktap_fail "$what: too little swap (pswpin $pin, pswpout $pout < $MIN_SWAP)"
	elif [ -d $F ] && [ $PROBE = 1 ] && [ "$inj" -eq 0 ] && ! rw_page_dev "$name"; then
		ktap_fail "$what: no failure was injected: swap did not go through should_fail_bio()"
	elif [ "$rep" -gt 0 ]; then
		ktap_fail "$what: $rep kernel report lines during the run"
	else
		note=""
		rw_page_dev "$name" && [ "$inj" -eq 0 ] && note=" (->rw_page: no bio, no injection point)"
		ktap_ok "$what: $ver page checks, 0 mismatches, $inj failures injected$note, SIGBUS $bus, $lost unreadable"
	fi
done
# Last: a reset of the zram device that backs active swap must be refused
# (EBUSY) while pages are out, and the swapping process must not notice.
zdev=${devs[0]#*:}
what="zram: reset refused while it backs active swap"
if [ ! -b "$zdev" ] || ! swap_on "$zdev"; then
	ktap_fail "$what: no swap on $zdev"
else
	out_f=/tmp/swaperr-reset.out
	run_in_cg "$cg" swapverify -s "$SET_MB" -n "$OPS" -w 30 -S 99 > $out_f 2>&1 &
	sv=$!
	p0=$(vmstat pswpout)
	for _ in $(seq 300); do
		[ $(( $(vmstat pswpout) - p0 )) -ge "$MIN_SWAP" ] && break
		kill -0 $sv 2>/dev/null || break
		sleep 0.1
	done
	used=$(awk -v d="$zdev" '$1 == d { print $4 }' /proc/swaps)
	# swaperr-reset: the reset comes after the run and the swapoff, so
	# it must succeed (a swapoff under the run would OOM it instead)
	if injecting swaperr-reset; then
		wait $sv
		swapoff "$zdev"
	fi
	# the status of the write is the point
	if echo 1 > "/sys/block/$(basename "$zdev")/reset" 2> /tmp/swaperr-reset.err; then
		rrc=0
	else
		rrc=1
	fi
	wait $sv
	rc=$?
	src=0
	if ! injecting swaperr-reset; then
		within 120 swoff "$zdev"
		src=$?
	fi
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	out=$(cat $out_f)
	bad=$(sed -n 's/^mismatches=//p' <<< "$out") ver=$(sed -n 's/^pages_verified=//p' <<< "$out")
	SUM_PAGES=$((SUM_PAGES + ${ver:-0})) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	diag "zram reset with ${used:-?} KiB of swap in use: rc $rrc ($(cat /tmp/swaperr-reset.err)); swapverify rc $rc, $ver page checks, $bad mismatches"
	if [ "$rrc" -eq 0 ]; then
		ktap_fail "$what: the reset succeeded with ${used:-?} KiB of swap on it"
	elif [ "$rc" -ne 0 ]; then
		ktap_fail "$what: swapverify failed (rc $rc, $bad mismatches)"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff failed or hung ($src)"
	else
		ktap_ok "$what: reset refused, $ver page checks, 0 mismatches"
	fi
fi

[ $PROBE = 1 ] && retprobe_off sfb
diag "summary: $KTAP_N tests, $SUM_INJ faults injected, $SUM_PAGES pages verified, $SUM_BAD mismatches, $SUM_BUS SIGBUS, $SUM_LOST pages unreadable, $SUM_REP kernel reports, $SUM_HANG hangs"
ktap_done
