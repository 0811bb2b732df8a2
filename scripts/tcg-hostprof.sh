#!/bin/bash
# scripts/tcg-hostprof.sh A B [ROUNDS]: where the host's time goes when
# QEMU TCG runs buffered random reads on zram, kernel A against kernel B.
# A and B are base, series, series@N or a kernel build directory (with
# System.map).  Each round boots A and B (order alternating) with
# benchmarks/guest/zramsteady.sh and samples the QEMU process with
# perf record (cpu-clock, 4999 Hz) for the guest's window of reads (after
# fio's start, while nothing else runs); then
# scripts/tcg-hostprof.py writes report.md: host CPU samples per read,
# split into translated guest code, QEMU's own code (TB lookup, softmmu
# helpers, the execution loop), the host kernel and libraries.
# HOSTPROF_LOG=1 also has QEMU log every translation block (-d
# in_asm,out_asm, about 1 GB per boot) so that samples in translated code
# are given to the guest function they were translated from, and the
# report compares A and B per guest function.  The log slows translation,
# not the translated code, but its writing takes host time: compare such
# runs with each other, not with runs without it.
# This is a tool for explaining a wall-clock difference, not a benchmark:
# its n is small and it gives no intervals (make bench does).
# Needs perf (linux-perf) and a host where perf may sample its own
# processes (kernel.perf_event_paranoid <= 2).
set -uo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
export TOP BUILD
die() { echo "tcg-hostprof: error: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: scripts/tcg-hostprof.sh A B [ROUNDS]"
A=$1 B=$2 ROUNDS=${3:-2}
case $ROUNDS in [1-9] | [1-9][0-9]) ;; *) die "ROUNDS=$ROUNDS: 1-99" ;; esac
command -v perf >/dev/null || die "no perf (apt-get install linux-perf)"
"$TOP/scripts/qemu-run.sh" --check-smp || exit 2
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
	for ((i = 0; i < 3000; i++)); do
		grep -q '^HOSTPROF-WINDOW' "$log" 2>/dev/null && break
		kill -0 $bg 2>/dev/null || break
		sleep 0.2
	done
	win=$(awk '$1 == "HOSTPROF-WINDOW" { print $2 + 0; exit }' "$log" 2>/dev/null)
	qpid=$(pgrep -n -f "serial file:${log%.log}.ktap" || true)
	if [ -z "$win" ] || [ -z "$qpid" ]; then
		wait $bg
		echo "tcg-hostprof: warning: $id round $r: no window (log $log)" >&2
		return
	fi
	if ! perf record -q -F 4999 -e cpu-clock -p "$qpid" -o "$out/$id-$r.perf" \
		-- sleep "$win" >/dev/null 2>&1; then
		echo "tcg-hostprof: warning: perf record failed for $id round $r" >&2
		rm -f "$out/$id-$r.perf"
	fi
	wait $bg
	echo "tcg-hostprof: round $r/$ROUNDS kernel $id: $(awk '$1 == "BENCH" { print $3 }' "$log") IOPS" >&2
}
for ((r = 1; r <= ROUNDS; r++)); do
	if [ $((r % 2)) = 1 ]; then
		boot A $r "$da"; boot B $r "$db"
	else
		boot B $r "$db"; boot A $r "$da"
	fi
done
python3 "$TOP/scripts/tcg-hostprof.py" "$out" \
	--command "${HOSTPROF_LOG:+HOSTPROF_LOG=1 }scripts/tcg-hostprof.sh $A $B $ROUNDS" || exit 1
echo "tcg-hostprof: report in $out/report.md"
