#!/bin/bash
# make insn-profile [A=base] [B=series] [DEVS="zram brd pmem btt"]
# Exact instruction profile of the swap path, kernel A against kernel B.
# For each device, boots each kernel once under QEMU TCG with -icount and
# the insnprof plugin (scripts/insnprof.c) and runs the swaplat guest
# benchmark on that device alone, with bench.insnprof=1: the guest leaves
# the ftrace function profiler off and writes to trace_marker just before
# and just after swaplat.  The plugin counts every instruction executed
# between those two writes (its window opens and closes on the first
# instruction of tracing_mark_write()), each by its own address.
# scripts/insnprof.py then attributes them to kernel functions and writes
# report.md: per device, instructions per swap I/O by function, A against
# B.  A boot whose window did not open and close exactly once fails the run.
# A kernel is base, series, or a kernel build directory (with System.map).
# INSN_GUEST=fprof keeps the function profiler on inside the window (as
# make bench does), to measure what its hooks add.
# Counts vary between boots of one kernel by a few instructions per I/O
# (README: "repeatable within"): the sampling of the guest's clocksource
# and random numbers still varies.
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
A=${A:-base} B=${B:-series}
DEVS=${DEVS:-zram brd pmem btt}
PAR=${INSN_JOBS:-$(nproc)}

die() { echo "insn-profile: error: $*" >&2; exit 1; }

# shellcheck source=scripts/kernel-spec.sh
. "$TOP/scripts/kernel-spec.sh"

objdir() {	# kernel spec -> build directory
	case $1 in
	base|series) built_objdir "$1" ;;
	*) if [ ! -f "$1/System.map" ] || [ ! -f "$1/arch/x86/boot/bzImage" ]; then
		echo "insn-profile: error: '$1' is not base, series or a kernel build directory" >&2
		return 1
	   fi
	   realpath "$1" ;;
	esac
}

make --no-print-directory -C "$TOP" initramfs >&2 || exit 1
oa=$(objdir "$A") || exit 1
ob=$(objdir "$B") || exit 1
out=${INSN_OUT:-$BUILD/bench/insnprof-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
plugin=$BUILD/host-tools/insnprof.so
mkdir -p "$(dirname "$plugin")"
gcc -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC \
	-o "$plugin" "$TOP/scripts/insnprof.c" -lpthread || die "cannot build the QEMU plugin"
echo "insn-profile: A=$A ($oa) B=$B ($ob), devices $DEVS, output $out"

boot() {	# boot OBJDIR K DEV
	local t
	t=$(awk '$3 == "tracing_mark_write" { print $1 }' "$1/System.map")
	[ -n "$t" ] || { echo "insn-profile: error: no tracing_mark_write in $1/System.map" >&2; return 1; }
	rm -f "$out/$3-$2.tb"
	QEMU_EXTRA="-plugin $plugin,toggle=$t,skip=0,out=$out/$3-$2.tb" ICOUNT=1 \
		BENCH_CMDLINE="bench.devs=$3 bench.insnprof=${INSN_GUEST:-1}" \
		"$TOP/scripts/bench-boot.sh" "$1/arch/x86/boot/bzImage" "$out/$3-$2.log" \
		swaplat 1 "$2" "$out/results.tsv" >/dev/null
	if ! grep -q '^BENCH-DONE' "$out/$3-$2.log" 2>/dev/null; then
		echo "insn-profile: error: $3 on $2: the guest did not finish (log $out/$3-$2.log)" >&2
		return 1
	fi
	if ! grep -q '^# windows 1$' "$out/$3-$2.tb" 2>/dev/null ||
	   ! grep -q '^# open-at-exit 0$' "$out/$3-$2.tb"; then
		echo "insn-profile: error: $3 on $2: the window did not open and close exactly once ($out/$3-$2.tb)" >&2
		return 1
	fi
}

export TOP BUILD
t0=$(date +%s)
n=0 failed=0 pids=()
reap() {
	local p
	for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
	pids=()
}
for d in $DEVS; do
	for k in A B; do
		o=$oa; [ $k = B ] && o=$ob
		boot "$o" $k "$d" &
		pids+=($!)
		n=$((n + 1))
		[ $((n % PAR)) -eq 0 ] && reap
	done
done
reap
echo "insn-profile: $(( $(date +%s) - t0 ))s of boots"
[ "$failed" -eq 0 ] || die "$failed of $n boots failed; no report"
# shellcheck disable=SC2086
python3 "$TOP/scripts/insnprof.py" "$out/report.md" "$A" "$oa/System.map" "$B" "$ob/System.map" $DEVS ||
	die "no report"
sed -n '/^| device/,/^$/p' "$out/report.md"
echo "insn-profile: report in $out/report.md"
