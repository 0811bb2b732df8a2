#!/bin/bash
# bench-timeout: 600
# Guest side of scripts/tcg-hostprof.sh: buffered 4 KiB random reads of a
# 64 MiB lzo zram disk, one job, in one fio process that runs for
# bench.zramsteady_runtime seconds (default 22) after a first pass of
# 64 MiB that leaves the code translated.  It prints HOSTPROF-WINDOW just
# before that run, so that the host can sample the QEMU process while
# only these reads run, and the run's read IOPS as
#     BENCH zramsteady.read_iops <IOPS>
. /tests/lib/common.sh
RUNTIME=22
for a in $(cat /proc/cmdline); do
	case "$a" in
	bench.zramsteady_runtime=*) RUNTIME=${a#*=} ;;
	esac
done
dev=$(zram_setup 512M lzo) || { echo "BENCH-ERROR zram lzo"; exit 1; }
fio --thread --name=fill --filename="$dev" --rw=write --bs=1M --size=64M \
	--direct=1 --ioengine=psync --buffer_compress_percentage=50 --eta=never \
	--refill_buffers --output=/dev/null
fio --thread --name=warm --filename="$dev" --rw=randread --bs=4k --size=64M \
	--ioengine=psync --direct=0 --eta=never --output=/dev/null
echo "HOSTPROF-WINDOW $RUNTIME"
# terse v3: field 8 is the read IOPS
out=$(fio --thread --name=z --filename="$dev" --rw=randread --bs=4k --size=64M \
	--ioengine=psync --direct=0 --time_based --runtime="$RUNTIME" --eta=never \
	--minimal 2>&1)
iops=$(awk -F';' 'NF > 48 { print $8 }' <<< "$out" | tail -1)
[ "${iops:-0}" -gt 0 ] && echo "BENCH zramsteady.read_iops $iops"
zram_reset "$dev"
echo "BENCH-DONE"
