#!/bin/bash
# Guest side of the swap latency benchmark (seed 000, pmbench-like).
# For each device: swapon, run swaplat in a cgroup v2 group whose
# memory.max is a third of the working set, with the ftrace function
# profiler on the swap entry points, and print one line per metric:
#     BENCH <device>.<metric> <value>
# Metrics:
#   swapin_us   average time in swap_readpage()  (ftrace function profiler)
#   swapout_us  average time in swap_writepage() (ftrace function profiler)
#   fault_median_us, fault_p99_us, fault_avg_us: user-space latency of
#   faulting accesses (includes memcg reclaim, so swap-out too).
# The entry points have the same names on the base kernel (rw_page) and on
# the series (on-stack bio): swap_readpage() and swap_writepage() in
# mm/page_io.c, both called out of line.
# bench.funcs=f1,f2,... (kernel command line) also profiles those functions
# and prints BENCH <device>.fn.<f>_us and _calls; each profiled function
# adds the profiler's own cost to the functions that call it, so use this
# to find where time goes (with ICOUNT=1), not for the headline numbers.
# bench.insnprof=1 (make insn-profile) leaves the function profiler off and
# instead writes insnprof-open and insnprof-close to trace_marker around
# swaplat, the window of the QEMU plugin scripts/insnprof.c, then prints
# the /proc/kallsyms entries that carry a module name (module area:
# modules, ftrace trampolines) as "KSYM address type name [module]".
# bench.insnprof=fprof does the same with the profiler on inside the
# window, to measure what its hooks cost.
. /tests/lib/common.sh
DEVS=${BENCH_DEVS:-zram brd pmem btt}
SET_MB=${BENCH_SET_MB:-96}
N=${BENCH_N:-12000}
T=/sys/kernel/tracing
for a in $(cat /proc/cmdline); do
	case "$a" in
	bench.devs=*) DEVS=${a#bench.devs=}; DEVS=${DEVS//,/ } ;;
	bench.funcs=*) FUNCS=${a#bench.funcs=}; FUNCS=${FUNCS//,/ } ;;
	bench.insnprof=*) IPROF=${a#bench.insnprof=} ;;
	esac
done

echo 0 > $T/function_profile_enabled
echo "swap_readpage swap_writepage" > $T/set_ftrace_filter || { echo "BENCH-ERROR no ftrace filter"; exit 1; }
for f in ${FUNCS:-}; do
	echo "$f" >> $T/set_ftrace_filter 2>/dev/null || echo "BENCH-WARN cannot trace $f"
done
cg=$(memcg_setup bench "$((SET_MB / 3))M")

for d in $DEVS; do
	dev=$(dev_setup "$d") || { echo "BENCH-ERROR no device $d"; continue; }
	swap_on "$dev" || { echo "BENCH-ERROR swapon $d"; continue; }
	[ "${IPROF:-}" = 1 ] || echo 1 > $T/function_profile_enabled
	[ -n "${IPROF:-}" ] && insnprof_open
	out=$(run_in_cg "$cg" swaplat -s "$SET_MB" -n "$N" -W 3000 -w 30 -S 7)
	[ -n "${IPROF:-}" ] && insnprof_close
	echo 0 > $T/function_profile_enabled
	read -r rh rt <<< "$(profile swap_readpage)"
	read -r wh wt <<< "$(profile swap_writepage)"
	swapoff "$dev"
	[ "$d" = zram ] && zram_reset "$dev"
	echo "BENCH $d.swapin_calls $rh"
	echo "BENCH $d.swapout_calls $wh"
	awk -v h="$rh" -v t="$rt" -v d="$d" 'BEGIN { if (h > 0) printf "BENCH %s.swapin_us %.3f\n", d, t / h }'
	awk -v h="$wh" -v t="$wt" -v d="$d" 'BEGIN { if (h > 0) printf "BENCH %s.swapout_us %.3f\n", d, t / h }'
	for k in median p99 avg; do
		v=$(sed -n "s/^fault_${k}_ns=//p" <<< "$out")
		[ -n "$v" ] && awk -v v="$v" -v d="$d" -v k="$k" 'BEGIN { printf "BENCH %s.fault_%s_us %.3f\n", d, k, v / 1000 }'
	done
	echo "BENCH $d.faults $(sed -n 's/^faults=//p' <<< "$out")"
	for f in ${FUNCS:-}; do
		read -r fh ft <<< "$(profile "$f")"
		[ "$fh" -gt 0 ] && awk -v h="$fh" -v t="$ft" -v d="$d" -v f="$f" \
			'BEGIN { printf "BENCH %s.fn.%s_us %.3f\nBENCH %s.fn.%s_calls %d\n", d, f, t / h, d, f, h }'
	done
done
echo "BENCH-DONE"
