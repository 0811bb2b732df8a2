#!/bin/bash
# One benchmark boot, shared by make bench, make bisect-bench and make
# insn-profile: boot KERNEL with benchmarks/guest/BENCH.sh, append its
# "BENCH metric value" lines to RESULTS as "ROUND<TAB>ID<TAB>metric<TAB>value",
# and print the number of metrics.
# A boot that did not finish (no BENCH-DONE line in LOG) also gets the line
# "ROUND<TAB>ID<TAB>!invalid<TAB>reason": benchmarks/stats.py and
# bisect_stats.py then drop that round's pairs and report them (the metrics
# are kept in RESULTS for reading, never used).  A kernel report in LOG
# (BUG, WARNING, Oops, panic) adds "ROUND<TAB>ID<TAB>!report<TAB>text": the
# round is kept and listed.
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
lines=$(awk -v r="$round" -v k="$id" '$1 == "BENCH" { printf "%s\t%s\t%s\t%s\n", r, k, $2, $3 }' "$log" 2>/dev/null)
if ! grep -q '^BENCH-DONE' "$log" 2>/dev/null; then
	echo "bench: warning: round $round kernel $id did not finish: its pairs are dropped (log $log)" >&2
	lines+="${lines:+$'\n'}$round	$id	!invalid	no BENCH-DONE in $(basename "$log")"
fi
rep=$(grep -E 'BUG:|WARNING:|Oops|Kernel panic' "$log" 2>/dev/null | head -3)
if [ -n "$rep" ]; then
	sed 's/^/bench: kernel report: /' <<< "$rep" >&2
	lines+="${lines:+$'\n'}$round	$id	!report	$(head -1 <<< "$rep" | tr -d '\r' | tr '\t' ' ' | cut -c1-120)"
fi
# one append, so that parallel boots (insn-profile) do not interleave lines
[ -n "$lines" ] && printf '%s\n' "$lines" >> "$res"
grep -c '^BENCH ' "$log" 2>/dev/null || true
