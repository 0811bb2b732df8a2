#!/bin/bash
# bench-timeout: 600
# Guest side of scripts/tcg-hostprof.sh: buffered 4 KiB random reads of a
# 64 MiB lzo zram disk, one job, in one fio process that runs for
# bench.zramsteady_delay + bench.zramsteady_runtime + 2 seconds (defaults
# 6 and 16) after a first pass of 64 MiB.  The delay covers fio's start,
# whose code QEMU translates anew in every process (address space layout
# randomisation gives it new addresses); then the script prints
#     HOSTPROF-WINDOW <runtime>
# for the host to sample the QEMU process for that long, and after it the
# reads the disk completed in that time (from its stat file) and the run's
# read IOPS:
#     HOSTPROF-READS <reads>
#     BENCH zramsteady.read_iops <IOPS>
. /tests/lib/common.sh
RUNTIME=16 DELAY=6
for a in $(cat /proc/cmdline); do
	case "$a" in
	bench.zramsteady_runtime=*) RUNTIME=${a#*=} ;;
	bench.zramsteady_delay=*) DELAY=${a#*=} ;;
	esac
done
dev=$(zram_setup 512M lzo) || { echo "BENCH-ERROR zram lzo"; exit 1; }
fio --thread --name=fill --filename="$dev" --rw=write --bs=1M --size=64M \
	--direct=1 --ioengine=psync --buffer_compress_percentage=50 --eta=never \
	--refill_buffers --output=/dev/null
fio --thread --name=warm --filename="$dev" --rw=randread --bs=4k --size=64M \
	--ioengine=psync --direct=0 --eta=never --output=/dev/null
fio --thread --name=z --filename="$dev" --rw=randread --bs=4k --size=64M \
	--ioengine=psync --direct=0 --time_based --runtime=$((DELAY + RUNTIME + 2)) \
	--eta=never --minimal > /tmp/zramsteady.out 2>&1 &
fio=$!
stat=/sys/block/${dev#/dev/}/stat
sleep "$DELAY"
r0=$(awk '{ print $1 }' "$stat")
echo "HOSTPROF-WINDOW $RUNTIME"
sleep "$RUNTIME"
r1=$(awk '{ print $1 }' "$stat")
echo "HOSTPROF-READS $((r1 - r0))"
wait $fio
# terse v3: field 8 is the read IOPS
iops=$(awk -F';' 'NF > 48 { print $8 }' /tmp/zramsteady.out | tail -1)
[ "${iops:-0}" -gt 0 ] && echo "BENCH zramsteady.read_iops $iops"
zram_reset "$dev"
echo "BENCH-DONE"
