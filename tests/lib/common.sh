# Guest-side helpers shared by the tests: KTAP output and device setup.
# shellcheck shell=bash

# syncio.inject=NAME on the kernel command line breaks one thing on purpose
# so that "make test-inject" can show that each test family catches it.
INJECT=$(sed -n 's/.*syncio\.inject=\([^ ]*\).*/\1/p' /proc/cmdline)
injecting() { [ "$INJECT" = "$1" ]; }

KTAP_N=0
KTAP_FAILED=0
# Injections aimed at the runner itself (tests/judge.py), usable in any test:
#   runner-noplan  the test dies before its plan
#   runner-plan    the plan announces one result more than the test prints
#   runner-report  a real kernel backtrace on the console (SysRq l)
#   runner-hang    the test hangs after its plan (make test-inject runs it
#                  with a short TEST_TIMEOUT)
#   runner-exit    the test exits non-zero with every result ok
ktap_plan() {
	injecting runner-noplan && exit 1
	echo "KTAP version 1"
	echo "1..$(($1 + $(injecting runner-plan && echo 1 || echo 0)))"
	injecting runner-report && echo l > /proc/sysrq-trigger
	injecting runner-hang && sleep 100000
}
ktap_ok() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $*"; }
ktap_fail() { KTAP_N=$((KTAP_N + 1)); KTAP_FAILED=$((KTAP_FAILED + 1)); echo "not ok $KTAP_N $*"; }
ktap_skip() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $* # SKIP"; }
ktap_result() {	# ktap_result RC DESCRIPTION
	if [ "$1" -eq 0 ]; then ktap_ok "$2"; else ktap_fail "$2"; fi
}
diag() { echo "# $*"; }
ktap_done() {
	injecting runner-exit && exit 3
	exit $((KTAP_FAILED > 0))
}

vmstat() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }
# kv KEY: the value of a KEY=value line of a tool's output in $out
# (swapverify, swapthreads).
# shellcheck disable=SC2154 # out: set by the caller
kv() { sed -n "s/^$1=//p" <<< "$out"; }
# kernel_reports: report lines in the kernel log so far; the difference
# across a subtest pins a report to it (the runner judges the console).
kernel_reports() { dmesg | grep -cE 'BUG:|WARNING:|Oops|KASAN:|general protection|Call Trace:'; }
# swap_used_kb DEV: KiB of swap in use on DEV, from /proc/swaps.
swap_used_kb() { awk -v d="$1" '$1 == d { print $4 }' /proc/swaps; }

# retprobe_on EVENT FUNC: a kretprobe event syncio/EVENT on FUNC that
# records only the calls returning non-zero; status 0 when it is on.
# retprobe_count EVENT: those calls since the trace was last cleared
# (retprobe_reset); retprobe_off EVENT removes it.
TRACING=/sys/kernel/tracing
retprobe_on() {
	local e=$TRACING/events/syncio/$1
	[ -w $TRACING/kprobe_events ] || return 1
	echo "r:syncio/$1 $2 ret=\$retval:s32" >> $TRACING/kprobe_events 2>/dev/null || return 1
	echo 'ret != 0' > "$e/filter" && echo 8192 > $TRACING/buffer_size_kb &&
		echo 1 > "$e/enable"
}
retprobe_count() { grep -c " $1:" $TRACING/trace; }
retprobe_reset() { echo > $TRACING/trace; }
retprobe_off() {
	echo 0 > "$TRACING/events/syncio/$1/enable"
	echo "-:syncio/$1" >> $TRACING/kprobe_events
}
# meminfo_mib FIELD: a /proc/meminfo field in MiB.
meminfo_mib() { awk -v k="$1:" '$1 == k { print int($2 / 1024) }' /proc/meminfo; }

# --- devices ----------------------------------------------------------

# zram_setup SIZE [ALG]: configure a fresh zram device, print its path.
zram_setup() {
	local size=$1 alg=${2:-lzo} id
	id=$(cat /sys/class/zram-control/hot_add) || return 1
	echo "$alg" > "/sys/block/zram$id/comp_algorithm" || return 1
	echo "$size" > "/sys/block/zram$id/disksize" || return 1
	echo "/dev/zram$id"
}

zram_reset() {
	local id=${1#/dev/zram}
	echo 1 > "/sys/block/zram$id/reset"
	echo "$id" > /sys/class/zram-control/hot_remove
}

# brd devices come from the kernel command line (brd.rd_nr, brd.rd_size).
brd_dev() { echo "/dev/ram${1:-0}"; }

# The legacy (memmap=) pmem regions, in address order: region index N.
pmem_regions() {
	local r
	for r in /sys/bus/nd/devices/region*; do
		[ -e "$r/resource" ] || continue
		echo "$(cat "$r/resource") $(basename "$r")"
	done | sort | awk '{print $2}'
}

# pmem_dev N: the block device of the Nth pmem region's namespace.
pmem_dev() {
	local region ns
	region=$(pmem_regions | sed -n "$((${1:-0} + 1))p")
	[ -n "$region" ] || return 1
	for ns in /sys/bus/nd/devices/"$region"/namespace*; do
		[ -d "$ns/block" ] || continue
		echo "/dev/$(ls "$ns/block")"
		return 0
	done
	return 1
}

# nd_disk_wait DEVICE TENTHS: wait up to TENTHS tenths of a second for the
# nd DEVICE (namespaceX.Y, bttX.Y) to have a block disk with its /dev node,
# and print the disk's name (pmemN, pmemNs).
nd_disk_wait() {
	local disk _
	for _ in $(seq "$2"); do
		disk=$(ls "/sys/bus/nd/devices/$1/block" 2>/dev/null | head -1)
		[ -n "$disk" ] && [ -b "/dev/$disk" ] && { echo "$disk"; return 0; }
		sleep 0.1
	done
	return 1
}

# pmem_rebind NAMESPACE [MODE]: unbind NAMESPACE (namespaceX.Y) from
# nd_pmem, set nd_pmem.mode to MODE if given, bind it again and wait for
# its new disk, whose name (pmemN) it leaves in PMEM_DISK.  Says what went
# wrong in a diag line and returns 124 if the unbind or the bind had not
# returned after 60 s (the task is left stuck in the kernel), 1 on any
# other failure.
sysfs_write() { echo "$1" > "$2"; }
pmem_rebind() {
	local ns=$1 mode=${2:-} drv=/sys/bus/nd/drivers/nd_pmem rc
	PMEM_DISK=
	within 60 sysfs_write "$ns" $drv/unbind
	rc=$?
	[ $rc -eq 124 ] && { diag "unbinding $ns from nd_pmem did not return in 60 s"; return 124; }
	[ $rc -eq 0 ] || { diag "unbinding $ns from nd_pmem failed ($rc)"; return 1; }
	if [ -n "$mode" ]; then
		sysfs_write "$mode" /sys/module/nd_pmem/parameters/mode ||
			{ diag "cannot set nd_pmem.mode=$mode"; return 1; }
	fi
	within 60 sysfs_write "$ns" $drv/bind
	rc=$?
	[ $rc -eq 124 ] && { diag "binding $ns to nd_pmem did not return in 60 s"; return 124; }
	[ $rc -eq 0 ] || { diag "binding $ns to nd_pmem failed ($rc): $(dmesg | grep -i pmem | tail -2)"; return 1; }
	PMEM_DISK=$(nd_disk_wait "$ns" 100) && return 0
	diag "no disk for $ns 10 s after binding it to nd_pmem"
	return 1
}

# btt_setup N [SECTOR]: turn the Nth pmem region into a BTT with sysfs only
# (no ndctl): unbind the namespace, configure the region's btt seed, bind.
btt_setup() {
	local region ns btt sector=${2:-4096} disk
	region=$(pmem_regions | sed -n "$((${1:-0} + 1))p")
	[ -n "$region" ] || return 1
	ns=$(basename "$(ls -d /sys/bus/nd/devices/"$region"/namespace* | head -1)")
	echo "$ns" > /sys/bus/nd/drivers/nd_pmem/unbind 2>/dev/null
	btt=$(cat "/sys/bus/nd/devices/$region/btt_seed")
	echo "$ns" > "/sys/bus/nd/devices/$btt/namespace" || return 1
	echo "$sector" > "/sys/bus/nd/devices/$btt/sector_size" || return 1
	cat /proc/sys/kernel/random/uuid > "/sys/bus/nd/devices/$btt/uuid" || return 1
	echo "$btt" > /sys/bus/nd/drivers/nd_pmem/bind || return 1
	disk=$(nd_disk_wait "$btt" 50) || return 1
	echo "/dev/$disk"
}

# null_blk comes from the command line: memory backed, 512 B blocks.
nullb_dev() { echo /dev/nullb0; }

# A loop device over a tmpfs file: a block device that is not synchronous.
loop_setup() {
	local size_mb=$1 f=/tmp/loop-backing.img
	mkdir -p /tmp
	dd if=/dev/zero of=$f bs=1M count=0 seek="$size_mb" 2>/dev/null
	losetup -f --show $f
}

# dev_setup NAME: set up the named test device (zram lzo 256 MiB, brd,
# pmem, btt 4096 B), print its path.
dev_setup() {
	case $1 in
	zram) zram_setup 256M lzo ;;
	brd) brd_dev 0 ;;
	pmem) pmem_dev 0 ;;
	btt) btt_setup 1 4096 ;;
	*) return 1 ;;
	esac
}

lbs() { cat "/sys/block/$(basename "$1")/queue/logical_block_size"; }

# Make the named cgroup v2 group with a memory.max, print its path.
memcg_setup() {
	local name=$1 max=$2 cg=/sys/fs/cgroup/$1
	echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir -p "$cg"
	echo "$max" > "$cg/memory.max"
	echo 0 > "$cg/memory.swap.max" 2>/dev/null && echo max > "$cg/memory.swap.max"
	echo "$cg"
}

# run_in_cg CG CMD...: run CMD inside cgroup CG.
run_in_cg() {
	local cg=$1
	shift
	bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# fail_requests DEV on [PCT] | DEV off: the kernel's fail_make_request
# fails PCT% (default 2) of DEV's bios, quietly and with no limit, or
# stops.
fail_requests() {
	local f=/sys/kernel/debug/fail_make_request
	if [ "$2" = on ]; then
		echo 0 > $f/verbose; echo "${3:-2}" > $f/probability
		echo 1 > $f/interval; echo -1 > $f/times
		echo 1 > "/sys/block/$(basename "$1")/make-it-fail"
	else
		echo 0 > "/sys/block/$(basename "$1")/make-it-fail"
		echo 0 > $f/probability
	fi
}

# swap_on DEV: mkswap and swapon DEV at high priority.
swap_on() { mkswap "$1" >/dev/null && swapon -p 10 "$1"; }

# profile FUNCTION: "hits total_us" of the ftrace function profiler,
# summed over all CPUs.
profile() {
	cat /sys/kernel/tracing/trace_stat/function* 2>/dev/null |
		awk -v f="$1" '$1 == f { h += $2; t += $3 } END { printf "%d %.3f\n", h, t }'
}

# insnprof_open / insnprof_close: the window in which the QEMU plugin
# scripts/insnprof.c (make insn-profile) counts instructions, opened and
# closed by markers written to trace_marker.  insnprof_close also prints
# the text symbols that the host's System.map lacks (modules, ftrace
# trampolines) as "KSYM address type name [module]".
insnprof_open() { echo insnprof-open > /sys/kernel/tracing/trace_marker; }
insnprof_close() {
	echo insnprof-close > /sys/kernel/tracing/trace_marker
	awk 'NF == 4 && $4 ~ /^\[/ { print "KSYM", $0 }' /proc/kallsyms
}

# within SECS CMD...: run CMD in the background for at most SECS seconds;
# its status, or 124 if it is still running then (it is left running: a
# task stuck in the kernel cannot be killed anyway).
within() {
	local secs=$1 pid _
	shift
	"$@" &
	pid=$!
	for _ in $(seq $((secs * 10))); do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			return
		fi
		sleep 0.1
	done
	return 124
}
