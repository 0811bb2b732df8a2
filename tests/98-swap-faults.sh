#!/bin/bash
# vm: mem=2048 timeout=1500
# Allocation faults during swap, and a pmem namespace disabled while it
# backs swap, on the base and on the series.
#  1-5. zram (lzo), brd, pmem, btt and a loop device over a tmpfs file
#       (not synchronous: the allocated-bio path of both kernels), each
#       the only swap device.  swapverify -F works on 96 MiB under a
#       32 MiB memory.max with its make-it-fail set, and the kernel's own
#       failslab and fail_page_alloc (task-filter; sleeping, order-0 and
#       highmem allocations included) fail ALLOC_PCT% of the slab and
#       page allocations made in its context: its page faults and the
#       memcg direct reclaim they run into, which swaps out (zram's
#       zsmalloc, brd's backing pages, the swap cache; bio allocations
#       are tried too, but the bio mempool absorbs their failures).  The
#       injected count of each is the fall of its "times" attribute.
#       A subtest passes when no page comes back with wrong data (random
#       phase and a final pass over every page), swapverify was not
#       killed and got no SIGBUS (an allocation failure is no I/O error
#       of the page: the fault is retried, a failed swap-out leaves the
#       page dirty in memory), swap really happened, both injections
#       fired, on brd a write of brd's failed (a Write-error, or where
#       brd still has ->rw_page a failed brd_rw_page(), counted with a
#       kretprobe), and swapoff then succeeds within 120 s with
#       injection off.
#  6.   pmem's namespace unbound from nd_pmem through sysfs (the kernel
#       side of disabling a namespace, which cannot be refused) while it
#       backs active swap and swapverify -B runs on it: the unbind must
#       finish within 120 s and the disk go; the swapping process may get
#       SIGBUS for the pages that were on the device (their only copy is
#       gone), never wrong data, and must end within 600 s having
#       verified every page that reads (pages lost with the device are
#       counted, and there must be some).  With its only swap device
#       gone reclaim cannot keep the cgroup at a memory.max, and the memcg
#       OOM killer (whose report the runner counts) took the checker on
#       v6.1.4 with the brd fix: so just before the unbind memory.max
#       becomes a memory.high of the same size, which keeps swap-outs
#       going into the unbind but never kills, lifted right after it.
#       The namespace must then bind again and verify 16 MiB written to
#       it.
#       The dead swap area cannot be switched off (its device node
#       cannot be opened any more), so this subtest comes last.
# The runner fails any subtest whose run printed a kernel report.  The
# last line is a summary: tests, faults injected, page checks,
# mismatches, SIGBUS, kernel reports, hangs.
#
# Injections (make test-inject):
#   allocfail-corrupt  swapverify -c on brd flips one byte of one page
#                      before the final verify: brd's subtest must fail;
#   allocfail-none     no probability set for btt: nothing is injected,
#                      which btt's subtest must report;
#   pmemoff-corrupt    swapverify -c 5 in subtest 6 flips a byte of the
#                      first page from page 5 on that still reads: the
#                      subtest must fail.
. /tests/lib/common.sh
SET_MB=${SET_MB:-96}
MAX_MB=$((SET_MB / 3))
OPS=${OPS:-30000}
MIN_SWAP=${MIN_SWAP:-2048}
ALLOC_PCT=${ALLOC_PCT:-2}
RETRIES=${RETRIES:-20}
SWAPOFF_MIN_KB=${SWAPOFF_MIN_KB:-8192}
TIMES=1000000
FS=/sys/kernel/debug/failslab
FP=/sys/kernel/debug/fail_page_alloc

devs=("zram:$(zram_setup 256M lzo)" "brd:$(brd_dev 0)" "pmem:$(pmem_dev 0)" "btt:$(btt_setup 1 4096)" "loop:$(loop_setup 160)")
ktap_plan $(( ${#devs[@]} + 1 ))
cg=$(memcg_setup swapfaults "${MAX_MB}M")
SUM_INJ=0 SUM_PAGES=0 SUM_BAD=0 SUM_HANG=0 SUM_BUS=0 SUM_REP=0

# alloc_faults on PCT | off: failslab and fail_page_alloc fail PCT% of the
# allocations of tasks with make-it-fail set, quietly, up to TIMES each.
alloc_faults() {
	local f
	for f in $FS $FP; do
		if [ "$1" = on ]; then
			echo 0 > "$f/verbose"; echo 1 > "$f/interval"; echo 0 > "$f/space"
			echo $TIMES > "$f/times"; echo Y > "$f/task-filter"
			echo N > "$f/ignore-gfp-wait"
			echo "$2" > "$f/probability"
		else
			echo 0 > "$f/probability"
		fi
	done
	if [ "$1" = on ]; then
		echo 0 > $FP/min-order; echo N > $FP/ignore-gfp-highmem
	fi
}
injected() { echo $((TIMES - $(cat "$1/times"))); }

# Where brd still has ->rw_page (v6.1.4), count its failed calls with a
# kretprobe: with the brd subtest's swap-outs failing there or in the bio
# path (a Write-error), brd's own allocations were hit, not only the
# checker's page faults.
BRDPROBE=0
grep -q ' brd_rw_page$' /proc/kallsyms && retprobe_on brdrw brd_rw_page && BRDPROBE=1
brd_failed() {
	local n=0
	[ $BRDPROBE = 1 ] && n=$(retprobe_count brdrw)
	echo "${n:-0}"
}

for d in "${devs[@]}"; do
	name=${d%%:*} dev=${d#*:} what="$name: swap under ${ALLOC_PCT}% failed allocations"
	if [ ! -d $FS ] || [ ! -d $FP ]; then
		ktap_fail "$what: no $FS or $FP (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC)"
		continue
	fi
	if [ ! -b "$dev" ]; then ktap_fail "$what: no device ($dev)"; continue; fi
	if ! swap_on "$dev"; then ktap_fail "$what: swapon $dev failed"; continue; fi
	flags="" pct=$ALLOC_PCT
	injecting allocfail-corrupt && [ "$name" = brd ] && flags="-c 1000"
	injecting allocfail-none && [ "$name" = btt ] && pct=0
	rep0=$(kernel_reports)
	werr0=$(dmesg | grep -c 'Write-error on swap-device')
	[ $BRDPROBE = 1 ] && retprobe_reset
	alloc_faults on "$pct"
	# shellcheck disable=SC2086
	out=$(run_in_cg "$cg" swapverify -F -s "$SET_MB" -n "$OPS" -w 30 -B "$RETRIES" -S "$KTAP_N" $flags 2>&1)
	rc=$?
	alloc_faults off
	islab=$(injected $FS) ipage=$(injected $FP) brdrw=$(brd_failed)
	within 120 swapoff "$dev"
	src=$?
	[ $src -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	werr=$(( $(dmesg | grep -c 'Write-error on swap-device') - werr0 ))
	rep=$(( $(kernel_reports) - rep0 ))
	pin=$(kv total_pswpin) pout=$(kv total_pswpout) bad=$(kv mismatches)
	bus=$(kv sigbus) ver=$(kv pages_verified) lost=$(kv pages_unreadable)
	diag "$name: $islab slab and $ipage page allocations failed; $ver page checks, $bad mismatches, SIGBUS $bus; pswpin $pin, pswpout $pout; kernel said Write-error $werr times (ratelimited)$([ $BRDPROBE = 1 ] && [ "$name" = brd ] && echo "; brd_rw_page() failed $brdrw times")"
	SUM_INJ=$((SUM_INJ + islab + ipage)) SUM_PAGES=$((SUM_PAGES + ${ver:-0}))
	SUM_BAD=$((SUM_BAD + ${bad:-0})) SUM_BUS=$((SUM_BUS + ${bus:-0})) SUM_REP=$((SUM_REP + rep))
	if [ $rc -eq 1 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: data mismatch ($bad pages)"
	elif [ $rc -gt 128 ]; then
		ktap_fail "$what: swapverify killed by signal $((rc - 128)) ($(kill -l $((rc - 128))))"
	elif [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: swapverify error (rc=$rc)"
	elif [ "${bus:-0}" -ne 0 ]; then
		ktap_fail "$what: $bus SIGBUS ($lost pages unreadable): an allocation failure became a swap-in error"
	elif [ $src -ne 0 ]; then
		ktap_fail "$what: swapoff $dev $([ $src -eq 124 ] && echo 'hung (120 s)' || echo "failed ($src)") after the injection"
	elif [ "${pin:-0}" -lt "$MIN_SWAP" ] || [ "${pout:-0}" -lt "$MIN_SWAP" ]; then
		ktap_fail "$what: too little swap (pswpin $pin, pswpout $pout < $MIN_SWAP)"
	elif [ "$islab" -eq 0 ] || [ "$ipage" -eq 0 ]; then
		ktap_fail "$what: nothing injected ($islab slab, $ipage page allocations failed)"
	elif [ "$name" = brd ] && [ $((werr + brdrw)) -eq 0 ]; then
		ktap_fail "$what: no brd write failed (no Write-error, no failed brd_rw_page()): brd's own allocations were not hit"
	elif [ "$rep" -gt 0 ]; then
		ktap_fail "$what: $rep kernel report lines during the run"
	else
		ktap_ok "$what: $ver page checks, 0 mismatches, $islab slab + $ipage page allocations failed, $werr swap write errors"
	fi
done

# 6: the pmem namespace unbound under active swap.
what="pmem: namespace unbound while it backs active swap"
pdev=${devs[2]#*:}
pblk=$(basename "$pdev")
ns=$(basename "$(readlink -f "/sys/block/$pblk/device" 2>/dev/null)")
if [ ! -b "$pdev" ] || [ -z "$ns" ] || [ ! -e "/sys/bus/nd/drivers/nd_pmem/$ns" ]; then
	ktap_fail "$what: no pmem namespace bound to nd_pmem ($pdev, '$ns')"
elif ! swap_on "$pdev"; then
	ktap_fail "$what: swapon $pdev failed"
else
	flags=""
	# swapverify -B passes over pages lost with the device
	injecting pmemoff-corrupt && flags="-c 5"
	out_f=/tmp/swapfaults-off.out
	rep0=$(kernel_reports)
	in0=$(vmstat pswpin)
	# shellcheck disable=SC2086
	run_in_cg "$cg" swapverify -s "$SET_MB" -n "$OPS" -w 30 -B "$RETRIES" -S 98 $flags > $out_f 2>&1 &
	sv=$!
	t_end=$(( $(date +%s) + 300 ))
	used=0
	while [ "$(date +%s)" -lt $t_end ] && kill -0 $sv 2>/dev/null; do
		used=$(swap_used_kb "$pdev")
		[ "${used:-0}" -ge "$SWAPOFF_MIN_KB" ] &&
			[ $(( $(vmstat pswpin) - in0 )) -ge 256 ] && break
		sleep 0.2
	done
	running=0
	kill -0 $sv 2>/dev/null && running=1
	# Once the disk is gone reclaim cannot swap out, and a memory.max
	# that reclaim cannot meet ends in the memcg OOM killer (v6.1.4 with
	# the brd fix got there).  memory.high keeps the pressure, and so
	# the swap-outs, up to the unbind without ever killing; it is lifted
	# right after.
	echo "${MAX_MB}M" > "$cg/memory.high"
	echo max > "$cg/memory.max"
	t0=$(date +%s)
	within 120 sh -c "echo $ns > /sys/bus/nd/drivers/nd_pmem/unbind"
	urc=$?
	echo max > "$cg/memory.high"
	usecs=$(( $(date +%s) - t0 ))
	[ $urc -eq 124 ] && SUM_HANG=$((SUM_HANG + 1))
	gone=1
	[ -e "/sys/block/$pblk" ] && gone=0
	t_end=$(( $(date +%s) + 600 ))
	while kill -0 $sv 2>/dev/null && [ "$(date +%s)" -lt $t_end ]; do sleep 0.5; done
	if kill -0 $sv 2>/dev/null; then
		echo 1 > "$cg/cgroup.kill"	# swapverify, not only its wrapper
		wait $sv
		rc=124
		SUM_HANG=$((SUM_HANG + 1))
	else
		wait $sv
		rc=$?
	fi
	out=$(cat $out_f)
	bad=$(kv mismatches) ver=$(kv pages_verified) bus=$(kv sigbus)
	lost=$(kv pages_unreadable)
	oom=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")
	sline=$(grep "^$pdev" /proc/swaps | tr -s ' \t' ' ')
	# bind it again: the namespace must come back and keep data
	echo "$ns" > /sys/bus/nd/drivers/nd_pmem/bind 2>/dev/null
	ndev=""
	for _ in $(seq 50); do
		if [ -d "/sys/bus/nd/devices/$ns/block" ]; then
			ndev=/dev/$(ls "/sys/bus/nd/devices/$ns/block")
			[ -b "$ndev" ] && break
		fi
		sleep 0.1
	done
	vrc=1
	if [ -b "$ndev" ]; then
		dd if=/dev/urandom of=/tmp/pmemoff.pat bs=1M count=16 2>/dev/null
		dd if=/tmp/pmemoff.pat of="$ndev" bs=1M oflag=direct 2>/dev/null &&
			echo 3 > /proc/sys/vm/drop_caches &&
			cmp -n $((16 << 20)) /tmp/pmemoff.pat "$ndev" && vrc=0
	fi
	rep=$(( $(kernel_reports) - rep0 ))
	SUM_PAGES=$((SUM_PAGES + ${ver:-0})) SUM_BAD=$((SUM_BAD + ${bad:-0}))
	SUM_BUS=$((SUM_BUS + ${bus:-0})) SUM_REP=$((SUM_REP + rep))
	diag "pmem: unbound $ns with ${used:-0} KiB of swap on $pdev (swapverify running: $running) in ${usecs} s (rc $urc), disk gone: $gone; swapverify rc $rc, ${ver:-0} page checks, ${bad:-?} mismatches, SIGBUS ${bus:-?}, ${lost:-?} pages unreadable, memcg oom_kill ${oom:-?}; /proc/swaps: ${sline:-none}; bound again as ${ndev:-nothing}, 16 MiB verify rc $vrc"
	if [ "${bad:-0}" -ne 0 ] || [ $rc -eq 1 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: swapverify read wrong data (${bad:-?} mismatches)"
	elif [ $urc -ne 0 ]; then
		ktap_fail "$what: the unbind $([ $urc -eq 124 ] && echo 'hung (120 s)' || echo "failed ($urc)")"
	elif [ $gone = 0 ]; then
		ktap_fail "$what: /sys/block/$pblk still there after the unbind"
	elif [ $rc -eq 124 ]; then
		ktap_fail "$what: swapverify still running 600 s after the unbind"
	elif [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$what: swapverify rc=$rc (memcg oom_kill ${oom:-?})"
	elif [ "${used:-0}" -lt "$SWAPOFF_MIN_KB" ] || [ $running = 0 ]; then
		ktap_fail "$what: not under swap at the unbind (${used:-0} KiB on $pdev, swapverify running: $running)"
	elif [ "${lost:-0}" -eq 0 ]; then
		ktap_fail "$what: no page was lost with the device: the checker never read from it after the unbind"
	elif [ "$rep" -gt 0 ]; then
		ktap_fail "$what: $rep kernel report lines during the run"
	elif [ $vrc -ne 0 ]; then
		ktap_fail "$what: the namespace did not bind again and verify (${ndev:-no device})"
	else
		ktap_ok "$what: unbind in ${usecs} s, ${ver:-0} page checks, 0 mismatches, ${lost:-0} pages lost with the device, SIGBUS ${bus:-0}; bound again and verified"
	fi
fi

[ $BRDPROBE = 1 ] && retprobe_off brdrw
diag "summary: $KTAP_N tests, $SUM_INJ faults injected, $SUM_PAGES pages verified, $SUM_BAD mismatches, $SUM_BUS SIGBUS, $SUM_REP kernel reports, $SUM_HANG hangs"
ktap_done
