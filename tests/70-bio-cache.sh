#!/bin/bash
# vm: mem=2048 timeout=1200
# The per-cpu bio cache, from every context a bio can be freed in, with
# the data checked (fio crc32c verify, read back after the page cache was
# dropped):
#  - null_blk (configfs, memory backed) completing inline (irqmode=0,
#    task context), from a softirq (1) and from a timer in hardirq
#    context (2): O_DIRECT libaio (blkdev O_DIRECT bio_set) and buffered
#    writes and reads (fs_bio_set: writeback, readahead);
#  - a loop device with rq_affinity=0, whose completions run in an unbound
#    worker: bios freed on another CPU than the one that allocated them.
#    kprobes on bio_alloc_bioset() and bio_put() count how many were; the
#    subtest fails if none was, since then it tested nothing;
#  - CPU 1 taken offline and back eight times while O_DIRECT and buffered
#    I/O with verify run on null_blk and loop;
#  - swap on a null_blk device (not synchronous: every swap bio is
#    allocated) under a memory.max, checked page by page by swapverify;
#  - release: after I/O, "echo 2 > drop_caches" must empty every bio-cache
#    shrinker's count (debugfs, CONFIG_SHRINKER_DEBUG).  Kernels without
#    the cache's shrinker skip this subtest;
#  - bio_set teardown: tests/modules/bioset_exit_test.ko owns a bio_set with
#    a per-cpu cache; loading it writes and reads back 8 MiB with bios
#    freed in hardirq context, unloading it runs bioset_exit() while those
#    bios sit in both CPUs' caches.  Three rounds, with verified I/O on
#    another device throughout.  Skipped when the runner had no module for
#    this kernel (a bzImage without its object directory);
#  - io_uring O_DIRECT on null_blk, interrupt-driven and polled (hipri,
#    on null_blk's poll queue; the subtest fails if null_blk's ->poll was
#    never called), the path whose opt-in flag IOCB_ALLOC_CACHE the series
#    removes.  Skipped when the kernel has no io_uring;
#  - global memory pressure: a ramfs file pins all but about 96 MiB of
#    RAM, and swapverify's working set is what is left, plus what tmpfs
#    holds (reclaim swaps cold tmpfs out first), plus 96 MiB.  With no
#    cgroup limit, kswapd and direct reclaim (not memcg reclaim) swap out
#    to two loop devices doing direct I/O on the two pmem regions: swap
#    devices that are not synchronous, so every swap bio is allocated
#    (from fs_bio_set, and the loops' own from the block device's O_DIRECT
#    bio_set), and that, unlike null_blk, take no RAM for the data.  Every
#    page is verified; the subtest fails unless global reclaim scanned
#    pages and at least 8192 pages went out and 4096 came back in.  The
#    calls of the bio-cache shrinker's scan are reported, not required:
#    reclaim asks a shrinker this small to scan only at high priority.
#
# Injections (make test-inject): biocache-corrupt overwrites one block of
# the irqmode=2 device behind fio's back between its write and verify
# passes; biocache-teardown has the module write one block wrong in its
# second round; biocache-pressure has swapverify overwrite the swap slots
# of 16 swapped-out pages on the second loop device in the global-pressure
# run.
. /tests/lib/common.sh
CFG=/sys/kernel/config/nullb
T=/sys/kernel/tracing
FIOSIZE=${FIOSIZE:-24M}

ktap_plan 10
# (tests/lib/init has mounted configfs, debugfs and tracefs.)

# nullb_cfg NAME IRQMODE: a 64 MiB memory-backed null_blk device with 4 KiB
# blocks completing in IRQMODE; prints its path.
nullb_cfg() {
	local d=$CFG/$1
	mkdir "$d" || return 1
	echo 64 > "$d/size"
	echo 4096 > "$d/blocksize"
	echo 1 > "$d/memory_backed"
	echo "$2" > "$d/irqmode"
	echo 20000 > "$d/completion_nsec"
	echo 1 > "$d/power" || return 1
	echo "/dev/$1"
}

# fio_verify DEV DIRECT TAG: write FIOSIZE of random 4 KiB blocks with crc32c
# headers (two jobs, O_DIRECT through libaio when DIRECT=1, else buffered),
# drop the page cache, then read everything back and verify.  Output in
# /tmp/fio-TAG.out; returns fio's status.
fio_verify() {
	local dev=$1 direct=$2 tag=$3 engine=${FIO_ENGINE:-libaio} depth=16 rc
	[ "$direct" = 1 ] || { engine=psync; depth=1; }
	# shellcheck disable=SC2206 # FIO_EXTRA: extra options, split on spaces
	local common=(--filename="$dev" --bs=4k --size="$FIOSIZE" --numjobs=2
		--offset_increment="$FIOSIZE" --ioengine=$engine --iodepth=$depth
		--direct="$direct" --verify=crc32c --verify_fatal=1 --group_reporting
		${FIO_EXTRA:-})
	{
		fio --name=w "${common[@]}" --rw=randwrite --do_verify=0 &&
		sync && echo 3 > /proc/sys/vm/drop_caches &&
		if injecting biocache-corrupt && [ "$tag" = irq2-direct ]; then
			# One 4 KiB block of the first job's area, behind fio's back.
			dd if=/dev/urandom of="$dev" bs=4096 seek=1000 count=1 oflag=direct conv=notrunc 2>/dev/null
		fi &&
		fio --name=w "${common[@]}" --rw=randread --verify_only=1
	} > "/tmp/fio-$tag.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || grep -iE 'verify|bad|error|crc' "/tmp/fio-$tag.out" | head -4 | sed 's/^/#   /'
	return $rc
}

# 1-3: null_blk in each completion context, O_DIRECT and buffered.
for m in 0 1 2; do
	dev=$(nullb_cfg "nbc$m" $m)
	if [ ! -b "$dev" ]; then
		ktap_fail "null_blk irqmode=$m: no device"
		continue
	fi
	rc=0
	fio_verify "$dev" 1 "irq$m-direct" || { rc=1; diag "irqmode=$m O_DIRECT: verify failed"; }
	fio_verify "$dev" 0 "irq$m-buffered" || { rc=1; diag "irqmode=$m buffered: verify failed"; }
	ktap_result $rc "null_blk irqmode=$m: O_DIRECT and buffered random writes of 2x$FIOSIZE read back and verified"
done

# 4: bios freed on another CPU (loop, rq_affinity=0), counted with kprobes.
loop=$(loop_setup 64)
echo 0 > "/sys/block/$(basename "$loop")/queue/rq_affinity"
kp=0
if [ -w $T/kprobe_events ]; then
	echo 'r:biocache/alloc bio_alloc_bioset ret=$retval:x64' >> $T/kprobe_events &&
	echo 'p:biocache/put bio_put bio=%di:x64' >> $T/kprobe_events &&
	echo 4096 > $T/buffer_size_kb && echo > $T/trace &&
	echo 1 > $T/events/biocache/enable && kp=1
fi
rc=0
fio_verify "$loop" 1 loop-direct || { rc=1; diag "loop O_DIRECT: verify failed"; }
fio_verify "$loop" 0 loop-buffered || { rc=1; diag "loop buffered: verify failed"; }
if [ $kp = 1 ]; then
	echo 0 > $T/events/biocache/enable
	# "allocated puts cross": bios allocated, then put, and put on
	# another CPU than the one that allocated them.
	read -r na np nx <<< "$(awk '
		match($0, /\[[0-9]+\]/) { cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0 }
		/ alloc: / && match($0, /ret=0x[0-9a-f]+/) { a[substr($0, RSTART + 4, RLENGTH - 4)] = cpu; na++ }
		/ put: / && match($0, /bio=0x[0-9a-f]+/) { b = substr($0, RSTART + 4, RLENGTH - 4)
			if (b in a) { np++; if (a[b] != cpu) nx++; delete a[b] } }
		END { print na + 0, np + 0, nx + 0 }' $T/trace)"
	echo > $T/trace
	echo '-:biocache/alloc' >> $T/kprobe_events
	echo '-:biocache/put' >> $T/kprobe_events
	diag "loop: $na bios allocated, $np put, $nx of them on another CPU"
	if ! [ "${nx:-0}" -gt 0 ] 2>/dev/null; then
		rc=1
		diag "loop: no bio was put on another CPU than its allocation's: nothing cross-CPU was tested"
	fi
else
	rc=1
	diag "loop: kprobes unavailable, cannot tell whether bios were freed on another CPU"
fi
ktap_result $rc "loop (rq_affinity=0): O_DIRECT and buffered I/O verified, bios put on another CPU than they were allocated on"

# 5: CPU 1 offline and online eight times under verified I/O.
cpu1=/sys/devices/system/cpu/cpu1/online
if [ ! -w $cpu1 ]; then
	ktap_fail "cpu hotplug: $cpu1 not writable (one vCPU, or no CONFIG_HOTPLUG_CPU)"
else
	(fio_verify /dev/nbc1 1 hp-direct && fio_verify "$loop" 0 hp-buffered &&
	 fio_verify /dev/nbc2 1 hp-direct2) &
	io=$!
	toggles=0
	for i in 1 2 3 4 5 6 7 8; do
		sleep 2
		echo 0 > $cpu1 && sleep 1 && echo 1 > $cpu1 && toggles=$((toggles + 1))
	done
	wait $io
	rc=$?
	[ "$(cat $cpu1)" = 1 ] || { rc=1; diag "cpu1 did not come back online"; }
	[ $toggles -eq 8 ] || { rc=1; diag "only $toggles of 8 offline/online cycles succeeded"; }
	[ $rc -eq 0 ] || diag "I/O under hotplug: verify failed or a cycle failed (rc=$rc)"
	ktap_result $rc "cpu hotplug: cpu1 offline/online $toggles times while O_DIRECT and buffered I/O were verified"
fi
[ -n "$(losetup -a)" ] && losetup -D
# The loop's backing file is tmpfs: swappable, and cold by subtest 10.
rm -f /tmp/loop-backing.img

# 6: swap on null_blk (every swap bio allocated, completed in hardirq
# context) under a memory.max of a third of the working set.
sdev=$(nullb_cfg nbswap 2)
cg=$(memcg_setup biocache 32M)
if ! swap_on "$sdev"; then
	ktap_fail "swap on null_blk: swapon $sdev failed"
else
	p0=$(vmstat pswpout) i0=$(vmstat pswpin)
	out=$(run_in_cg "$cg" swapverify -s 48 -n 20000 -w 20 -S 6 2>&1)
	rc=$?
	swapoff "$sdev" || rc=3
	po=$(( $(vmstat pswpout) - p0 )) pi=$(( $(vmstat pswpin) - i0 ))
	diag "swap on null_blk: $(grep -E '^(pages_verified|mismatches)' <<< "$out" | tr '\n' ' ')pswpout $po pswpin $pi"
	if [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "swap on null_blk: swapverify failed (rc=$rc)"
	elif [ $po -lt 2048 ] || [ $pi -lt 2048 ]; then
		ktap_fail "swap on null_blk: too little swap (pswpout $po, pswpin $pi < 2048)"
	else
		ktap_ok "swap on null_blk under memory.max: every page verified, pswpout $po, pswpin $pi"
	fi
fi

# 7: the caches are released on request (drop_caches=2 runs every shrinker).
dbg=/sys/kernel/debug/shrinker
shr=$(ls -d $dbg/bio-cache-* 2>/dev/null)
count() { local s n=0; for s in $shr; do n=$((n + $(awk '{ for (i = 2; i <= NF; i++) t += $i } END { print t + 0 }' "$s/count"))); done; echo $n; }
if [ -z "$shr" ]; then
	ktap_skip "bio cache release: no bio-cache shrinker in $dbg (kernel without the cache's shrinker, or no CONFIG_SHRINKER_DEBUG)"
else
	# 4 KiB asynchronous O_DIRECT reads: one-vector bios of the block
	# device's O_DIRECT bio_set, the kind the cache keeps.
	fio --name=r --filename=/dev/nbc0 --rw=randread --bs=4k --size=8M \
		--ioengine=libaio --iodepth=8 --direct=1 > /tmp/fio-release.out 2>&1
	before=$(count)
	echo 2 > /proc/sys/vm/drop_caches
	sleep 2
	after=$(count)
	diag "bio-cache shrinkers ($(echo $shr | wc -w)): $before bios cached before drop_caches, $after after"
	if [ "$before" -eq 0 ]; then
		ktap_fail "bio cache release: nothing was cached after 2048 O_DIRECT reads"
	elif [ "$after" -ne 0 ]; then
		ktap_fail "bio cache release: $after bios still cached after drop_caches"
	else
		ktap_ok "bio cache release: $before cached bios, none left after drop_caches"
	fi
fi

# 8: load, use and unload a module that owns a bio_set, under other I/O.
ko=/tests/modules/bioset_exit_test.ko
if [ ! -f $ko ]; then
	ktap_skip "bio_set teardown: no $ko (the runner builds it only for a kernel with its object directory)"
else
	edev=$(nullb_cfg nbexit 2)
	fio_verify /dev/nbc1 1 exit-bg > /dev/null 2>&1 &
	bg=$!
	rc=0 rounds=0
	for i in 1 2 3; do
		dmesg -c > /dev/null
		args=()
		injecting biocache-teardown && [ $i = 2 ] && args=(corrupt=1234)
		if ! out=$(insmod $ko dev="$edev" blocks=2048 "${args[@]}" 2>&1); then
			rc=1
			diag "round $i: insmod failed: $out"
			dmesg | grep bioset_exit_test | sed 's/^/#   /'
			break
		fi
		rmmod bioset_exit_test || { rc=1; diag "round $i: rmmod failed"; break; }
		line=$(dmesg | grep 'bioset_exit_test: .*blocks written')
		diag "round $i: ${line#*bioset_exit_test: }"
		dmesg | grep -q 'bioset_exit_test: bio_set destroyed' || { rc=1; diag "round $i: no 'bio_set destroyed' line"; break; }
		rounds=$((rounds + 1))
	done
	wait $bg || { rc=1; diag "verified I/O on /dev/nbc1 beside the module failed"; }
	ktap_result $rc "bio_set teardown: $rounds of 3 rounds of load (8 MiB written and verified), unload (bioset_exit) under other I/O"
fi

# 9: io_uring O_DIRECT, interrupt-driven and polled.  A configfs null_blk
# device has one poll queue by default (module parameter poll_queues=1);
# a kprobe on null_poll(), its ->poll, shows that the polled run polled.
# npoll: hits of that probe so far, or -1 without it.
npoll() {
	awk '$1 == "npoll" { print $2; f = 1 } END { if (!f) print -1 }' $T/kprobe_profile 2>/dev/null ||
		echo -1
}
if ! fio --name=probe --filename=/dev/nbc0 --rw=read --bs=4k --size=4k --direct=1 \
	--ioengine=io_uring > /tmp/fio-uring-probe.out 2>&1; then
	ktap_skip "io_uring: fio cannot use it on this kernel ($(grep -m1 -iE 'error|err=' /tmp/fio-uring-probe.out))"
else
	udev=$(nullb_cfg nburing 0)
	echo 'p:biocache/npoll null_poll' >> $T/kprobe_events 2>/dev/null &&
		echo 1 > $T/events/biocache/npoll/enable
	rc=0
	FIO_ENGINE=io_uring fio_verify "$udev" 1 uring || { rc=1; diag "io_uring: verify failed"; }
	p0=$(npoll)
	FIO_ENGINE=io_uring FIO_EXTRA="--hipri=1" fio_verify "$udev" 1 uring-hipri ||
		{ rc=1; diag "io_uring hipri: verify failed"; }
	p1=$(npoll)
	echo 0 2>/dev/null > $T/events/biocache/npoll/enable
	if [ "$p0" -lt 0 ]; then
		diag "io_uring hipri: no kprobe on null_poll(), polling not counted"
	else
		diag "io_uring hipri: null_poll() called $((p1 - p0)) times"
		if [ $rc = 0 ] && [ $((p1 - p0)) -le 0 ]; then
			rc=1
			diag "io_uring hipri: null_blk was never polled: the polled path was not tested"
		fi
	fi
	ktap_result $rc "io_uring: O_DIRECT random writes of 2x$FIOSIZE read back and verified, interrupt-driven and polled"
fi
# 10: global memory pressure (see the header).
hog=/tmp/hog
gp() { ktap_fail "global memory pressure: $*"; }
loops=() err=""
for r in 0 1; do
	pdev=$(pmem_dev $r) || { err="no pmem region $r"; break; }
	l=$(losetup -f --show --direct-io=on "$pdev" 2>&1) ||
		{ err="losetup --direct-io=on $pdev failed: $l"; break; }
	loops+=("$l")
done
if [ -n "$err" ]; then
	gp "$err"
else
	# Pin first, with no swap on, so that only what is left is reclaimable.
	mkdir -p $hog && mount -t ramfs ramfs $hog
	avail=$(meminfo_mib MemAvailable)
	pin=$((avail - 96))
	dd if=/dev/zero of=$hog/pin bs=1M count=$pin 2>/dev/null
	# MemAvailable does not count tmpfs (Shmem), which reclaim swaps out
	# first when it is cold: count it in, or swapverify's pages stay in.
	left=$(meminfo_mib MemAvailable) shm=$(meminfo_mib Shmem)
	ws=$((left + shm + 96))
	[ $((shm + 96)) -le 224 ] || err="$shm MiB of tmpfs: too much to swap beside 96 MiB of swapverify's on 256 MiB of swap"
	[ -z "$err" ] && for l in "${loops[@]}"; do swap_on "$l" || err="swapon $l failed"; done
	echo 'p:biocache/nscan bio_cache_scan' >> $T/kprobe_events 2>/dev/null &&
		echo 1 > $T/events/biocache/nscan/enable
	nscan() { awk '$1 == "nscan" { print $2; f = 1 } END { if (!f) print -1 }' $T/kprobe_profile 2>/dev/null; }
	scanned() { echo $(( $(vmstat pgscan_kswapd) + $(vmstat pgscan_direct) )); }
	flags=""
	injecting biocache-pressure && flags="-D ${loops[1]} -C 16"
	p0=$(vmstat pswpout) i0=$(vmstat pswpin) g0=$(scanned) s0=$(nscan)
	rc=0
	# shellcheck disable=SC2086 # flags: options split on spaces
	[ -z "$err" ] && { out=$(swapverify -s $ws -n 20000 -w 20 -S 10 $flags 2>&1); rc=$?; }
	po=$(( $(vmstat pswpout) - p0 )) pi=$(( $(vmstat pswpin) - i0 ))
	g=$(( $(scanned) - g0 )) s1=$(nscan)
	echo 0 2>/dev/null > $T/events/biocache/nscan/enable
	rm -f $hog/pin
	umount $hog
	for l in "${loops[@]}"; do swapoff "$l" 2>/dev/null; done
	if [ "$s0" -lt 0 ]; then
		sdesc="no bio_cache_scan() to probe"
	else
		sdesc="bio_cache_scan() called $((s1 - s0)) times"
	fi
	diag "global memory pressure: $avail MiB available, $pin MiB pinned in ramfs, $left MiB left, $shm MiB of tmpfs, working set $ws MiB; $(grep -E '^(pages_verified|mismatches)' <<< "${out:-}" | tr '\n' ' ')pswpout $po pswpin $pi, pages scanned by kswapd and direct reclaim $g; $sdesc"
	if [ -n "$err" ]; then
		gp "$err"
	elif [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		gp "swapverify failed (rc=$rc)"
	elif [ $g -le 0 ]; then
		gp "no global reclaim (pgscan_kswapd and pgscan_direct did not move)"
	elif [ $po -lt 8192 ] || [ $pi -lt 4096 ]; then
		gp "too little swap (pswpout $po < 8192 or pswpin $pi < 4096)"
	else
		ktap_ok "global memory pressure: swap on two loop devices (direct I/O on pmem), every page verified, pswpout $po, pswpin $pi"
	fi
fi
for l in "${loops[@]}"; do losetup -d "$l"; done
ktap_done
