#!/bin/bash
# bench-timeout: 600
# bench-cmdline: null_blk.memory_backed=0
# Guest side of the bio allocation benchmark (seed 004): small O_DIRECT
# random reads from null_blk (not memory backed, so the device costs next
# to nothing and bio allocation shows), submitted with libaio at queue
# depth 1.  libaio, not psync: a synchronous 4 KiB read takes
# __blkdev_direct_IO_simple()'s on-stack bio and allocates nothing, the
# path seed 004 had to disable; an asynchronous one allocates every bio
# from a bio_set and frees it on completion, which is the work a per-CPU
# bio cache saves.  Metrics:
#   biocache.j<N>.read_iops     4 KiB random-read IOPS, N jobs (1 and one
#                               per vCPU), 4 s each, no tracing
#   biocache.fn.<f>_us, _calls  bio_alloc_bioset() and bio_put() per call
#                               (ftrace function profiler, separate run;
#                               instructions with ICOUNT=1)
# bench.insnprof=1 (make insn-profile INSN_BENCH=biocache) skips the IOPS
# runs, leaves the profiler off and writes insnprof-open and insnprof-close
# to trace_marker around the fixed number of reads: the window in which
# the QEMU plugin scripts/insnprof.c counts the instructions of each call
# of bio_alloc_bioset() and bio_put(), callees included, exactly.
. /tests/lib/common.sh
for a in $(cat /proc/cmdline); do
	case "$a" in
	bench.insnprof=*) IPROF=${a#bench.insnprof=} ;;
	esac
done
T=/sys/kernel/tracing
dev=$(nullb_dev)
[ -b "$dev" ] || { echo "BENCH-ERROR no $dev"; exit 1; }
case $(cat /sys/module/null_blk/parameters/memory_backed 2>/dev/null) in
0|N) ;;
*) echo "BENCH-WARN null_blk is memory backed: the copy dominates" ;;
esac
FUNCS="bio_alloc_bioset bio_put"

nullfio() {	# nullfio JOBS EXTRA...: print read IOPS
	local jobs=$1 out
	shift
	out=$(fio --thread --name=r --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=1 --numjobs="$jobs" --group_reporting \
		--minimal "$@" 2>&1)
	awk -F';' 'NF > 48 { v = $8 } END { print v + 0 }' <<< "$out"
	grep -q ';' <<< "$out" || echo "BENCH-WARN fio: $(head -3 <<< "$out")" >&2
}

if [ -n "${IPROF:-}" ]; then
	nullfio 1 --size=1G --number_ios=2000 > /dev/null	# warm up
	insnprof_open
	nullfio 1 --size=1G --number_ios=20000 > /dev/null
	insnprof_close
	echo "BENCH-DONE"
	exit 0
fi

cpus=$(nproc)
for jobs in $(echo 1 "$cpus" | tr ' ' '\n' | sort -un); do
	nullfio "$jobs" --size=1G --time_based --runtime=4 --ramp_time=1 > /dev/null
	echo "BENCH biocache.j$jobs.read_iops $(nullfio "$jobs" --size=1G --time_based --runtime=4)"
done

# Per-call cost: a fixed number of reads with the function profiler on.
echo 0 > $T/function_profile_enabled
echo "$FUNCS" > $T/set_ftrace_filter || { echo "BENCH-ERROR no ftrace filter"; exit 1; }
echo 1 > $T/function_profile_enabled
nullfio 1 --size=1G --number_ios=20000 > /dev/null
echo 0 > $T/function_profile_enabled
for f in $FUNCS; do
	read -r h t <<< "$(profile "$f")"
	awk -v f="$f" -v h="$h" -v t="$t" \
		'BEGIN { if (h > 0) printf "BENCH biocache.fn.%s_us %.3f\nBENCH biocache.fn.%s_calls %d\n", f, t / h, f, h }'
done
echo "BENCH-DONE"
