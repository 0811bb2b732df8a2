#!/bin/bash
# vm: mem=2048 timeout=300
# O_DIRECT from a buffer that starts inside a page: for every test device
# (zram lzo, brd, pmem, btt with 4096 B sectors, null_blk, loop, a file on
# ext4 on zram (the iomap path), and pmem in blk-mq mode with DMA offload
# where the kernel has it), diooffset reads 4 KiB and 12 KiB into a buffer
# 512 and 3584 bytes into a page, and writes from it, with guard bytes
# around the buffer.  The data must be right, the guard bytes intact, and
# a refused write must leave the data alone.  Whether the kernel refuses
# the transfer (EINVAL) is decided by the device's DMA alignment
# (queue/dma_alignment, which statx reports as STATX_DIOALIGN's memory
# alignment): refused exactly when the buffer is not aligned to it, done
# otherwise; any other outcome fails the case.
#
# v6.1.4 fails this on zram (dma_alignment 511, but the data wrong and the
# buffer's neighbours overwritten) and on btt with 4096 B sectors (EIO);
# the fixes are patches 57-58 of the series, which apply to v6.1.4 alone
# (make stable-kernel builds v6.1.4 with them).
. /tests/lib/common.sh

zram=$(zram_setup 64M lzo)
zfs=$(zram_setup 64M lzo)
mkdir -p /mnt/dio
if mkfs.ext4 -q -b 4096 "$zfs" && mount -t ext4 "$zfs" /mnt/dio &&
   dd if=/dev/zero of=/mnt/dio/f bs=64k count=1 2>/dev/null; then
	zfile=/mnt/dio/f
else
	zfile=none
fi
loop=$(loop_setup 16)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
devs=("zram:$zram" "brd:$(brd_dev 0)" "pmem:$pmem" "btt:$btt"
      "null_blk:$(nullb_dev)" "loop:$loop" "ext4-on-zram:$zfile")

# pmem's blk-mq mode with every request of 4 KiB or more offloaded to
# the test's software dmaengine provider (tests/modules/swdma.c), where
# the kernel has that mode: after the bio-mode cases, the namespace is
# rebound in mq mode and its DMA turned on.
MODE=/sys/module/nd_pmem/parameters/mode
mq=no
[ -e $MODE ] && [ -e /tests/modules/swdma.ko ] && mq=yes
# pmem_mq: set mqdev to the rebound disk, "none" if that fails.
pmem_mq() {
	local ns disk
	mqdev=none
	ns=$(basename "$(dirname "$(dirname "$(readlink -f "/sys/block/${pmem#/dev/}")")")")
	pmem_rebind "$ns" mq || return 1
	disk=$PMEM_DISK
	[ -d "/sys/block/$disk/mq" ] || { diag "$disk is not blk-mq after a rebind with mode=mq"; return 1; }
	insmod /tests/modules/swdma.ko channels=1 &&
		echo 1 > "/sys/block/$disk/pmem/dma" &&
		echo 4 > "/sys/block/$disk/pmem/dma_threshold_kb" ||
		{ diag "cannot load swdma or turn on $disk's DMA"; return 1; }
	mqdev=/dev/$disk
}

cases=()
[ $mq = yes ] && devs+=("pmem-mq-dma:mq")
for d in "${devs[@]}"; do
	for off in 512 3584; do
		for len in 4096 12288; do
			cases+=("$d $off $len")
		done
	done
done
[ $mq = yes ] || diag "no pmem blk-mq mode or no swdma module: its cases are not run"
ktap_plan ${#cases[@]}

reports0=$(kernel_reports)
for c in "${cases[@]}"; do
	read -r d off len <<< "$c"
	name=${d%%:*} dev=${d#*:}
	label="$name offset=$off length=$len"
	if [ "$dev" = mq ]; then
		[ -n "${mqdev:-}" ] || pmem_mq
		dev=$mqdev
	fi
	if [ ! -b "$dev" ] && [ ! -f "$dev" ]; then
		ktap_fail "$label: no device ($dev)"
		continue
	fi
	# the DMA alignment of the device (of the file system's device)
	bdev=$dev
	[ -f "$dev" ] && bdev=$zfs
	mask=$(cat "/sys/block/${bdev#/dev/}/queue/dma_alignment")
	if [ $((off & mask)) -ne 0 ]; then
		want="read=refused write=refused"
	else
		want="read=ok write=ok"
	fi
	out=$(diooffset "$dev" "$off" "$len" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	got=$(tail -1 <<< "$out")
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		ktap_ok "$label: $got (dma_alignment $mask)"
	else
		ktap_fail "$label: $got, want $want (dma_alignment $mask)"
	fi
done
if [ $mq = yes ]; then
	diag "pmem-mq-dma: $(cat /sys/block/"${mqdev#/dev/}"/pmem/dma_requests 2>/dev/null) requests offloaded, $(cat /sys/block/"${mqdev#/dev/}"/pmem/dma_fallbacks 2>/dev/null) fallbacks"
fi
reports=$(( $(kernel_reports) - reports0 ))
[ "$reports" -eq 0 ] || { diag "kernel reports: $reports"; dmesg | tail -40 | sed 's/^/# /'; }
ktap_done
