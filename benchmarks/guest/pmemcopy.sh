#!/bin/bash
# bench-timeout: 600
# Guest side of the pmem large-transfer benchmark (seed 002's matrix):
# fio on the first legacy pmem region, O_DIRECT libaio, 64 KiB and 2 MiB
# blocks, 1 job at queue depth 1 and one job per vCPU at queue depth 16,
# sequential read and write, 3 s each.  Metrics:
#   pmem.<bs>.q<depth>j<jobs>.<read|write>_mibs  throughput
#   pmem.<bs>.q<depth>j<jobs>.<read|write>_cpu   CPU busy during the run,
#                                                in percent of one CPU
#                                                (from /proc/stat; 200 is
#                                                two vCPUs fully busy)
# The seed compared the CPU copy with a DMA engine doing it, at the cost in
# CPU.  Only the CPU copy exists in the driver today: this measures it, on
# both kernels, so the DMA mode has a baseline when it is added.  Under QEMU
# there is no DMA engine, and TCG copies are not hardware copies: treat
# these numbers as path costs, not as pmem bandwidth.
. /tests/lib/common.sh
dev=$(pmem_dev 0) || { echo "BENCH-ERROR no pmem device"; exit 1; }

busy() {	# busy: "busy total" jiffies summed over CPUs, from /proc/stat
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}

cpus=$(nproc)
for bs in 64k 2M; do
	for qj in "1 1" "16 $cpus"; do
		read -r qd jobs <<< "$qj"
		for rw in read write; do
			read -r b0 t0 <<< "$(busy)"
			out=$(fio --thread --name=p --filename="$dev" --rw=$rw --bs=$bs --direct=1 \
				--ioengine=libaio --iodepth="$qd" --numjobs="$jobs" --size=96M \
				--time_based --runtime=3 --group_reporting \
				--minimal 2>&1)
			read -r b1 t1 <<< "$(busy)"
			# terse v3: field 7 read bw KiB/s, field 48 write bw KiB/s
			f=7
			[ $rw = write ] && f=48
			kib=$(awk -F';' -v f=$f 'NF > 48 { v = $f } END { print v + 0 }' <<< "$out")
			key=pmem.$bs.q${qd}j$jobs.$rw
			[ "$kib" -gt 0 ] || echo "BENCH-WARN $key: fio: $(head -3 <<< "$out")"
			awk -v k="$key" -v v="$kib" 'BEGIN { if (v > 0) printf "BENCH %s_mibs %.1f\n", k, v / 1024 }'
			awk -v k="$key" -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v n="$cpus" \
				'BEGIN { if (t > 0) printf "BENCH %s_cpu %.1f\n", k, 100 * n * b / t }'
		done
	done
done
echo "BENCH-DONE"
