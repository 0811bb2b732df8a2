#!/bin/bash
# bench-timeout: 900
# Guest side of the pmem DMA-offload benchmark: pmemcopy's matrix (seed
# 002) in the three ways part 3 (patches 26-29, nd_pmem.mode=) can copy.  fio
# on the first legacy pmem region, O_DIRECT libaio, sequential read and
# write, 4 KiB, 64 KiB and 2 MiB blocks, 1 job at queue depth 1 and one
# job per vCPU at queue depth 16, in each mode:
#   bio    nd_pmem.mode=bio (the default): pmem_submit_bio(), the CPU copies
#   mqcpu  nd_pmem.mode=mq with pmem/dma 0: blk-mq, the CPU copies
#   mqdma  nd_pmem.mode=mq with pmem/dma 1 and pmem/dma_threshold_kb at
#          bench.pmemdma_threshold_kb (default 4, the minimum: every
#          request the gate allows goes to the engine; 512 is the driver's
#          default)
# The namespace is switched with /sys/module/nd_pmem/parameters/mode and
# an unbind + bind from nd_pmem.  Metrics (higher MiB/s is better):
#   pmem.<mode>.<bs>.q<depth>j<jobs>.<read|write>_mibs    throughput
#   pmem.<mode>.<bs>.q<depth>j<jobs>.<read|write>_cpu     CPU busy during
#        the run, percent of one CPU from /proc/stat (200: two vCPUs busy)
#   pmem.mqdma.<bs>.q<depth>j<jobs>.<read|write>_dmapct   percent of the
#        disk's requests that dma_requests counted: the rest went to the
#        CPU (below the threshold, or the channel busy: 8 requests on it).
#        Counted with the disk's stat, so mqdma runs with queue/iostats
#        1; bio and mqcpu keep the default, 0.
# Knobs, on the kernel command line (make bench BENCH_CMDLINE='...') or,
# run by hand in a guest, in the environment:
#   bench.pmemdma_chan=SPEC     PMEMDMA_CHAN     the DMA channel: a channel
#        name as in /sys/class/dma (dma0chan1), the name of its device's
#        driver (ioatdma, idxd, swdma) or device, or "any" (the default).
#        SPEC other than "any" goes to nd_pmem.dma_engine, which takes a
#        driver name or a channel name prefix, before the disk takes its
#        channel; the benchmark still checks the channel the disk took
#        against SPEC and does not measure mqdma on another engine
#        (BENCH-WARN).  With swdma
#        (or "any" and no other channel) /tests/modules/swdma.ko is loaded
#        when it is in the initramfs: make bench boots the plain initramfs,
#        so under QEMU run it as
#          INITRD=$(TOP=$PWD BUILD=$PWD/build scripts/test-modules.sh KERNEL) make bench ...
#        (the modules must match the kernel: one kernel, A=B, or a
#        DMA-less B).  swdma copies with a kworker, so its CPU busy is the
#        CPU's, not an engine's: under QEMU mqdma measures the path's cost.
#   bench.pmemdma_modes=LIST    PMEMDMA_MODES    default bio,mqcpu,mqdma
#   bench.pmemdma_bs=LIST       PMEMDMA_BS       default 4k,64k,2M
#   bench.pmemdma_runtime=S     PMEMDMA_RUNTIME  seconds per run, default 2
#        (36 runs of 2 s plus fio's start-up: about 3 minutes under TCG)
#   bench.pmemdma_threshold_kb=N  PMEMDMA_THRESHOLD_KB  default 4
# On a kernel without part 3 (no nd_pmem mode parameter) only bio runs.
# Under QEMU TCG these are path costs, not pmem bandwidth (see pmemcopy).
. /tests/lib/common.sh
knob() { sed -n "s/.*bench\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
CHAN=${PMEMDMA_CHAN:-$(knob pmemdma_chan)}
MODES=${PMEMDMA_MODES:-$(knob pmemdma_modes)}
BSS=${PMEMDMA_BS:-$(knob pmemdma_bs)}
RUNTIME=${PMEMDMA_RUNTIME:-$(knob pmemdma_runtime)}
THRESH=${PMEMDMA_THRESHOLD_KB:-$(knob pmemdma_threshold_kb)}
CHAN=${CHAN:-any} MODES=${MODES:-bio,mqcpu,mqdma} BSS=${BSS:-4k,64k,2M}
RUNTIME=${RUNTIME:-2} THRESH=${THRESH:-4}
MODE=/sys/module/nd_pmem/parameters/mode
NDDRV=/sys/bus/nd/drivers/nd_pmem
KO=/tests/modules/swdma.ko

REGION=$(pmem_regions | head -1)
NS='' DISK=''
for n in /sys/bus/nd/devices/"$REGION"/namespace*; do
	[ -d "$n/block" ] || continue
	NS=$(basename "$n") DISK=$(ls "$n/block" | head -1)
	break
done
[ -n "$DISK" ] && [ -b "/dev/$DISK" ] || { echo "BENCH-ERROR no pmem device"; exit 1; }
PM=/sys/block/$DISK/pmem

# setmode bio|mq: rebind the namespace in that mode (if it is not in it).
setmode() {
	local want=$1 is=bio
	[ -d "/sys/block/$DISK/mq" ] && is=mq
	[ "$is" = "$want" ] && return 0
	echo "$NS" > $NDDRV/unbind || return 1
	echo "$want" > $MODE || return 1
	echo "$NS" > $NDDRV/bind || return 1
	for _ in $(seq 100); do
		DISK=$(ls "/sys/bus/nd/devices/$NS/block" 2>/dev/null | head -1)
		[ -n "$DISK" ] && [ -b "/dev/$DISK" ] && break
		sleep 0.1
	done
	PM=/sys/block/$DISK/pmem
	[ -n "$DISK" ] && [ -b "/dev/$DISK" ]
}

busy() {	# busy: "busy total" jiffies summed over CPUs, from /proc/stat
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}
ios() { awk '{ print $1 + $5 }' "/sys/block/$DISK/stat"; }
pmattr() { cat "$PM/$1" 2>/dev/null || echo 0; }

# chan_matches CHANNEL: whether CHANNEL is what bench.pmemdma_chan names.
chan_desc() {	# chan_desc CHANNEL: "channel device driver"
	local d=/sys/class/dma/$1/device
	echo "$1 $(basename "$(readlink -f "$d")") $(basename "$(readlink -f "$d/driver" 2>/dev/null)")"
}
chan_matches() {
	[ "$CHAN" = any ] && return 0
	[[ " $(chan_desc "$1") " == *" $CHAN "* ]]
}
# dma_setup: a DMA channel as bench.pmemdma_chan says, threshold set.
dma_setup() {
	local c want have=0
	[ -d "$PM" ] || { echo "BENCH-WARN no $PM (no CONFIG_BLK_DEV_PMEM_DMA): mqdma not measured"; return 1; }
	for c in /sys/class/dma/dma*chan*; do [ -e "$c" ] && have=1; done
	if [ ! -d /sys/module/swdma ] && [ -f $KO ] &&
		{ [ "$CHAN" = swdma ] || { [ "$CHAN" = any ] && [ $have = 0 ]; }; }; then
		insmod $KO channels=2 || echo "BENCH-WARN insmod swdma failed"
	fi
	# nd_pmem.dma_engine (0028) restricts the channels a disk may take:
	# a driver name or a channel name prefix, read when it takes one.
	if [ -w /sys/module/nd_pmem/parameters/dma_engine ]; then
		want=$CHAN
		[ "$want" = any ] && want=
		if [ "$(cat /sys/module/nd_pmem/parameters/dma_engine)" != "$want" ]; then
			echo 0 > "$PM/dma"
			echo "$want" > /sys/module/nd_pmem/parameters/dma_engine
		fi
	fi
	[ "$(pmattr dma)" = 1 ] || echo 1 > "$PM/dma" ||
		{ echo "BENCH-WARN no DMA_MEMCPY channel (echo 1 > pmem/dma failed): mqdma not measured"; return 1; }
	c=$(pmattr dma_channel)
	if ! chan_matches "$c"; then
		echo "BENCH-WARN the disk took $(chan_desc "$c"), not '$CHAN' (nd_pmem.dma_engine did not select it): mqdma not measured"
		echo 0 > "$PM/dma"
		return 1
	fi
	# dmapct counts requests with the disk's stat: accounting on (off by
	# default, in bio mode as in mq mode)
	echo 1 > "/sys/block/$DISK/queue/iostats"
	echo "$THRESH" > "$PM/dma_threshold_kb" ||
		{ echo "BENCH-WARN dma_threshold_kb=$THRESH refused"; return 1; }
	echo "BENCH-INFO mqdma on $(chan_desc "$c"), threshold $(pmattr dma_threshold_kb) KiB"
}

# matrix MODE: the runs of one mode.
matrix() {
	local mode=$1 bs qj qd jobs rw b0 t0 b1 t1 i0 r0 f0 out f kib key
	for bs in ${BSS//,/ }; do
		for qj in "1 1" "16 $cpus"; do
			read -r qd jobs <<< "$qj"
			for rw in read write; do
				read -r b0 t0 <<< "$(busy)"
				i0=$(ios) r0=$(pmattr dma_requests) f0=$(pmattr dma_fallbacks)
				out=$(fio --thread --name=p --filename="/dev/$DISK" --rw=$rw --bs="$bs" --direct=1 \
					--ioengine=libaio --iodepth="$qd" --numjobs="$jobs" --size=96M \
					--time_based --runtime="$RUNTIME" --group_reporting \
					--minimal 2>&1)
				read -r b1 t1 <<< "$(busy)"
				# terse v3: field 7 read bw KiB/s, field 48 write bw KiB/s
				f=7
				[ $rw = write ] && f=48
				kib=$(awk -F';' -v f=$f 'NF > 48 { v = $f } END { print v + 0 }' <<< "$out")
				key=pmem.$mode.$bs.q${qd}j$jobs.$rw
				[ "$kib" -gt 0 ] || echo "BENCH-WARN $key: fio: $(head -3 <<< "$out")"
				awk -v k="$key" -v v="$kib" 'BEGIN { if (v > 0) printf "BENCH %s_mibs %.1f\n", k, v / 1024 }'
				awk -v k="$key" -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v n="$cpus" \
					'BEGIN { if (t > 0) printf "BENCH %s_cpu %.1f\n", k, 100 * n * b / t }'
				if [ "$mode" = mqdma ]; then
					awk -v k="$key" -v r=$(( $(pmattr dma_requests) - r0 )) -v n=$(( $(ios) - i0 )) \
						'BEGIN { if (n > 0) printf "BENCH %s_dmapct %.1f\n", k, 100 * r / n }'
					[ "$(pmattr dma_fallbacks)" = "$f0" ] ||
						echo "BENCH-WARN $key: $(( $(pmattr dma_fallbacks) - f0 )) requests redone by the CPU after an engine failure"
					[ "$(pmattr dma)" = 1 ] || { echo "BENCH-WARN $key: the disk gave its channel up"; return 1; }
				fi
			done
		done
	done
}

# bench.insnprof=1 (make insn-profile INSN_BENCH=pmemdma): the first mode
# of bench.pmemdma_modes (bio or mqcpu) only, 4 KiB O_DIRECT psync reads
# and then writes of 16 MiB (bench.pmemdma_rw=read or =write: only
# those), one job, between insnprof-open and
# insnprof-close: the plugin counts each pread() and pwrite() system call
# (ksys_pread64(), ksys_pwrite64()) from entry to return, and the disk's
# requests complete inside them in both modes.
if [ -n "$(knob insnprof)" ]; then
	mode=${MODES%%,*}
	case $mode in
	bio) [ ! -w $MODE ] || setmode bio ;;
	mqcpu) setmode mq && { [ ! -d "$PM" ] || echo 0 > "$PM/dma"; } ;;
	*) false ;;
	esac || { echo "BENCH-ERROR insnprof: cannot set up mode '$mode' (bio or mqcpu)"; exit 1; }
	# bench.pmemdma_rw=read or write: only that one in the window
	rws=$(knob pmemdma_rw)
	rws=${rws:-read,write}
	for rw in fill ${rws//,/ }; do
		# the fill writes the range the measured reads read
		[ $rw = fill ] || [ -n "${opened:-}" ] || { insnprof_open; opened=1; }
		fio --thread --name=p --filename="/dev/$DISK" --rw=${rw/fill/write} --bs=4k \
			--direct=1 --ioengine=psync --size=16M --output=/dev/null ||
			{ echo "BENCH-ERROR insnprof: fio $rw"; exit 1; }
	done
	insnprof_close
	echo "BENCH-INFO insnprof: mode $mode on $DISK ($( [ -d "/sys/block/$DISK/mq" ] && echo blk-mq || echo bio-based))"
	echo "BENCH-DONE"
	exit 0
fi

cpus=$(nproc)
for mode in ${MODES//,/ }; do
	case $mode in
	bio)
		if [ -w $MODE ]; then setmode bio || { echo "BENCH-WARN cannot rebind in bio mode"; continue; }; fi
		matrix bio ;;
	mqcpu|mqdma)
		[ -w $MODE ] || { echo "BENCH-WARN no nd_pmem mode parameter (part 3): $mode not measured"; continue; }
		setmode mq || { echo "BENCH-WARN cannot rebind in mq mode"; continue; }
		if [ $mode = mqcpu ]; then
			[ ! -d "$PM" ] || [ "$(pmattr dma)" = 0 ] || echo 0 > "$PM/dma"
			matrix mqcpu
		elif dma_setup; then
			matrix mqdma
			echo 0 > "$PM/dma"
			echo 0 > "/sys/block/$DISK/queue/iostats"
		fi ;;
	*) echo "BENCH-WARN unknown mode '$mode' (bio, mqcpu, mqdma)" ;;
	esac
done
echo "BENCH-DONE"
