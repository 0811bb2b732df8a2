#!/bin/bash
# Where the time of one swap-in and one swap-out goes: the ftrace
# function_graph tracer limited to swap_readpage() and swap_writepage(),
# for a short swaplat run on one device (bench.devs=..., default pmem).
# Prints the call graph of a few calls of each, for reading, not timing
# (bench.graph=FUNC limits it to one function).
. /tests/lib/common.sh
d=pmem
G="swap_readpage swap_writepage"
for a in $(cat /proc/cmdline); do
	case "$a" in
	bench.devs=*) d=${a#bench.devs=} ;;
	bench.graph=*) G=${a#bench.graph=} ;;
	esac
done
T=/sys/kernel/tracing
dev=$(dev_setup "$d") || { echo "BENCH-ERROR no device $d"; exit 1; }
swap_on "$dev"
cg=$(memcg_setup graph 16M)
run_in_cg "$cg" swaplat -s 48 -n 3000 -W 3000 -w 30 -S 7 > /dev/null
echo "$G" > $T/set_graph_function
echo 0 > $T/options/funcgraph-irqs 2>/dev/null
echo 8192 > $T/buffer_size_kb
echo function_graph > $T/current_tracer
echo 1 > $T/tracing_on
run_in_cg "$cg" swaplat -s 48 -n 40 -W 0 -w 30 -S 9 > /dev/null
echo 0 > $T/tracing_on
echo "GRAPH-BEGIN"
awk '/swap_readpage\(\) \{/ && r < 2 { p = 1; r++ } /swap_writepage\(\) \{/ && w < 2 { p = 1; w++ } p { print } /^ *[0-9]\) .*\| *\} *\/\* swap_(readpage|writepage) \*\// { p = 0 }' $T/trace | head -400
echo "GRAPH-END"
echo "BENCH-DONE"
