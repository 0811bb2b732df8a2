#!/bin/bash
# scripts/tcg-hostprof.sh A B [ROUNDS]: where the host's time goes when
# QEMU TCG runs buffered random reads on zram, kernel A against kernel B.
# A and B are base, series, series@N or a kernel build directory (with
# System.map and arch/x86/boot/bzImage); ROUNDS (default 2) boot pairs.
# Each round boots A and B (order alternating; SMP vCPUs, 2 by default)
# with benchmarks/guest/zramsteady.sh and samples the QEMU process with
# perf record (cpu-clock, 4999 Hz) for the guest's window of reads (after
# fio's start, while nothing else runs); then scripts/tcg-hostprof.py
# writes report.md: host CPU samples per read, split into translated
# guest code, QEMU's own code (TB lookup, softmmu helpers, the execution
# loop), the host kernel and libraries, and the rows that differ most.
# HOSTPROF_LOG=1 also has QEMU log every translation block (-d
# in_asm,out_asm, about 1 GB per boot; the guest then waits 15 s instead
# of 6 before its window, for the slower translation of fio's code) so
# that samples in translated code are given to the guest function they
# were translated from.  The log's writing takes host time of its own:
# compare such runs with each other, not with runs without it.
# This is a tool for explaining a wall-clock difference, not a benchmark:
# its n is small and it gives no intervals (make bench does).  A boot
# without a window, perf data or BENCH-DONE, or with a kernel report, is
# left out, listed in the report, and makes the exit status non-zero.
# Needs perf (linux-perf) able to sample the QEMU process; host kernel
# samples need kernel.perf_event_paranoid <= 1 or root.
set -uo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
export TOP BUILD
die() { echo "tcg-hostprof: error: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: scripts/tcg-hostprof.sh A B [ROUNDS]"
A=$1 B=$2 ROUNDS=${3:-2}
case $ROUNDS in [1-9] | [1-9][0-9]) ;; *) die "ROUNDS=$ROUNDS: 1-99" ;; esac
perf record -q -o /dev/null -e cpu-clock -- true >/dev/null 2>&1 ||
	die "perf record does not work here (apt-get install linux-perf; perf_event_paranoid)"
case ${HOSTPROF_LOG:-0} in 0 | 1) ;; *) die "HOSTPROF_LOG=$HOSTPROF_LOG: 0 or 1" ;; esac
[ "${HOSTPROF_LOG:-0}" = 1 ] || HOSTPROF_LOG=
words=$("$TOP/scripts/qemu-run.sh" --env-words) || exit 2
[ -z "${ICOUNT:-}" ] || die "ICOUNT=1 makes host time meaningless here"
# shellcheck source=scripts/kernel-spec.sh
. "$TOP/scripts/kernel-spec.sh"
objdir() { spec_objdir tcg-hostprof "$1"; }
make --no-print-directory -C "$TOP" initramfs >&2 || exit 1
da=$(objdir "$A") || exit 2
db=$(objdir "$B") || exit 2
out=$BUILD/bench/hostprof-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
printf 'A %s\nB %s\n' "$da" "$db" > "$out/kernels"

boot() {	# boot ID ROUND OBJDIR
	local id=$1 r=$2 d=$3 log=$out/$1-$2.log bg qpid win i
	local extra=
	[ -z "${HOSTPROF_LOG:-}" ] || extra="-d in_asm,out_asm -D $out/$id-$r.asm"
	# With the log, translating fio's code takes QEMU about 8 s.
	QEMU_EXTRA=$extra "$TOP/scripts/qemu-run.sh" "$d/arch/x86/boot/bzImage" "$log" 2048 600 \
		/bench/zramsteady.sh "${HOSTPROF_LOG:+bench.zramsteady_delay=15}" &
	bg=$!
	# The whole line: the number may still be on its way through the UART.
	for ((i = 0; i < 3000; i++)); do
		grep -Eq $'^HOSTPROF-WINDOW [0-9]+\r?$' "$log" 2>/dev/null && break
		kill -0 $bg 2>/dev/null || break
		sleep 0.2
	done
	win=$(awk '$1 == "HOSTPROF-WINDOW" { print $2 + 0; exit }' "$log" 2>/dev/null)
	qpid=$(pgrep -n -f "^qemu-system-x86_64 .*file:${log%.log}\.ktap" || true)
	if [ "${win:-0}" -le 0 ]; then
		echo "tcg-hostprof: warning: $id round $r: the guest opened no window (log $log)" >&2
	elif [ -z "$qpid" ]; then
		echo "tcg-hostprof: warning: $id round $r: no QEMU process found" >&2
	elif ! perf record -q -F 4999 -e cpu-clock -p "$qpid" -o "$out/$id-$r.perf" \
		-- sleep "$win" >/dev/null 2>"$out/$id-$r.perf.err"; then
		echo "tcg-hostprof: warning: $id round $r: perf record failed: $(head -c 200 "$out/$id-$r.perf.err")" >&2
		rm -f "$out/$id-$r.perf"
	fi
	wait $bg
	echo "tcg-hostprof: round $r/$ROUNDS kernel $id: $(awk '$1 == "HOSTPROF-READS" { print $2 }' "$log" | tr -d '\r') reads in the window" >&2
}
for ((r = 1; r <= ROUNDS; r++)); do
	if [ $((r % 2)) = 1 ]; then
		boot A $r "$da"; boot B $r "$db"
	else
		boot B $r "$db"; boot A $r "$da"
	fi
done
python3 "$TOP/scripts/tcg-hostprof.py" "$out" --rounds "$ROUNDS" --smp "${SMP:-2}" \
	--command "${HOSTPROF_LOG:+HOSTPROF_LOG=1 }${words:+$words }scripts/tcg-hostprof.sh $A $B $ROUNDS"
rc=$?
echo "tcg-hostprof: report in $out/report.md"
[ $rc = 0 ] || echo "tcg-hostprof: the report is partial or missing (see its first lines)" >&2
exit $rc
