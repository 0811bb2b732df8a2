#!/bin/bash
# bench-timeout: 1500
# Guest side of the zram fio benchmark (seed 001, Sergey's zram-fio-test
# methodology): seq-read, rand-read, seq-write, rand-write, mixed-seq,
# mixed-rand; 1 job and one job per vCPU; lzo and zstd as the slow one (the
# seed used deflate: bench.zram_algs=lzo,deflate; a deflate boot took over
# 5 minutes under TCG, a zstd one about 1.5); direct=1 and
# buffered with fsync_on_close=1.  One line per result:
#     BENCH zram.<alg>.<mode>.<pattern>.j<jobs>.<read|write>_mibs <MiB/s>
# bench.insnprof=1 (make insn-profile INSN_BENCH=zramfio) runs only the
# first algorithm's buffered random reads with one job, between
# insnprof-open and insnprof-close written to trace_marker: the window of
# the QEMU plugin scripts/insnprof.c, which counts each pread() system
# call (ksys_pread64()) from entry to return.
# bench.zram_pin=CPU runs the one-job fio runs on that CPU only (fio
# --cpus_allowed), to tell whether their speed depends on the vCPU.
. /tests/lib/common.sh
SIZE=${BENCH_SIZE:-64M}
ALGS="lzo zstd" MODES="direct fsync"
for a in $(cat /proc/cmdline); do
	case "$a" in
	bench.zram_algs=*) ALGS=${a#*=}; ALGS=${ALGS//,/ } ;;
	bench.zram_modes=*) MODES=${a#*=}; MODES=${MODES//,/ } ;;
	bench.insnprof=*) IPROF=${a#*=} ;;
	bench.zram_pin=*) PIN=${a#*=} ;;
	esac
done
if [ -n "${IPROF:-}" ]; then
	alg=${ALGS%% *}
	dev=$(zram_setup 512M "$alg") || { echo "BENCH-ERROR zram $alg"; exit 1; }
	fio --thread --name=fill --filename="$dev" --rw=write --bs=1M --size="$SIZE" \
		--direct=1 --ioengine=psync --buffer_compress_percentage=50 --eta=never \
		--refill_buffers --output=/dev/null
	insnprof_open
	fio --thread --name=z --filename="$dev" --rw=randread --bs=4k --size="$SIZE" \
		--ioengine=psync --direct=0 --output=/dev/null
	insnprof_close
	echo "BENCH-DONE"
	exit 0
fi
cpus=$(nproc)
for alg in $ALGS; do
	for mode in $MODES; do
		# 1 and one job per vCPU; once with one vCPU (ICOUNT=1 boots).
		for jobs in $(echo 1 "$cpus" | tr " " "\n" | sort -un); do
			dev=$(zram_setup 512M "$alg") || { echo "BENCH-ERROR zram $alg"; continue; }
			# Fill first so that reads find compressed data, as the
			# seed's methodology does.
			fio --thread --name=fill --filename="$dev" --rw=write --bs=1M --size="$SIZE" \
				--direct=1 --ioengine=psync --buffer_compress_percentage=50 --eta=never \
				--refill_buffers --output=/dev/null
			for pat in read randread write randwrite rw randrw; do
				case $pat in
				read) name=seq-read ;; randread) name=rand-read ;;
				write) name=seq-write ;; randwrite) name=rand-write ;;
				rw) name=mixed-seq ;; randrw) name=mixed-rand ;;
				esac
				opts=(--direct=1)
				[ "$mode" = fsync ] && opts=(--direct=0 --fsync_on_close=1)
				[ "$jobs" = 1 ] && [ -n "${PIN:-}" ] && opts+=(--cpus_allowed="$PIN")
				out=$(fio --thread --name=z --filename="$dev" --rw=$pat --bs=4k \
					--size="$SIZE" --numjobs="$jobs" --offset_increment="$SIZE" \
					--ioengine=psync --group_reporting --minimal \
					--buffer_compress_percentage=50 --refill_buffers "${opts[@]}" 2>&1)
				# terse v3: field 7 read bw KiB/s, field 48 write bw KiB/s
				r=$(awk -F';' 'NF > 48 { print $7 }' <<< "$out" | tail -1)
				w=$(awk -F';' 'NF > 48 { print $48 }' <<< "$out" | tail -1)
				key=zram.$alg.$mode.$name.j$jobs
				[ "${r:-0}" -gt 0 ] && awk -v k="$key" -v v="$r" 'BEGIN { printf "BENCH %s.read_mibs %.1f\n", k, v / 1024 }'
				[ "${w:-0}" -gt 0 ] && awk -v k="$key" -v v="$w" 'BEGIN { printf "BENCH %s.write_mibs %.1f\n", k, v / 1024 }'
			done
			zram_reset "$dev"
		done
	done
done
echo "BENCH-DONE"
