#!/bin/bash
# make bench A=<kernel> B=<kernel> BENCH=<name> ROUNDS=<n>
# Boots A and B alternately (A B A B ...) ROUNDS times each with the guest
# benchmark benchmarks/guest/<BENCH>.sh, collects its "BENCH metric value"
# lines and reports per metric, over the rounds as A/B pairs, the median,
# min and max of each, the B/A ratio with an exact paired interval and a
# Holm-corrected verdict (benchmarks/stats.py; no verdict below 6 valid
# pairs; ICOUNT=1: the difference and its spread instead).
# A kernel is: base (the unpatched v6.1.4), series (all patches), series@N,
# a path to a bzImage or to a kernel build directory (arch/x86/boot/bzImage
# in it), or NN (the kernel after patch NN, from make bisect-build
# SAVE_KERNELS=1).
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
A=${A:-base} B=${B:-series} BENCH=${BENCH:-swaplat} ROUNDS=${ROUNDS:-12}
MEM=${BENCH_MEM:-2048}
export BENCH_MEM=$MEM
guest=$TOP/benchmarks/guest/$BENCH.sh
[ -f "$guest" ] || { echo "bench: error: no benchmark '$BENCH' (benchmarks/guest/*.sh)" >&2; exit 2; }
words=$("$TOP/scripts/qemu-run.sh" --env-words) || exit 2

# shellcheck source=scripts/kernel-spec.sh
. "$TOP/scripts/kernel-spec.sh"

resolve() {	# resolve SPEC: print a bzImage path, building it if needed
	case $1 in
	base|series|series@[0-9]*) d=$(built_objdir "$1") || return 1
		echo "$d/arch/x86/boot/bzImage" ;;
	[0-9]|[0-9][0-9]) # the current series' patch NN, not a kernel left by an older series
		p=$(sed -n "$((10#$1))p" "$TOP/series")
		[ -n "$p" ] || { echo "bench: error: the series has no patch $1" >&2; return 1; }
		f=$BUILD/kernels/$(printf %02d "$((10#$1))")-${p%.patch}.bzImage
		[ -f "$f" ] || { echo "bench: error: no kernel for patch $1 ($p); run make bisect-build SAVE_KERNELS=1" >&2; return 1; }
		echo "$f" ;;
	*) # a kernel build directory, checked as insn-profile checks it
	   if [ -d "$1" ]; then
		d=$(spec_objdir bench "$1") || return 1
		echo "$d/arch/x86/boot/bzImage"
		return 0
	   fi
	   [ -f "$1" ] || { echo "bench: error: no kernel '$1' (base, series, series@N, NN, a bzImage or a kernel build directory)" >&2; return 1; }
	   echo "$1" ;;
	esac
}

make --no-print-directory -C "$TOP" initramfs >&2 || exit 1
ka=$(resolve "$A") || exit 1
kb=$(resolve "$B") || exit 1
# The test modules (tests/modules/: swdma for pmemdma), built for each
# kernel that has its object directory: that kernel's initramfs.
export TOP BUILD
ia=$("$TOP/scripts/test-modules.sh" "$ka") || exit 1
ib=$("$TOP/scripts/test-modules.sh" "$kb") || exit 1
stamp=$(date +%Y%m%d-%H%M%S)
out=${BENCH_OUT:-$BUILD/bench/$BENCH-$stamp}
mkdir -p "$out/logs"
cp "$ka" "$out/A.bzImage"; cp "$kb" "$out/B.bzImage"
res=$out/results.tsv
printf 'round\tkernel\tmetric\tvalue\n' > "$res"
# ICOUNT=1: guest clock = emulated instruction count (see qemu-run.sh).
cmd="make bench A=$A B=$B BENCH=$BENCH ROUNDS=$ROUNDS"
machine="QEMU TCG (no KVM), ${SMP:-2} vCPUs, ${MEM} MiB guest, host $(nproc) CPUs"
if [ -n "${ICOUNT:-}" ]; then
	machine="QEMU TCG with -icount shift=0 (no KVM), 1 vCPU, ${MEM} MiB guest: a guest ns is one emulated instruction"
	cmd+=" ICOUNT=1"
	[ -n "${SMP:-}" ] && echo "bench: warning: SMP=$SMP ignored: ICOUNT=1 boots one vCPU" >&2
fi
cmd+="${words:+ $words}"
[ -n "${BENCH_CMDLINE:-}" ] && cmd+=" BENCH_CMDLINE='$BENCH_CMDLINE'"
[ "${QEMU_NO_THP:-0}" = 1 ] && machine+="; QEMU without host huge pages (QEMU_NO_THP=1)"
if [ "${KCONFIG:-test}" != test ]; then
	cmd+=" KCONFIG=$KCONFIG"
	machine+="; kernels configured from $(cat "$BASECONFIG.version" 2>/dev/null | sed 's/^/Debian linux-config-6.1 /') cloud-amd64 (KCONFIG=$KCONFIG)"
fi
{
	echo "bench: $BENCH, A=$A ($ka), B=$B ($kb), $ROUNDS rounds, order A B in odd rounds, B A in even ones"
	echo "machine: $machine"
	echo "command: $cmd"
} | tee "$out/README"
t0=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
	# Odd rounds boot A first, even rounds B first: the paired test
	# assumes no advantage to either place in a round.
	order="A B"
	[ $((r % 2)) -eq 0 ] && order="B A"
	for k in $order; do
		log=$out/logs/$k-$r.log
		initrd=$ia
		[ $k = B ] && initrd=$ib
		n=$(INITRD=${initrd:-$BUILD/initramfs.cpio} "$TOP/scripts/bench-boot.sh" "$out/$k.bzImage" "$log" "$BENCH" "$r" "$k" "$res")
		echo "bench: round $r/$ROUNDS $k: $n metrics, $(( $(date +%s) - t0 ))s elapsed"
	done
done
python3 "$TOP/benchmarks/stats.py" "$res" --out "$out" --title "$BENCH: A=$A B=$B" \
	--command "$cmd" --machine "$machine" --rounds "$ROUNDS" ${ICOUNT:+--deterministic} || exit 1
ln -sfn "$(basename "$out")" "$BUILD/bench/latest"
echo "bench: results in $out (results.json, results.md, *.png); total $(( $(date +%s) - t0 ))s"
