#!/bin/bash
# One benchmark boot, shared by make bench and make bisect-bench: boot
# KERNEL with benchmarks/guest/BENCH.sh, append its "BENCH metric value"
# lines to RESULTS as "ROUND<TAB>ID<TAB>metric<TAB>value", warn about an
# unfinished run or a kernel report, and print the number of metrics.
# usage: bench-boot.sh KERNEL LOG BENCH ROUND ID RESULTS
set -uo pipefail
kernel=$1 log=$2 bench=$3 round=$4 id=$5 res=$6
guest=${TOP:?}/benchmarks/guest/$bench.sh
# A guest script may ask for a timeout and for kernel parameters of its own
# ("# bench-timeout: S", "# bench-cmdline: ..."); BENCH_CMDLINE comes last.
to=$(sed -n 's/^# bench-timeout: //p' "$guest")
gcmd=$(sed -n 's/^# bench-cmdline: //p' "$guest")
"$TOP/scripts/qemu-run.sh" "$kernel" "$log" "${BENCH_MEM:-2048}" "${to:-900}" "/bench/$bench.sh" \
	"${gcmd:+$gcmd }${BENCH_CMDLINE:-}"
grep -q '^BENCH-DONE' "$log" || echo "bench: warning: round $round kernel $id did not finish (log $log)" >&2
grep -E 'BUG:|WARNING:|Oops|Kernel panic' "$log" | head -3 | sed 's/^/bench: kernel report: /' >&2
awk -v r="$round" -v k="$id" '$1 == "BENCH" { printf "%s\t%s\t%s\t%s\n", r, k, $2, $3 }' "$log" >> "$res"
grep -c '^BENCH ' "$log"
