#!/bin/bash
# vm: mem=2048 timeout=900
# pmem's blk-mq mode and its dmaengine DMA_MEMCPY offload (part 3,
# patches 31-34), on the first legacy (memmap=) pmem region of the
# runner's default command line (scripts/qemu-run.sh gives every test
# memmap=128M!1536M and memmap=128M!1792M, so no vm-append is needed),
# with the test-only software provider swdma (tests/modules/swdma.c).
# The namespace is switched between modes as nd_pmem.mode= says:
# /sys/module/nd_pmem/parameters/mode, then unbind and bind the namespace
# from nd_pmem.  Every fio case writes a crc32c
# pattern (O_DIRECT) and a second, separate fio run reads it back and
# verifies it (verify_fatal=1: wrong data ends the run and is counted;
# continue_on_error=io with error_dump=1: each I/O error is counted); each
# case has its own seed, so data left by an earlier case cannot pass.  The
# ABI (Documentation/ABI/testing/sysfs-block-pmem, 0029) promises that a
# request the engine fails is copied again by the CPU and that none fails
# because of the engine, so any I/O error fails a subtest, as wrong data
# does (an EIO'd write would also leave blocks the verify could not tell
# from wrong data).  Subtests, and how each can fail:
#  1. bio mode (the default): the disk is bio-based (no mq/, no pmem/
#     attribute group), synchronous: bdev_synchronous() returns 1 at swapon
#     (a kretprobe, where kprobes work) and a sequential swap-in with
#     vm.page-cluster=3 reads 0.90-1.10 pages per major fault, i.e. no
#     readahead (SWP_SYNCHRONOUS_IO from BDI_CAP_SYNC, as 30-sync-swap
#     checks); fio verify 4k, 64k, 1M.  Fails on readahead, a retval of 0,
#     a swap or fio data mismatch or error.  Runs on any kernel: without
#     part 3 (no nd_pmem mode parameter) subtests 2-9 skip;
#  2. mode=mq and a rebind: the disk is blk-mq (/sys/block/pmemN/mq), NOT
#     synchronous (bdev_synchronous() 0, swap reads ahead: at least 1.50
#     pages per fault), the swapped data verifies, dma reads 0 (written 0
#     if a channel was taken), dma_channel "none", and fio verify 4k, 64k,
#     1M with no request counted in dma_requests; I/O accounting
#     (queue/iostats) starts off, as in bio mode (the test turns it on
#     after each bind, to count requests);
#  3. swdma loaded, "echo 1 > pmem/dma" takes one of its channels,
#     dma_threshold_kb at its minimum (4, 0029's PMEM_DMA_THRESHOLD_MIN_KB):
#     fio verify 4k, 64k, 1M (psync, queue depth 1, so the busy rule of 8
#     requests never applies); dma_requests must equal the read+write
#     requests the disk completed (/sys/block/pmemN/stat), with no
#     fallback, swdma's submitted and completed must have moved by as many
#     descriptors, at least one per request, and its bytes_copied by
#     exactly the bytes the disk read and wrote: else the CPU, not the
#     engine, copied what was verified;
#  4. swdma fail_every: 4k requests (one page, one descriptor each) with
#     fail_every=7, then 64k requests (up to 16 descriptors) with
#     fail_every=61: fio verify passes with no error; dma_fallbacks must
#     have moved, by exactly failed_injected at 4k (0028 counts one
#     fallback per request with a failed descriptor), by 1..failed_injected
#     at 64k; dma_requests + dma_fallbacks must equal the requests; the
#     channel must still be held (dma 1: 0028 retires it only after 8
#     failed requests in a row, which these rates never give);
#  5. swdma reorder=1 and delay_us=100, libaio queue depth 4 (under the
#     busy rule's 8), 64k and 1M: fio verify passes, every request on the
#     engine, no fallback, and swdma's reordered counter moved (else
#     nothing was completed out of order);
#  6. the provider unbound while fio writes: swdma loaded again with
#     release=0 (no device_release, like ptdma: dmaengine warns if a
#     client still holds a channel when such a provider is unbound),
#     delay_us=200, libaio queue depth 4, unbound once dma_requests has
#     moved by 16; then the verify pass.  The unbind must return within
#     30 s and each fio pass within 300 s (a hang), both passes verify
#     with no error, the disk must have given the channel back before
#     swdma's remove ran (dma 0, dma_channel "none", the kernel log says
#     "its provider is being unbound", swdma aborted nothing: the
#     requests on the channel drained while the provider still ran them;
#     and no kernel report, which the runner checks), every swdma
#     descriptor accounted for (submitted = completed + failed +
#     aborted), a new fio verify must leave dma_requests and swdma's
#     submitted unchanged (the CPU copies), then rmmod swdma must
#     succeed within 30 s;
#  7. flush/FUA (swdma loaded again, dma 1, threshold 4 KiB when
#     available, else the CPU): 4 MiB of a fio crc32c pattern written
#     with O_DIRECT|O_SYNC (fio sync=1: REQ_FUA and a flush per write;
#     busybox dd has no oflag=sync) and 4 MiB of random data with dd
#     conv=fsync through the page cache; both must succeed, flush
#     requests must have reached the disk (stat field 16) in each part,
#     with swdma some requests on the engine; then the namespace is
#     unbound and bound again (a simulated remount: a new disk, no page
#     cache; it takes a channel at probe, the threshold goes back to 4)
#     and, read back with O_DIRECT, the first range must verify (fio
#     --verify_only) and the second match the source's sha256sum.  (On
#     emulated pmem a missing flush loses nothing: this catches flush and
#     FUA requests that fail, writes lost or misplaced, and a DMA write
#     not done before its completion.)  Then dma 0 and rmmod;
#  8. sysfs bad input: negative, non-numeric, hexadecimal, fractional,
#     oversized (> UINT_MAX, and > ULLONG_MAX) and out-of-range values
#     written to pmem/dma (0/1) and pmem/dma_threshold_kb (4..1048576)
#     must fail with EINVAL ("Invalid argument") and leave the value
#     unchanged, while both limits of the threshold are accepted; writes
#     to the read-only dma_channel, dma_requests and dma_fallbacks must
#     fail and change nothing; bad nd_pmem.mode values must fail with
#     EINVAL and leave "mq";
#  9. "1" written to pmem/dma with no dmaengine provider registered at all
#     (swdma unloaded by 7; skipped if any channel is in /sys/class/dma)
#     must fail, with an error other than EINVAL (the ABI: the channel
#     request's, "for example -ENODEV") that user space can know: not a
#     kernel-internal errno (512-529, "should never be seen by user
#     programs"; dma_request_chan_by_mask() returns -EPROBE_DEFER when
#     dma_device_list is empty), and dma must stay 0.
# 10. nd_pmem.dma_engine: with swdma loaded, a value that names no
#     provider or channel makes "echo 1 > pmem/dma" fail with ENODEV and
#     leaves dma 0; "swdma" (its driver name) takes one of swdma's
#     channels; the exact name of swdma's second channel takes that one.
# 11. known bad blocks: the disk's badblocks list (/sys/block/<disk>/
#     badblocks, which pmem's is) gets 8 sectors at 2 MiB.  In bio mode,
#     then in mq mode with swdma and DMA for every request (threshold
#     4 KiB), an O_DIRECT read of those 4 KiB must fail with EIO (the
#     CPU path's poison handling; a legacy memmap= region has no poison
#     to clear, so the error stays), leave dma_requests unchanged (the
#     gate keeps known bad ranges off the engine) and count no fallback;
#     a 64 KiB read at 8 MiB must succeed, in mq mode on the engine; an
#     8 KiB O_DIRECT write from 4 KiB before the bad range must clear it
#     from the list (poison clearing, which on a legacy memmap= bus
#     only says it cleared) and read back verified: in mq mode
#     ->queue_rq() does not sleep, so it stops at the bad page and leaves
#     the request to process context, which clears as bio mode does.  A
#     rebind empties the list (the namespace has no bad ranges).  On a
#     kernel without part 3 it runs in bio mode only.
# 12. a namespace without struct pages: the DMA API maps memory through
#     its struct pages, so pmem offers DMA only to a namespace that has
#     them.  The test kernel has ZONE_DEVICE, with which a legacy memmap=
#     namespace gets them even in raw mode (pmem_should_map_pages()), as
#     every subtest above had; here the namespace's force_raw is set
#     first, which leaves it without.  Bound in mq mode with swdma loaded,
#     the disk must take no channel at probe (dma 0, and the kernel log,
#     scoped by a /dev/kmsg marker, says it has no struct pages for DMA),
#     "echo 1 > pmem/dma" must fail with EOPNOTSUPP and leave dma 0, and
#     fio verify 64k and 1M with the threshold at 4 KiB must count no DMA
#     request and leave swdma's submitted unchanged.  Skipped without
#     swdma or the pmem/ group.
# 13. an aborted descriptor (swdma abort_every=3: DMA_TRANS_ABORTED, what
#     a provider's descriptors report when its channel is torn down under
#     them), namespace bound again with its struct pages, threshold 4 KiB,
#     64k random writes: the disk must retire the channel at once (the
#     kernel log, scoped by a /dev/kmsg marker, says "a descriptor was
#     aborted"; dma 0, dma_channel "none"), the request redone by the CPU
#     (dma_fallbacks moved), no I/O error and the verify pass clean, and
#     swdma's descriptors all accounted for; rmmod swdma then succeeds
#     (the channel was released).  Skipped as 12 is.
# Without /tests/modules/swdma.ko subtests 3-6, 10 and 12 skip and 7 copies with the
# CPU; without CONFIG_BLK_DEV_PMEM_DMA (no pmem/ group) 3-6, 9 and 12 skip and
# 8 checks nd_pmem.mode only.  The last line is a summary: faults injected
# into the engine, fallbacks taken, errors returned, data mismatches,
# hangs.
# Injections (make test-inject):
#   pmemmq-corrupt          swdma corrupt_every=13 during subtest 3: only
#                           its fio verify can catch the flipped bytes;
#   pmemmq-nodma            subtest 3 leaves the threshold at 512 KiB: the
#                           4k and 64k requests stay on the CPU, and the
#                           request count must catch it;
#   pmemmq-fail-corrupt     corrupt_every=11 on top of fail_every=7 in
#                           subtest 4: its verify must catch it;
#   pmemmq-reorder-corrupt  corrupt_every=13 during subtest 5;
#   pmemmq-lost-write       4 KiB of subtest 7's O_SYNC range overwritten
#                           before the rebind: its verify must fail;
#   pmemmq-sysfs-valid      subtest 8 expects EINVAL for a valid threshold
#                           (8): the accepted write must fail it;
#   pmemmq-no-badblocks     subtest 11 does not add the bad blocks: the
#                           reads over them succeed, which must fail it;
#   pmemmq-raw-pages        subtest 12 leaves force_raw unset: the
#                           namespace keeps its struct pages and the disk
#                           takes a channel, which must fail it;
#   pmemmq-abort-none       subtest 13 leaves abort_every at 0: nothing is
#                           aborted and the channel stays, which must
#                           fail it.
. /tests/lib/common.sh
KO=/tests/modules/swdma.ko
SW=/sys/module/swdma/parameters
SWDRV=/sys/bus/platform/drivers/swdma
MODE=/sys/module/nd_pmem/parameters/mode
T=/sys/kernel/tracing
SET_MB=${SET_MB:-32}
DESC=(
	"bio mode (default): bio-based, synchronous (no swap readahead), fio verify 4k/64k/1M"
	"mq mode after a rebind: blk-mq, not synchronous (swap reads ahead), dma 0, fio verify 4k/64k/1M on the CPU"
	"mq DMA for every request (threshold 4 KiB): fio verify 4k/64k/1M, every request and byte copied by swdma"
	"mq DMA with swdma fail_every: fio verify, failed requests redone by the CPU (dma_fallbacks), channel kept"
	"mq DMA with swdma reorder=1 delay_us=100: fio verify, descriptors completed out of order"
	"mq DMA, swdma (no device_release) unbound under fio: channel given back before its remove, no hang, no error, new I/O on the CPU, rmmod swdma"
	"mq flush/FUA: O_DIRECT|O_SYNC and buffered+fsync writes, flushes reach the disk, data intact after a rebind"
	"sysfs: bad writes to pmem/dma, dma_threshold_kb, the read-only counters and nd_pmem.mode fail and change nothing"
	"sysfs: dma 1 with no DMA provider at all fails with a user-space errno (ENODEV), dma stays 0"
	"nd_pmem.dma_engine: a channel chosen by provider and by channel name, a name that matches none gives ENODEV"
	"known bad blocks: a read over one fails with EIO in bio mode and in mq mode with DMA for every request, never on the engine; a read beside it succeeds; a write over it clears it and reads back"
	"a namespace without struct pages (force_raw): no channel at probe, dma 1 fails with EOPNOTSUPP, fio verify on the CPU"
	"mq DMA with swdma abort_every: an aborted descriptor retires the channel, its request redone by the CPU, fio verify"
)
ktap_plan ${#DESC[@]}

# Totals for the summary line.
SUM_INJ=0 SUM_FI=0 SUM_COR=0 SUM_AB=0 SUM_FB=0 SUM_ERR=0 SUM_BAD=0 SUM_HANG=0
summary() {
	diag "summary: $SUM_INJ faults injected into the engine ($SUM_FI failed by fail_every, $SUM_COR corrupted, $SUM_AB aborted), $SUM_FB fallbacks taken, $SUM_ERR errors returned, $SUM_BAD data mismatches, $SUM_HANG hangs"
}

hang() { SUM_HANG=$((SUM_HANG + 1)); diag "HANG: $*"; }

# --- the namespace and its disk ---------------------------------------

REGION=$(pmem_regions | head -1)
NS='' DISK='' DEV=''
for n in /sys/bus/nd/devices/"$REGION"/namespace*; do
	[ -d "$n/block" ] || continue
	NS=$(basename "$n") DISK=$(ls "$n/block" | head -1) DEV=/dev/$DISK
	break
done
PM=/sys/block/$DISK/pmem

# rebind [MODE]: pmem_rebind the namespace (tests/lib/common.sh), counting
# an unbind or bind that does not return as a hang.  Sets DISK DEV PM.
rebind() {
	local rc
	pmem_rebind "$NS" "${1:-}"
	rc=$?
	[ $rc -eq 124 ] && hang "rebinding $NS to nd_pmem"
	[ $rc -eq 0 ] || return 1
	DISK=$PMEM_DISK DEV=/dev/$PMEM_DISK PM=/sys/block/$PMEM_DISK/pmem
	# The request counts below come from the disk's stat, which counts
	# only with I/O accounting on: off by default in both modes.
	IOSTATS0=$(cat "/sys/block/$DISK/queue/iostats")
	echo 1 > "/sys/block/$DISK/queue/iostats" || { diag "cannot turn on $DISK's queue/iostats"; return 1; }
}

pmattr() { cat "$PM/$1" 2>/dev/null || echo 0; }
sw() { cat "$SW/$1" 2>/dev/null || echo 0; }
# "ios sectors flushes": reads + writes completed, sectors read + written,
# flush requests completed (/sys/block/<disk>/stat fields 1+5, 3+7, 16).
dstat() { awk '{ print $1 + $5, $3 + $7, $16 + 0 }' "/sys/block/$DISK/stat"; }

SWC="submitted completed failed_injected failed_unmappable aborted corrupted reordered bytes_copied"
declare -A C0 C1
# snap ARRAY: the disk's, pmem's and swdma's counters now, into ARRAY.
# shellcheck disable=SC2034,SC2154	# s is a nameref to ARRAY
snap() {
	local -n s=$1
	local c
	read -r 's[ios]' 's[sectors]' 's[flushes]' <<< "$(dstat)"
	s[dreq]=$(pmattr dma_requests)
	s[dfb]=$(pmattr dma_fallbacks)
	for c in $SWC; do s[$c]=$(sw "$c"); done
}
d() { echo $(( C1[$1] - C0[$1] )); }	# counter $1 from C0 to C1

# swdma: load, unload; the faults it injected go to the summary.
# sw_load [PARAM=VALUE...]: two channels, and the given parameters.
sw_load() {
	local out
	out=$(insmod $KO channels=2 "$@" 2>&1) || { diag "insmod swdma $*: $out"; return 1; }
}
sw_account() {
	local fij co ab
	fij=$(sw failed_injected) co=$(sw corrupted)
	ab=$(( $(sw aborted) + $(sw abort_injected) ))
	SUM_FI=$((SUM_FI + fij)) SUM_COR=$((SUM_COR + co)) SUM_AB=$((SUM_AB + ab))
	SUM_INJ=$((SUM_INJ + fij + co + ab))
}
sw_unload() {
	local rc
	[ -d /sys/module/swdma ] || return 0
	sw_account
	within 30 rmmod swdma
	rc=$?
	[ $rc -eq 124 ] && hang "rmmod swdma"
	[ $rc -eq 0 ] && [ ! -d /sys/module/swdma ]
}
sw_params_off() {
	[ -d $SW ] || return 0
	echo 0 > $SW/fail_every
	echo 0 > $SW/corrupt_every
	echo 0 > $SW/delay_us
	echo 0 > $SW/reorder
}
# fb_account: the disk's dma_fallbacks (since its probe) to the summary,
# before the disk goes away.
fb_account() { [ -e "$PM/dma_fallbacks" ] && SUM_FB=$((SUM_FB + $(pmattr dma_fallbacks))); }

# The channel the disk holds is one of swdma's.
chan_is_swdma() {
	local c
	c=$(pmattr dma_channel)
	[ "$c" != none ] && [ "$(basename "$(readlink -f "/sys/class/dma/$c/device")")" = swdma ]
}
# dma_on: take a channel (if the disk has none), threshold at the minimum.
dma_on() {
	echo 1 > "$PM/dma" || { diag "echo 1 > $PM/dma failed"; return 1; }
	[ "$(pmattr dma)" = 1 ] || { diag "dma reads $(pmattr dma) after echo 1"; return 1; }
	chan_is_swdma || { diag "the disk's channel '$(pmattr dma_channel)' is not swdma's"; return 1; }
	echo 4 > "$PM/dma_threshold_kb" || { diag "cannot set dma_threshold_kb=4"; return 1; }
}

# --- fio ----------------------------------------------------------------

SEED=9000 F_ERR=0 F_BAD=0
# fio_opts RW BS SIZE [FIO OPTION...]: FIO_OPTS, the options of a new case
# (a seed of its own) on the disk: O_DIRECT, psync unless an option says
# otherwise (the last one wins), a crc32c pattern, verify_fatal (wrong data
# ends the run), continue_on_error=io with error_dump (every I/O error
# logged and counted).
fio_opts() {
	local rw=$1 bs=$2 size=$3
	shift 3
	SEED=$((SEED + 1))
	FIO_OPTS=(--name=pmq --filename="$DEV" --direct=1 --ioengine=psync
		--rw="$rw" --bs="$bs" --size="$size" --verify=crc32c --verify_fatal=1
		--continue_on_error=io --error_dump=1 --randrepeat=1 --randseed="$SEED"
		--verify_state_save=0 "$@")
}
# fio_count PASS RC OUTPUT: count a fio run's I/O errors (or a failure that
# is neither an I/O error nor wrong data) and blocks that failed
# verification, into F_ERR, F_BAD and the totals; status 0 if none.
fio_count() {
	local pass=$1 rc=$2 out=$3 err bad
	err=$(grep -c 'io_u error' <<< "$out")
	bad=$(grep -cE 'verify failed|verify: bad' <<< "$out")
	if [ "$rc" -ne 0 ] || [ "$err" -gt 0 ] || [ "$bad" -gt 0 ]; then
		[ "$err" -eq 0 ] && [ "$bad" -eq 0 ] && err=1
		diag "fio $pass pass on $DEV ($(grep -o -- '--rw=[a-z]* --bs=[0-9a-zA-Z]*' <<< "${FIO_OPTS[*]}")): rc=$rc, $err I/O errors, $bad blocks failed verification"
		grep -E 'error|verify|bad|CRC' <<< "$out" | head -6 | sed 's/^/#   /'
	fi
	F_ERR=$((F_ERR + err)) F_BAD=$((F_BAD + bad))
	SUM_ERR=$((SUM_ERR + err)) SUM_BAD=$((SUM_BAD + bad))
	[ "$err" -eq 0 ] && [ "$bad" -eq 0 ]
}
# fio_pass write|verify: run FIO_OPTS once, writing the pattern or reading
# it back and verifying it (a separate run: the data comes from the disk).
fio_pass() {
	local out rc
	if [ "$1" = write ]; then
		out=$(fio --thread "${FIO_OPTS[@]}" --do_verify=0 2>&1)
	else
		out=$(fio --thread "${FIO_OPTS[@]}" --verify_only 2>&1)
	fi
	rc=$?
	fio_count "$1" $rc "$out"
}
# fio_case RW BS SIZE [FIO OPTION...]: a new case, written then verified;
# status 0 only with no error and no wrong data.
fio_case() {
	fio_opts "$@"
	F_ERR=0 F_BAD=0
	fio_pass write
	fio_pass verify
	[ $F_ERR -eq 0 ] && [ $F_BAD -eq 0 ]
}
# fio_sizes: the three block sizes of subtests 1-3.
fio_sizes() {
	local rc=0
	fio_case randwrite 4k 8M || rc=1
	fio_case randwrite 64k 16M || rc=1
	fio_case write 1M 32M || rc=1
	return $rc
}

# --- synchronous or not: swap readahead and bdev_synchronous() ------------

sysctl -qw vm.page-cluster=3
CG=$(memcg_setup pmemmq "$((SET_MB / 4))M")
# swap_check: swap on the disk, a sequential swap-in of SET_MB MiB under a
# quarter of that in memory.max (swapverify verifies every page).  Sets
# SWAP_RC, SWAP_FLT (major faults), SWAP_RATIO (pages swapped in per
# fault) and BSYNC (what bdev_synchronous() returned in swapon: 1 or 0,
# empty without kprobes or without the function).
swap_check() {
	local out kp=0 pin
	BSYNC='' SWAP_RC=0 SWAP_FLT=0 SWAP_RATIO=0
	if [ -w $T/kprobe_events ] &&
		echo 'r:pmemmq/bsync bdev_synchronous ret=$retval:u8' >> $T/kprobe_events 2>/dev/null; then
		echo > $T/trace
		echo 1 > $T/events/pmemmq/bsync/enable && kp=1
	fi
	if ! swap_on "$DEV"; then
		SWAP_RC=3
		diag "swapon $DEV failed"
	fi
	if [ $kp = 1 ]; then
		echo 0 > $T/events/pmemmq/bsync/enable
		BSYNC=$(sed -n 's/.* bsync: .*ret=\([0-9]*\).*/\1/p' $T/trace | head -1)
		echo > $T/trace
	fi
	echo '-:pmemmq/bsync' >> $T/kprobe_events 2>/dev/null
	[ $SWAP_RC = 3 ] && return
	out=$(run_in_cg "$CG" swapverify -s "$SET_MB" -o -q 2>&1)
	SWAP_RC=$?
	swapoff "$DEV" || { SWAP_RC=3; diag "swapoff $DEV failed"; }
	SWAP_FLT=$(sed -n 's/^access_majflt=//p' <<< "$out")
	pin=$(sed -n 's/^access_pswpin=//p' <<< "$out")
	SWAP_RATIO=$(awk -v a="${pin:-0}" -v b="${SWAP_FLT:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print 0 }')
	diag "swap on $DEV: ${SWAP_FLT:-0} major faults, ${pin:-0} pages swapped in, $SWAP_RATIO pages/fault, bdev_synchronous() at swapon: ${BSYNC:-not probed}"
	if [ $SWAP_RC -ne 0 ]; then
		SUM_BAD=$((SUM_BAD + 1))
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
	fi
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
# swap_judge bio|mq: swap_check's results against what that mode must do:
# no error or lost page, at least 500 major faults, and bio mode
# synchronous (0.90-1.10 pages per fault, bdev_synchronous() 1), mq mode
# not (at least 1.50 pages per fault, bdev_synchronous() 0).
swap_judge() {
	local mode=$1 rc=0 sync=0
	[ "$mode" = bio ] && sync=1
	[ "$SWAP_RC" -eq 0 ] || { rc=1; diag "swap on the $mode-mode disk failed or lost data (rc=$SWAP_RC)"; }
	if [ "${SWAP_FLT:-0}" -lt 500 ]; then
		rc=1
		diag "too few major faults to judge"
	elif [ $sync = 1 ] && { ! le 0.90 "$SWAP_RATIO" || ! le "$SWAP_RATIO" 1.10; }; then
		rc=1
		diag "$SWAP_RATIO pages per fault, not 0.90-1.10: the bio-mode disk is not synchronous (readahead)"
	elif [ $sync = 0 ] && ! le 1.50 "$SWAP_RATIO"; then
		rc=1
		diag "$SWAP_RATIO pages per fault, under 1.50: swap took the synchronous path on the mq-mode disk"
	fi
	[ -z "$BSYNC" ] || [ "$BSYNC" = $sync ] || { rc=1; diag "bdev_synchronous() returned $BSYNC on the $mode-mode disk"; }
	return $rc
}

# --- 11: known bad blocks, used by the last subtest (and on a kernel
# without part 3, in bio mode only) ---------------------------------------
BB_SECTOR=4096 BB_LEN=8
# bb_read OFFSET BYTES: one O_DIRECT read with fio, output in /tmp/bb.out.
bb_read() {
	fio --name=bb --filename="$DEV" --direct=1 --ioengine=psync --rw=read \
		--bs="$2" --size="$2" --offset="$1" > /tmp/bb.out 2>&1
}
# bb_write OFFSET BYTES [verify]: one O_DIRECT write with fio of
# crc32c-verifiable data (with "verify": read it back and verify it
# instead), output in /tmp/bb.out.
bb_write() {
	local v=--do_verify=0
	[ "${3:-}" = verify ] && v='--do_verify=1 --verify_only=1'
	# shellcheck disable=SC2086
	fio --name=bb --filename="$DEV" --direct=1 --ioengine=psync --rw=write \
		--bs="$2" --size="$2" --offset="$1" --verify=crc32c \
		--verify_fatal=1 $v > /tmp/bb.out 2>&1
}
# bb_case LABEL ENGINE: add the bad range to the disk's list, read over it
# and beside it, write over it; ENGINE 1 when the read beside it must be
# on the engine.
bb_case() {
	local label=$1 engine=$2 rc=0
	if ! injecting pmemmq-no-badblocks; then
		echo "$BB_SECTOR $BB_LEN" > "/sys/block/$DISK/badblocks" ||
			{ diag "$label: cannot write $DISK's badblocks"; return 1; }
	fi
	diag "$label: badblocks: $(tr '\n' ' ' < "/sys/block/$DISK/badblocks")"
	snap C0
	if bb_read $((BB_SECTOR * 512)) 4096; then
		rc=1
		diag "$label: the read over the bad blocks succeeded"
	elif ! grep -q "Input/output error" /tmp/bb.out; then
		rc=1
		diag "$label: the read over the bad blocks failed, but not with EIO: $(grep -i error /tmp/bb.out | head -1)"
	fi
	snap C1
	[ "$(d dreq)" -eq 0 ] || { rc=1; diag "$label: $(d dreq) requests over the bad blocks went to the engine"; }
	[ "$(d dfb)" -eq 0 ] || { rc=1; diag "$label: $(d dfb) fallbacks over the bad blocks"; }
	snap C0
	bb_read $((8 << 20)) 65536 || { rc=1; diag "$label: the read beside the bad blocks failed: $(grep -i error /tmp/bb.out | head -1)"; }
	snap C1
	local beside
	beside=$(d dreq)
	if [ "$engine" = 1 ] && [ "$beside" -lt 1 ]; then
		rc=1
		diag "$label: the read beside the bad blocks did not go to the engine"
	fi
	# 8 KiB from 4 KiB before the bad range: the write clears the poison
	# (a legacy memmap= bus has nothing to clear and says so), so the
	# range leaves the list and reads back what was written.  In mq mode
	# ->queue_rq() may sleep only on a BLK_MQ_F_BLOCKING queue (blk-mq's
	# debugfs hctx0/flags); without it ->queue_rq() must stop at the bad
	# page and leave the request to process context, the disk's own
	# workqueue (<disk>_mq), which the workqueue_queue_work event shows.
	local ev=0 flags='' punts=0
	case $label in
	mq*)	flags=$(cat "/sys/kernel/debug/block/$DISK/hctx0/flags" 2>/dev/null)
		if [ -n "$flags" ] && [ -w $T/events/workqueue/workqueue_queue_work/enable ]; then
			echo > $T/trace
			echo 1 > $T/events/workqueue/workqueue_queue_work/enable && ev=1
		fi ;;
	esac
	snap C0
	if ! bb_write $(((BB_SECTOR - 8) * 512)) 8192; then
		rc=1
		diag "$label: the write over the bad blocks failed: $(grep -i error /tmp/bb.out | head -1)"
	fi
	snap C1
	if [ $ev = 1 ]; then
		echo 0 > $T/events/workqueue/workqueue_queue_work/enable
		punts=$(grep -c "function=pmem_cmd_work workqueue=${DISK}_mq" $T/trace)
		echo > $T/trace
		if [[ $flags == *BLOCKING* ]]; then
			[ "$punts" -eq 0 ] || { rc=1; diag "$label: a BLK_MQ_F_BLOCKING queue punted $punts requests"; }
		else
			if [ "$punts" -lt 1 ]; then
				rc=1
				diag "$label: the write over poison was not left to ${DISK}_mq (hctx0 flags: $flags)"
			fi
			# a queue whose ->queue_rq() never sleeps takes REQ_NOWAIT
			if ! grep -qw NOWAIT "/sys/kernel/debug/block/$DISK/state"; then
				rc=1
				diag "$label: no NOWAIT in the queue's state: $(cat "/sys/kernel/debug/block/$DISK/state")"
			fi
		fi
		diag "$label: hctx0 $flags; $punts requests of the write over poison finished on ${DISK}_mq"
	fi
	[ "$(d dreq)" -eq 0 ] || { rc=1; diag "$label: $(d dreq) requests of the write over the bad blocks went to the engine"; }
	[ "$(d dfb)" -eq 0 ] || { rc=1; diag "$label: $(d dfb) fallbacks in the write over the bad blocks"; }
	if ! bb_write $(((BB_SECTOR - 8) * 512)) 8192 verify; then
		rc=1
		diag "$label: the range written over the bad blocks does not read back: $(grep -iE 'error|verify' /tmp/bb.out | head -1)"
	fi
	# (sysfs files have a size whatever they hold: read the list)
	local left
	left=$(tr '\n' ' ' < "/sys/block/$DISK/badblocks")
	if [ -n "${left// /}" ]; then
		rc=1
		diag "$label: bad blocks left after the write over them: $left"
	fi
	diag "$label: read over the bad blocks refused with EIO, dma_requests +$beside for the read beside them; a write over them cleared them and reads back"
	return $rc
}

# =========================================================================
# 1: bio mode.
rc=0
if [ -z "$DISK" ] || [ ! -b "$DEV" ]; then
	diag "no pmem disk on the first region ($REGION)"
	for d in "${DESC[@]}"; do ktap_fail "$d"; done
	summary
	ktap_done
fi
HAVE_MODE=0
[ -w $MODE ] && HAVE_MODE=1
diag "$NS -> $DEV; nd_pmem.mode: $(cat $MODE 2>/dev/null || echo 'none (part 3 not applied)')"
if [ $HAVE_MODE = 1 ] && [ "$(cat $MODE)" != bio ]; then
	rc=1
	diag "nd_pmem.mode is '$(cat $MODE)', not the default bio"
fi
[ -e "/sys/block/$DISK/mq" ] && { rc=1; diag "/sys/block/$DISK/mq exists: bio mode is blk-mq"; }
[ -e "$PM" ] && { rc=1; diag "$PM exists on a bio-mode disk"; }
swap_check
swap_judge bio || rc=1
fio_sizes || rc=1
ktap_result $rc "${DESC[0]}"

if [ $HAVE_MODE = 0 ]; then
	diag "no $MODE: this kernel has no pmem blk-mq mode (part 3)"
	for d in "${DESC[@]:1:9}"; do ktap_skip "$d"; done
	# 11 in bio mode only: the bad-block handling the series keeps.
	rc=0
	bb_case bio 0 || rc=1
	rebind || rc=1
	ktap_result $rc "${DESC[10]}"
	ktap_skip "${DESC[11]}"
	ktap_skip "${DESC[12]}"
	summary
	ktap_done
fi

# =========================================================================
# 2: mq mode, the CPU copies.
rc=0
MQ=0 DMAG=0
if rebind mq; then
	MQ=1
	[ "$(cat $MODE)" = mq ] || { rc=1; diag "nd_pmem.mode reads '$(cat $MODE)' after writing mq"; }
	if [ ! -d "/sys/block/$DISK/mq" ]; then
		rc=1 MQ=0
		diag "no /sys/block/$DISK/mq: the disk is not blk-mq"
	fi
	# bio mode's default (a bio-based queue starts without accounting)
	[ "$IOSTATS0" = 0 ] || { rc=1; diag "mq mode turned I/O accounting on (queue/iostats $IOSTATS0 after the bind): bio mode has it off"; }
	diag "$DEV: scheduler $(cat /sys/block/$DISK/queue/scheduler), max_sectors_kb $(cat /sys/block/$DISK/queue/max_sectors_kb), $(ls -d /sys/block/$DISK/mq/* 2>/dev/null | wc -l) hardware queues"
	if [ -d "$PM" ]; then
		DMAG=1
		echo 0 > "$PM/dma" || { rc=1; diag "echo 0 > $PM/dma failed"; }
		[ "$(pmattr dma)" = 0 ] || { rc=1; diag "dma reads $(pmattr dma) after echo 0"; }
		[ "$(pmattr dma_channel)" = none ] || { rc=1; diag "dma_channel reads $(pmattr dma_channel) with dma 0"; }
		[ "$(pmattr dma_threshold_kb)" = 512 ] || diag "dma_threshold_kb is $(pmattr dma_threshold_kb), not the default 512"
	else
		diag "no $PM: no DMA offload in this kernel (CONFIG_BLK_DEV_PMEM_DMA)"
	fi
	swap_check
	swap_judge mq || rc=1
	snap C0
	fio_sizes || rc=1
	snap C1
	[ "$(d dreq)" -eq 0 ] || { rc=1; diag "$(d dreq) requests counted as DMA with dma 0"; }
else
	rc=1
fi
ktap_result $rc "${DESC[1]}"

if [ $MQ = 0 ]; then
	diag "no blk-mq disk: subtests 3-9 cannot run"
	for d in "${DESC[@]:2}"; do ktap_fail "$d"; done
	summary
	ktap_done
fi

# =========================================================================
# 3-6: DMA offload with swdma.
SWOK=0
if [ $DMAG = 0 ]; then
	why="no pmem/ attribute group (no CONFIG_BLK_DEV_PMEM_DMA)"
elif [ ! -f $KO ]; then
	why="no $KO (the runner builds tests/modules only for a kernel with its object directory)"
elif sw_load; then
	SWOK=1
else
	why="swdma does not load"
fi
if [ $SWOK = 0 ]; then
	diag "$why"
	for d in "${DESC[@]:2:4}"; do
		if [ -f $KO ] && [ $DMAG = 1 ]; then ktap_fail "$d"; else ktap_skip "$d"; fi
	done
else
	# 3: every request on the engine.
	rc=0
	dma_on || rc=1
	injecting pmemmq-nodma && echo 512 > "$PM/dma_threshold_kb"
	injecting pmemmq-corrupt && echo 13 > $SW/corrupt_every
	diag "DMA on $(pmattr dma_channel), threshold $(pmattr dma_threshold_kb) KiB"
	snap C0
	fio_sizes || rc=1
	snap C1
	sw_params_off
	diag "disk: $(d ios) requests, $(d sectors) sectors; pmem: dma_requests +$(d dreq), dma_fallbacks +$(d dfb); swdma: submitted +$(d submitted), completed +$(d completed), failed +$(( $(d failed_injected) + $(d failed_unmappable) )), bytes_copied +$(d bytes_copied)"
	if [ "$(d dreq)" -le 0 ] || [ "$(d submitted)" -le 0 ] || [ "$(d completed)" -le 0 ]; then
		rc=1
		diag "the DMA counters did not move: nothing was copied by the engine"
	fi
	[ "$(d dreq)" -eq "$(d ios)" ] || { rc=1; diag "$(d dreq) of $(d ios) requests copied by DMA: not every request went to the engine"; }
	[ "$(d dfb)" -eq 0 ] || { rc=1; diag "$(d dfb) fallbacks with nothing injected"; }
	[ "$(d submitted)" -eq "$(d completed)" ] || { rc=1; diag "swdma: $(d submitted) descriptors submitted, $(d completed) completed"; }
	[ "$(d submitted)" -ge "$(d dreq)" ] || { rc=1; diag "fewer descriptors than DMA requests"; }
	[ "$(d bytes_copied)" -eq $(( $(d sectors) * 512 )) ] || { rc=1; diag "swdma copied $(d bytes_copied) bytes, the disk moved $(( $(d sectors) * 512 ))"; }
	[ "$(pmattr dma)" = 1 ] || { rc=1; diag "the channel was given up (dma $(pmattr dma))"; }
	ktap_result $rc "${DESC[2]}"

	# 4: injected descriptor failures.
	rc=0
	[ "$(pmattr dma)" = 1 ] || dma_on || rc=1
	echo 4 > "$PM/dma_threshold_kb"
	# 4 KiB: one descriptor per request.
	echo 7 > $SW/fail_every
	injecting pmemmq-fail-corrupt && echo 11 > $SW/corrupt_every
	snap C0
	fio_case randwrite 4k 8M || rc=1
	snap C1
	sw_params_off
	diag "4k, fail_every=7: $(d ios) requests, dma_requests +$(d dreq), dma_fallbacks +$(d dfb); swdma failed_injected +$(d failed_injected), completed +$(d completed)"
	if [ "$(d failed_injected)" -le 0 ] || [ "$(d dfb)" -le 0 ]; then
		rc=1
		diag "no failure injected or no fallback counted: this subtest could not fail"
	fi
	[ "$(d dfb)" -eq "$(d failed_injected)" ] || { rc=1; diag "4k: $(d dfb) fallbacks for $(d failed_injected) failed one-descriptor requests"; }
	[ $(( $(d dreq) + $(d dfb) )) -eq "$(d ios)" ] || { rc=1; diag "4k: dma_requests + dma_fallbacks = $(( $(d dreq) + $(d dfb) )), requests $(d ios)"; }
	[ "$(pmattr dma)" = 1 ] || { rc=1; diag "4k: the channel was retired (dma 0)"; }
	# 64 KiB: up to 16 descriptors per request.
	[ "$(pmattr dma)" = 1 ] || dma_on || rc=1
	echo 61 > $SW/fail_every
	snap C0
	fio_case randwrite 64k 16M || rc=1
	snap C1
	sw_params_off
	diag "64k, fail_every=61: $(d ios) requests, dma_requests +$(d dreq), dma_fallbacks +$(d dfb); swdma submitted +$(d submitted), failed_injected +$(d failed_injected)"
	if [ "$(d failed_injected)" -le 0 ] || [ "$(d dfb)" -le 0 ]; then
		rc=1
		diag "64k: no failure injected or no fallback counted"
	elif [ "$(d dfb)" -gt "$(d failed_injected)" ]; then
		rc=1
		diag "64k: $(d dfb) fallbacks for $(d failed_injected) failed descriptors"
	fi
	[ $(( $(d dreq) + $(d dfb) )) -eq "$(d ios)" ] || { rc=1; diag "64k: dma_requests + dma_fallbacks = $(( $(d dreq) + $(d dfb) )), requests $(d ios)"; }
	[ "$(pmattr dma)" = 1 ] || { rc=1; diag "64k: the channel was retired (dma 0)"; }
	ktap_result $rc "${DESC[3]}"

	# 5: out-of-order completion.
	rc=0
	[ "$(pmattr dma)" = 1 ] || dma_on || rc=1
	echo 4 > "$PM/dma_threshold_kb"
	echo 100 > $SW/delay_us
	echo 1 > $SW/reorder
	injecting pmemmq-reorder-corrupt && echo 13 > $SW/corrupt_every
	snap C0
	fio_case randwrite 64k 8M --ioengine=libaio --iodepth=4 || rc=1
	fio_case write 1M 16M --ioengine=libaio --iodepth=4 || rc=1
	snap C1
	sw_params_off
	diag "reorder: $(d ios) requests, dma_requests +$(d dreq), dma_fallbacks +$(d dfb); swdma submitted +$(d submitted), reordered +$(d reordered)"
	[ "$(d reordered)" -gt 0 ] || { rc=1; diag "nothing was reordered: this subtest tested nothing"; }
	[ "$(d dreq)" -eq "$(d ios)" ] || { rc=1; diag "$(d dreq) of $(d ios) requests on the engine at queue depth 4"; }
	[ "$(d dfb)" -eq 0 ] || { rc=1; diag "$(d dfb) fallbacks with nothing injected"; }
	ktap_result $rc "${DESC[4]}"

	# 6: the provider, without device_release, unbound under fio.
	rc=0
	echo 0 > "$PM/dma" || { rc=1; diag "echo 0 > $PM/dma failed"; }
	sw_params_off
	sw_unload || { rc=1; diag "rmmod swdma failed before subtest 6"; }
	sw_load release=0 || rc=1
	dma_on || rc=1
	echo 200 > $SW/delay_us
	echo "90-pmem-mq: subtest 6 unbinds swdma" > /dev/kmsg
	snap C0
	fio_opts write 64k 48M --ioengine=libaio --iodepth=4
	F_ERR=0 F_BAD=0
	fio --thread "${FIO_OPTS[@]}" --do_verify=0 > /tmp/fio6w.out 2>&1 &
	fpid=$!
	for _ in $(seq 600); do
		[ $(( $(pmattr dma_requests) - C0[dreq] )) -ge 16 ] && break
		kill -0 $fpid 2>/dev/null || break
		sleep 0.1
	done
	moved=$(( $(pmattr dma_requests) - C0[dreq] ))
	if ! kill -0 $fpid 2>/dev/null; then
		rc=1
		diag "fio ended before the unbind ($moved DMA requests): the unbind was not under I/O"
	fi
	diag "unbinding swdma after $moved DMA requests"
	within 30 sysfs_write swdma $SWDRV/unbind
	urc=$?
	[ $urc -eq 124 ] && hang "unbinding swdma"
	[ $urc -eq 0 ] || { rc=1; diag "swdma unbind failed ($urc)"; }
	fdone=0
	for _ in $(seq 3000); do
		kill -0 $fpid 2>/dev/null || { fdone=1; break; }
		sleep 0.1
	done
	if [ $fdone = 0 ]; then
		rc=1
		hang "fio write pass still running 300 s after the unbind"
	else
		wait $fpid
		fio_count write $? "$(cat /tmp/fio6w.out)" || rc=1
		within 300 fio --thread "${FIO_OPTS[@]}" --verify_only > /tmp/fio6v.out 2>&1
		vrc=$?
		if [ $vrc -eq 124 ]; then
			rc=1 fdone=0
			hang "fio verify pass still running after 300 s"
		else
			fio_count verify $vrc "$(cat /tmp/fio6v.out)" || rc=1
		fi
	fi
	if [ $fdone = 1 ]; then
		snap C1
		diag "across the unbind: $(d ios) requests, dma_requests +$(d dreq), dma_fallbacks +$(d dfb); dma $(pmattr dma), channel $(pmattr dma_channel)"
		[ "$(pmattr dma)" = 0 ] || { rc=1; diag "the disk still holds a channel after its provider was unbound under I/O"; }
		[ "$(pmattr dma_channel)" = none ] || { rc=1; diag "dma_channel reads $(pmattr dma_channel)"; }
		dmesg | sed -n '/90-pmem-mq: subtest 6 unbinds swdma/,$p' | grep -q 'stopped using DMA channel .*(its provider is being unbound)' ||
			{ rc=1; diag "no \"its provider is being unbound\" in the kernel log: the disk did not see the unbind coming"; }
		[ "$(d aborted)" -eq 0 ] || { rc=1; diag "swdma aborted $(d aborted) descriptors: the disk still had requests on the channel when its provider's remove ran"; }
		echo 0 > "$PM/dma" || { rc=1; diag "echo 0 > $PM/dma failed after the unbind"; }
		sub=$(sw submitted) comp=$(sw completed) fij=$(sw failed_injected) fu=$(sw failed_unmappable) ab=$(sw aborted)
		diag "swdma: submitted $sub, completed $comp, failed_injected $fij, failed_unmappable $fu, aborted $ab"
		[ "$sub" -eq $((comp + fij + fu + ab)) ] || { rc=1; diag "descriptors unaccounted for: $((sub - comp - fij - fu - ab))"; }
		[ "$fu" -eq 0 ] || { rc=1; diag "$fu descriptors had a range swdma could not map"; }
		# New I/O: the CPU.
		snap C0
		fio_case randwrite 64k 8M || rc=1
		snap C1
		[ "$(d dreq)" -eq 0 ] && [ "$(d submitted)" -eq 0 ] ||
			{ rc=1; diag "after the unbind: dma_requests +$(d dreq), swdma submitted +$(d submitted): not on the CPU"; }
		sw_params_off
		sw_unload || { rc=1; diag "rmmod swdma failed: $(dmesg | grep swdma | tail -2)"; }
	fi
	ktap_result $rc "${DESC[5]}"
	[ $fdone = 1 ] || SWOK=2	# a fio still stuck: leave swdma alone
fi

# =========================================================================
# 7: flush/FUA, then a rebind.
rc=0
DMA7=0
if [ $SWOK = 1 ] && [ -d /sys/module/swdma ]; then
	diag "swdma still loaded after subtest 6 (its rmmod failed): flush/FUA on the CPU"
elif [ $SWOK = 1 ]; then
	if sw_load && dma_on; then DMA7=1; else rc=1; fi
fi
diag "flush/FUA with $([ $DMA7 = 1 ] && echo "DMA on $(pmattr dma_channel), threshold 4 KiB" || echo "the CPU copy")"
# 4 MiB at 0 with O_DIRECT|O_SYNC (fio sync=1; busybox dd has no
# oflag=sync): REQ_FUA on each write, and a flush from generic_write_sync().
fio_opts write 64k 4M --sync=1
F_ERR=0 F_BAD=0
snap C0
fio_pass write || rc=1
snap C1
fd=$(d flushes) rd=$(d dreq)
# 4 MiB at 8 MiB through the page cache, then fsync.
dd if=/dev/urandom of=/tmp/p7b bs=1M count=4 2>/dev/null
sb=$(sha256sum < /tmp/p7b | cut -c1-64)
snap C0
if ! out=$(dd if=/tmp/p7b of="$DEV" bs=64k seek=128 conv=fsync 2>&1); then
	rc=1 SUM_ERR=$((SUM_ERR + 1))
	diag "dd conv=fsync: $out"
fi
snap C1
fb=$(d flushes) rd=$((rd + $(d dreq)))
diag "O_DIRECT|O_SYNC: $fd flushes; buffered + fsync: $fb flushes; $rd requests by DMA"
[ "$fd" -gt 0 ] || { rc=1; diag "no flush request reached the disk for the O_SYNC writes"; }
[ "$fb" -gt 0 ] || { rc=1; diag "no flush request reached the disk for the fsync"; }
[ $DMA7 = 0 ] || [ "$rd" -gt 0 ] || { rc=1; diag "no request went to the engine"; }
if injecting pmemmq-lost-write; then
	dd if=/dev/urandom of="$DEV" bs=4k seek=10 count=1 oflag=direct 2>/dev/null
fi
fb_account
if rebind; then
	diag "after the rebind: $DEV, mq $([ -d /sys/block/$DISK/mq ] && echo yes || echo no), dma $(pmattr dma) ($(pmattr dma_channel)) taken at probe"
	# the read-back by DMA too, if the new disk took a channel
	[ "$(pmattr dma)" = 1 ] && echo 4 > "$PM/dma_threshold_kb"
	FIO_OPTS[1]=--filename=$DEV
	fio_pass verify || { rc=1; diag "the O_DIRECT|O_SYNC range does not verify after the rebind"; }
	rd_b=$(dd if="$DEV" bs=1M count=4 skip=8 iflag=direct 2>/dev/null | sha256sum | cut -c1-64)
	diag "buffered + fsync range: sha256 written ${sb:0:16}, read back ${rd_b:0:16}"
	[ "$rd_b" = "$sb" ] || { rc=1; SUM_BAD=$((SUM_BAD + 1)); diag "the buffered + fsync range differs after the rebind"; }
else
	rc=1
fi
if [ -d /sys/module/swdma ] && [ $SWOK != 2 ]; then
	[ -w "$PM/dma" ] && echo 0 > "$PM/dma"
	sw_params_off
	sw_unload || diag "rmmod swdma failed after echo 0 > dma"
fi
ktap_result $rc "${DESC[6]}"

# =========================================================================
# 8: bad input.
# try_write FILE VALUE: write VALUE and a newline in one write(2); print
# "ok" or the error (strerror text).
try_write() {
	local err
	err=$( { printf '%s\n' "$2" > "$1"; } 2>&1 ) && { echo ok; return; }
	echo "${err##*: }"
}
rc=0
# bad_writes FILE VALUE...: each write must fail with EINVAL and leave the
# value as it was.
bad_writes() {
	local f=$1 v before after res
	shift
	before=$(cat "$f")
	for v in "$@"; do
		res=$(try_write "$f" "$v")
		after=$(cat "$f")
		if [ "$res" != "Invalid argument" ]; then
			rc=1
			diag "$(basename "$f") <- '$v': $res, not EINVAL"
		fi
		[ "$after" = "$before" ] || { rc=1; diag "$(basename "$f") <- '$v' changed it from '$before' to '$after'"; }
	done
}
OVER=(4294967296 18446744073709551616 99999999999999999999999)
if [ $DMAG = 1 ] && [ -d "$PM" ]; then
	[ "$(pmattr dma)" = 0 ] || echo 0 > "$PM/dma"
	bad_writes "$PM/dma" -1 abc 2 3 0x1 1.5 "1 1" "${OVER[@]}"
	echo 64 > "$PM/dma_threshold_kb" || { rc=1; diag "dma_threshold_kb <- 64 refused"; }
	tbad=(-1 -4 abc 0 1 3 1048577 2097152 4294967295 0x40 64k 1.5 "${OVER[@]}")
	injecting pmemmq-sysfs-valid && tbad+=(8)
	bad_writes "$PM/dma_threshold_kb" "${tbad[@]}"
	for v in 4 1048576 512; do
		res=$(try_write "$PM/dma_threshold_kb" $v)
		[ "$res" = ok ] && [ "$(pmattr dma_threshold_kb)" = $v ] ||
			{ rc=1; diag "dma_threshold_kb <- $v (in range): $res, reads $(pmattr dma_threshold_kb)"; }
	done
	for a in dma_channel dma_requests dma_fallbacks; do
		before=$(pmattr $a)
		res=$(try_write "$PM/$a" 0)
		[ "$res" != ok ] || { rc=1; diag "$a (read-only) accepted a write"; }
		[ "$(pmattr $a)" = "$before" ] || { rc=1; diag "$a changed from $before to $(pmattr $a)"; }
	done
else
	diag "no $PM: only nd_pmem.mode checked"
fi
bad_writes $MODE foo -1 MQ 1 "bio mq" mqq
ktap_result $rc "${DESC[7]}"

# =========================================================================
# 9: "1" with no DMA_MEMCPY provider at all.
rc=0
others=$(ls /sys/class/dma 2>/dev/null | tr '\n' ' ')
if [ $DMAG = 0 ]; then
	diag "no $PM"
	ktap_skip "${DESC[8]}"
elif [ -d /sys/module/swdma ] || [ -n "$others" ]; then
	diag "a provider is still registered (swdma loaded: $([ -d /sys/module/swdma ] && echo yes || echo no); channels: ${others:-none})"
	ktap_skip "${DESC[8]}"
else
	res=$(try_write "$PM/dma" 1)
	diag "dma <- 1 with no provider: $res"
	if [ "$res" = ok ] || [ "$res" = "Invalid argument" ]; then
		rc=1
		diag "dma <- 1 with no DMA_MEMCPY provider: $res, expected the channel request's error (ENODEV)"
	elif [[ $res == "Unknown error 5"[0-9][0-9] ]]; then
		# include/linux/errno.h: 512-529 "should never be seen by user
		# programs"; dma_request_chan_by_mask() returns -EPROBE_DEFER
		# (517) when no dma_device is registered at all.
		rc=1
		diag "dma <- 1 with no provider returned a kernel-internal errno to user space ($res; 517 is EPROBE_DEFER)"
	fi
	[ "$(pmattr dma)" = 0 ] || { rc=1; diag "dma reads $(pmattr dma) with no provider"; }
	ktap_result $rc "${DESC[8]}"
fi

# =========================================================================
# 10: the channel chosen by name (nd_pmem.dma_engine: a provider's driver
# name or the start of a channel name).
rc=0
ENG=/sys/module/nd_pmem/parameters/dma_engine
if [ $DMAG = 0 ] || [ ! -w $ENG ] || [ ! -f $KO ]; then
	diag "no $PM, no $ENG or no $KO"
	ktap_skip "${DESC[9]}"
else
	sw_load || rc=1
	swch=()
	for c in /sys/class/dma/dma*chan*; do
		[ "$(basename "$(readlink -f "$c/device")")" = swdma ] && swch+=("$(basename "$c")")
	done
	[ ${#swch[@]} -ge 2 ] || { rc=1; diag "swdma channels: ${swch[*]:-none}, expected 2"; }
	[ "$(pmattr dma)" = 0 ] || echo 0 > "$PM/dma"
	echo nosuch-engine > $ENG
	res=$(try_write "$PM/dma" 1)
	[ "$res" = "No such device" ] && [ "$(pmattr dma)" = 0 ] ||
		{ rc=1; diag "dma_engine=nosuch-engine: dma <- 1 gave '$res' (expected ENODEV), dma reads $(pmattr dma)"; }
	echo swdma > $ENG
	res=$(try_write "$PM/dma" 1)
	c=$(pmattr dma_channel)
	[ "$res" = ok ] && [[ " ${swch[*]} " == *" $c "* ]] ||
		{ rc=1; diag "dma_engine=swdma: dma <- 1 gave '$res', channel '$c' (swdma: ${swch[*]})"; }
	echo 0 > "$PM/dma"
	want=${swch[1]:-none}
	echo "$want" > $ENG
	res=$(try_write "$PM/dma" 1)
	c=$(pmattr dma_channel)
	[ "$res" = ok ] && [ "$c" = "$want" ] ||
		{ rc=1; diag "dma_engine=$want: dma <- 1 gave '$res', channel '$c'"; }
	diag "dma_engine: nosuch-engine refused, swdma and $want taken"
	echo 0 > "$PM/dma"
	echo > $ENG
	[ -z "$(cat $ENG)" ] || { rc=1; diag "dma_engine reads '$(cat $ENG)' after being emptied"; }
	sw_unload || { rc=1; diag "rmmod swdma failed"; }
	ktap_result $rc "${DESC[9]}"
fi

# =========================================================================
# 11: known bad blocks.
rc=0
fb_account
if rebind bio; then
	bb_case bio 0 || rc=1
else
	rc=1
fi
if rebind mq; then
	if [ $DMAG = 1 ] && [ -f $KO ]; then
		sw_load || rc=1
		dma_on || rc=1
		bb_case "mq, DMA for every request" 1 || rc=1
		echo 0 > "$PM/dma"
		fb_account
		sw_unload || { rc=1; diag "rmmod swdma failed"; }
	else
		bb_case "mq, CPU" 0 || rc=1
	fi
	rebind || rc=1
else
	rc=1
fi
ktap_result $rc "${DESC[10]}"

# =========================================================================
# 12: a namespace without struct pages takes no channel.
rc=0
RAW=/sys/bus/nd/devices/$NS/force_raw
if [ $DMAG = 0 ] || [ ! -f $KO ] || [ ! -w "$RAW" ]; then
	diag "no $PM, no $KO or no $RAW"
	ktap_skip "${DESC[11]}"
else
	sw_load || rc=1
	if ! injecting pmemmq-raw-pages; then
		echo 1 > "$RAW" || { rc=1; diag "cannot set $RAW"; }
	fi
	echo "90-pmem-mq: subtest 12 binds $NS with force_raw" > /dev/kmsg
	if rebind mq; then
		dmesg | sed -n '/90-pmem-mq: subtest 12 binds/,$p' | grep -q "$DISK: no struct pages for DMA" ||
			{ rc=1; diag "no \"$DISK: no struct pages for DMA\" in the kernel log after the bind"; }
		[ "$(pmattr dma)" = 0 ] || { rc=1; diag "the disk took channel $(pmattr dma_channel) without struct pages"; }
		res=$(try_write "$PM/dma" 1)
		diag "dma <- 1 without struct pages: $res"
		[ "$res" = "Operation not supported" ] ||
			{ rc=1; diag "dma <- 1 without struct pages gave '$res', expected EOPNOTSUPP"; }
		[ "$(pmattr dma)" = 0 ] || { rc=1; diag "dma reads $(pmattr dma) after the refused write"; }
		echo 4 > "$PM/dma_threshold_kb"
		snap C0
		fio_case randwrite 64k 8M || rc=1
		fio_case write 1M 16M || rc=1
		snap C1
		diag "without struct pages: $(d ios) requests, dma_requests +$(d dreq), swdma submitted +$(d submitted)"
		[ "$(d dreq)" -eq 0 ] && [ "$(d submitted)" -eq 0 ] ||
			{ rc=1; diag "requests went to the engine without struct pages"; }
	else
		rc=1
	fi
	echo 0 > "$RAW"
	sw_unload || { rc=1; diag "rmmod swdma failed"; }
	ktap_result $rc "${DESC[11]}"
fi

# =========================================================================
# 13: an aborted descriptor retires the channel.
rc=0
if [ $DMAG = 0 ] || [ ! -f $KO ]; then
	diag "no $PM or no $KO"
	ktap_skip "${DESC[12]}"
else
	fb_account
	rebind mq || rc=1
	sw_load || rc=1
	dma_on || rc=1
	echo "90-pmem-mq: subtest 13 aborts descriptors" > /dev/kmsg
	injecting pmemmq-abort-none || echo 3 > $SW/abort_every
	snap C0
	fio_case randwrite 64k 8M || rc=1
	snap C1
	echo 0 > $SW/abort_every
	diag "abort_every=3: $(d ios) requests, dma_requests +$(d dreq), dma_fallbacks +$(d dfb); swdma abort_injected $(sw abort_injected); dma $(pmattr dma), channel $(pmattr dma_channel)"
	[ "$(sw abort_injected)" -ge 1 ] || { rc=1; diag "swdma aborted nothing: the channel was never used"; }
	dmesg | sed -n '/90-pmem-mq: subtest 13 aborts/,$p' | grep -q 'stopped using DMA channel .*(a descriptor was aborted)' ||
		{ rc=1; diag "no \"a descriptor was aborted\" in the kernel log: the channel was not retired"; }
	[ "$(pmattr dma)" = 0 ] && [ "$(pmattr dma_channel)" = none ] ||
		{ rc=1; diag "the disk still holds $(pmattr dma_channel) after an aborted descriptor"; }
	[ "$(d dfb)" -ge 1 ] || { rc=1; diag "no fallback: the aborted request was not redone by the CPU"; }
	sub=$(sw submitted) comp=$(sw completed) fij=$(sw failed_injected) abi=$(sw abort_injected) fu=$(sw failed_unmappable) ab=$(sw aborted)
	[ "$sub" -eq $((comp + fij + abi + fu + ab)) ] || { rc=1; diag "swdma descriptors unaccounted for: $((sub - comp - fij - abi - fu - ab))"; }
	sw_unload || { rc=1; diag "rmmod swdma failed: $(dmesg | grep swdma | tail -2)"; }
	ktap_result $rc "${DESC[12]}"
fi

fb_account
[ -d /sys/module/swdma ] && sw_account
summary
ktap_done
