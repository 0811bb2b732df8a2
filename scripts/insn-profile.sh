#!/bin/bash
# make insn-profile [A=base] [B=series] [DEVS="zram brd pmem btt"] [INSN_BENCH=biocache]
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
# A kernel is base, series, series@N (the series up to patch N, see
# scripts/kernel-spec.sh) or a kernel build directory (with System.map).
# INSN_GUEST=fprof keeps the function profiler on inside the window (as
# make bench does), to measure what its hooks add.
# INSN_BENCH=biocache profiles the bio allocation benchmark instead
# (benchmarks/guest/biocache.sh, 20000 asynchronous 4 KiB O_DIRECT reads
# from null_blk, one vCPU): the plugin counts each call of
# bio_alloc_bioset() and bio_put() from its first instruction to its
# return, callees included (incl=), and report.md gives instructions per
# call and per pair, A against B, with the per-function counts of the
# whole window.
# INSN_BENCH=pmemdma profiles pmem's two copy paths on one kernel
# (default A=B=series): 4 KiB O_DIRECT psync reads, then writes, on the
# pmem disk, A booted with the disk in bio mode and B in blk-mq mode with
# the CPU copying (benchmarks/guest/pmemdma.sh, bench.pmemdma_modes);
# report.md gives instructions per pread() and pwrite() call, callees
# included, and the per-function counts of the window; INSN_RW=read or
# INSN_RW=write keeps only the reads or the writes in the window.
# INSN_CMDLINE_A / INSN_CMDLINE_B add kernel command line words to the
# boots of A / B (after the benchmark's own).
# INSN_MEM=BITS also has the plugin count each instruction's memory
# accesses and the misses of a model software TLB of 1 << BITS entries
# (8: the 256 entries QEMU starts with), written beside each RUN.tb as
# RUN.tb.mem; scripts/insn-mem.py compares them, A against B, per function.
# Counts vary between boots of one kernel by a few instructions per I/O
# (README: "repeatable within"): the sampling of the guest's clocksource
# and random numbers still varies.
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
INSN_BENCH=${INSN_BENCH:-swaplat}
if [ "$INSN_BENCH" = pmemdma ]; then
	A=${A:-series} B=${B:-series}
	INSN_CMDLINE_A=${INSN_CMDLINE_A:-bench.pmemdma_modes=bio}
	INSN_CMDLINE_B=${INSN_CMDLINE_B:-bench.pmemdma_modes=mqcpu}
fi
A=${A:-base} B=${B:-series}
DEVS=${DEVS:-zram brd pmem btt}
PAR=${INSN_JOBS:-$(nproc)}

die() { echo "insn-profile: error: $*" >&2; exit 1; }

case $INSN_BENCH in
swaplat) INCL_FUNCS="" ;;
biocache) DEVS=biocache INCL_FUNCS="bio_alloc_bioset bio_put" ;;
zramfio) DEVS=zramfio INCL_FUNCS="ksys_pread64" ;;
pmemdma)
	DEVS=pmemdma
	case ${INSN_RW:-read,write} in
	read) INCL_FUNCS=ksys_pread64 ;;
	write) INCL_FUNCS=ksys_pwrite64 ;;
	read,write) INCL_FUNCS="ksys_pread64 ksys_pwrite64" ;;
	*) die "INSN_RW=$INSN_RW: read, write or read,write" ;;
	esac
	INSN_CMDLINE_A+=" bench.pmemdma_rw=${INSN_RW:-read,write}"
	INSN_CMDLINE_B+=" bench.pmemdma_rw=${INSN_RW:-read,write}" ;;
*) die "INSN_BENCH=$INSN_BENCH: only swaplat, biocache, zramfio and pmemdma can be profiled" ;;
esac
# Built with -O2 (KCONFIG=distro), ksys_pread64() and ksys_pwrite64() are
# inlined into their system calls: count from the system call's entry.
[ "${KCONFIG:-test}" = test ] || INCL_FUNCS=${INCL_FUNCS//ksys_p/__x64_sys_p}

# shellcheck source=scripts/kernel-spec.sh
. "$TOP/scripts/kernel-spec.sh"

objdir() { spec_objdir insn-profile "$1"; }

case ${INSN_MEM:-8} in
[1-9]|1[0-9]|20) ;;
*) die "INSN_MEM=$INSN_MEM: the model TLB's size in bits, 1 to 20" ;;
esac
make --no-print-directory -C "$TOP" initramfs >&2 || exit 1
oa=$(objdir "$A") || exit 1
ob=$(objdir "$B") || exit 1
out=${INSN_OUT:-$BUILD/bench/insnprof-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
plugin=$BUILD/host-tools/insnprof.so
mkdir -p "$(dirname "$plugin")"
gcc -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC \
	-o "$plugin" "$TOP/scripts/insnprof.c" -lpthread || die "cannot build the QEMU plugin"
if [ -n "$INCL_FUNCS" ]; then
	echo "insn-profile: A=$A ($oa) B=$B ($ob), $INSN_BENCH, output $out"
else
	echo "insn-profile: A=$A ($oa) B=$B ($ob), devices $DEVS, output $out"
fi

sym() {	# sym SYSTEM.MAP NAME: address of a text symbol
	awk -v n="$2" '$3 == n && $2 ~ /^[tT]$/ { print $1; exit }' "$1"
}

boot() {	# boot OBJDIR K DEV
	local t incl="" f a
	t=$(sym "$1/System.map" tracing_mark_write)
	[ -n "$t" ] || { echo "insn-profile: error: no tracing_mark_write in $1/System.map" >&2; return 1; }
	if [ -n "$INCL_FUNCS" ]; then
		for f in $INCL_FUNCS; do
			a=$(sym "$1/System.map" "$f")
			[ -n "$a" ] || { echo "insn-profile: error: no $f in $1/System.map" >&2; return 1; }
			incl+=${incl:+:}$a
		done
		a=$(sym "$1/System.map" __switch_to_asm)
		[ -n "$a" ] || { echo "insn-profile: error: no __switch_to_asm in $1/System.map" >&2; return 1; }
		incl=",incl=$incl,switch=$a"
	fi
	local extra=${INSN_CMDLINE_A:-}
	[ "$2" = B ] && extra=${INSN_CMDLINE_B:-}
	# The plugin works on System.map's addresses: no KASLR (distro config)
	grep -q '^CONFIG_RANDOMIZE_BASE=y' "$1/.config" && extra="nokaslr${extra:+ $extra}"
	rm -f "$out/$3-$2.tb" "$out/$3-$2.tb.mem"
	QEMU_EXTRA="-plugin $plugin,toggle=$t,skip=0,out=$out/$3-$2.tb$incl${INSN_MEM:+,mem=$INSN_MEM}" ICOUNT=1 \
		BENCH_CMDLINE="bench.devs=$3 bench.insnprof=${INSN_GUEST:-1}${extra:+ $extra}" \
		"$TOP/scripts/bench-boot.sh" "$1/arch/x86/boot/bzImage" "$out/$3-$2.log" \
		"$INSN_BENCH" 1 "$2" "$out/results.tsv" >/dev/null
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
if [ -n "$INCL_FUNCS" ]; then
	# shellcheck disable=SC2086
	python3 "$TOP/scripts/insnprof.py" --incl "$out/report.md" "$INSN_BENCH" "$A" "$oa/System.map" \
		"$B" "$ob/System.map" $INCL_FUNCS || die "no report"
	sed -n '/^| function/,/^$/p' "$out/report.md"
	echo "insn-profile: report in $out/report.md"
	exit 0
fi
# shellcheck disable=SC2086
python3 "$TOP/scripts/insnprof.py" "$out/report.md" "$A" "$oa/System.map" "$B" "$ob/System.map" $DEVS ||
	die "no report"
sed -n '/^| device/,/^$/p' "$out/report.md"
echo "insn-profile: report in $out/report.md"
