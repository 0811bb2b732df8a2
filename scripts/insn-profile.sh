#!/bin/bash
# make insn-profile [A=base] [B=series] [DEVS="zram brd pmem btt"]
# Exact instruction profile of the swap path, kernel A against kernel B.
# For each device, boots each kernel once under QEMU TCG with -icount and
# the insnprof plugin (scripts/insnprof.c) and runs the swaplat guest
# benchmark on that device alone.  The plugin counts every instruction
# executed between the guest's enabling and disabling of the ftrace
# function profiler around swaplat (the guest script writes
# function_profile_enabled three times; the plugin skips the first write
# and toggles its window on the next two).  scripts/insnprof.py then
# attributes them to kernel functions and writes report.md: per device,
# instructions per swap I/O by function, A against B.
# A kernel is base, series, or a kernel build directory (with System.map).
# Counts are deterministic to within a few instructions per I/O: the
# sampling of the guest's clocksource and random numbers still varies.
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
	t=$(awk '$3 == "ftrace_profile_write" { print $1 }' "$1/System.map")
	[ -n "$t" ] || { echo "insn-profile: error: no ftrace_profile_write in $1/System.map" >&2; return 1; }
	QEMU_EXTRA="-plugin $plugin,toggle=$t,skip=1,out=$out/$3-$2.tb" ICOUNT=1 \
		BENCH_CMDLINE="bench.devs=$3" \
		"$TOP/scripts/bench-boot.sh" "$1/arch/x86/boot/bzImage" "$out/$3-$2.log" \
		swaplat 1 "$2" "$out/results.tsv" >/dev/null
	grep -q '^# windows 1$' "$out/$3-$2.tb" 2>/dev/null ||
		echo "insn-profile: warning: $3 on $2: the profile window did not open and close once" >&2
}

export TOP BUILD
t0=$(date +%s)
n=0
for d in $DEVS; do
	for k in A B; do
		o=$oa; [ $k = B ] && o=$ob
		boot "$o" $k "$d" &
		n=$((n + 1))
		[ $((n % PAR)) -eq 0 ] && wait
	done
done
wait
echo "insn-profile: $(( $(date +%s) - t0 ))s of boots"
# shellcheck disable=SC2086
python3 "$TOP/scripts/insnprof.py" "$out/report.md" "$A" "$oa/System.map" "$B" "$ob/System.map" $DEVS ||
	die "no report"
sed -n '/^| device/,/^$/p' "$out/report.md"
echo "insn-profile: report in $out/report.md"
