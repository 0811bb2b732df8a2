#!/bin/bash
# vm: mem=2048 timeout=300
# O_DIRECT from a buffer that starts inside a page: for every test device
# (zram lzo, brd, pmem, btt with 4096 B sectors, null_blk, loop, and pmem
# in blk-mq mode with DMA offload where the kernel has it),
# diooffset reads 4 KiB and 12 KiB into a buffer 512 and 3584 bytes into a
# page, and writes from it, with guard bytes around the buffer.  The
# kernel may refuse such a transfer (EINVAL from the device's DMA
# alignment) or do it; the data must be right, the guard bytes intact,
# and a refused write must leave the device's data alone.
#
# v6.1.4 fails this on zram (the buffer's neighbours overwritten, the data
# wrong) and on btt with 4096 B sectors (EIO); the fixes are at the end of
# the series and apply to v6.1.4 alone (make stable-kernel builds them).
. /tests/lib/common.sh

zram=$(zram_setup 64M lzo)
loop=$(loop_setup 16)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
devs=("zram:$zram" "brd:$(brd_dev 0)" "pmem:$pmem" "btt:$btt"
      "null_blk:$(nullb_dev)" "loop:$loop")

# pmem's blk-mq mode with every request of 4 KiB or more offloaded to
# the test's software dmaengine provider (tests/modules/swdma.c), where
# the kernel has that mode: after the bio-mode cases, the namespace is
# rebound in mq mode and its DMA turned on.
MODE=/sys/module/nd_pmem/parameters/mode
mq=no
[ -e $MODE ] && [ -e /tests/modules/swdma.ko ] && mq=yes
pmem_mq() {
	local ns disk
	ns=$(basename "$(dirname "$(dirname "$(readlink -f "/sys/block/${pmem#/dev/}")")")")
	echo "$ns" > /sys/bus/nd/drivers/nd_pmem/unbind &&
		echo mq > $MODE &&
		echo "$ns" > /sys/bus/nd/drivers/nd_pmem/bind || return 1
	disk=$(ls "/sys/bus/nd/devices/$ns/block" 2>/dev/null | head -1)
	[ -n "$disk" ] && [ -d "/sys/block/$disk/mq" ] || return 1
	insmod /tests/modules/swdma.ko channels=1 &&
		echo 1 > "/sys/block/$disk/pmem/dma" &&
		echo 4 > "/sys/block/$disk/pmem/dma_threshold_kb" || return 1
	echo "/dev/$disk"
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
		mqdev=${mqdev:-$(pmem_mq || echo none)}
		dev=$mqdev
	fi
	if [ ! -b "$dev" ]; then
		ktap_fail "$label: no device ($dev)"
		continue
	fi
	out=$(diooffset "$dev" "$off" "$len" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	ktap_result $rc "$label: $(tail -1 <<< "$out")"
done
if [ $mq = yes ]; then
	diag "pmem-mq-dma: $(cat /sys/block/"${mqdev#/dev/}"/pmem/dma_requests 2>/dev/null) requests offloaded, $(cat /sys/block/"${mqdev#/dev/}"/pmem/dma_fallbacks 2>/dev/null) fallbacks"
fi
reports=$(( $(kernel_reports) - reports0 ))
[ "$reports" -eq 0 ] || { diag "kernel reports: $reports"; dmesg | tail -40 | sed 's/^/# /'; }
ktap_done
