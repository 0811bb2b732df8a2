#!/bin/bash
# make bisect-bench BENCH=<name> [ROUNDS=n]: the benchmark's metrics on the
# base and after every patch, booted round-robin (base, 01, ..., NN in odd
# rounds, NN, ..., 01, base in even ones) so drift hits every kernel alike.  Reports each kernel's median
# per metric and its ratio to the base over the rounds as pairs, marking a
# cell only when the exact paired test, corrected over the table, says so
# (benchmarks/bisect_stats.py: nothing can be marked below 6 rounds), as a
# table (bisect.md, bisect.json) and a plot per metric (bisect-*.png).
# ICOUNT=1 measures emulated instructions instead of time (qemu-run.sh):
# then the cells give the difference to the base and a mark needs it to
# exceed the measured spread (2 rounds or more; one round marks nothing),
# and a patch that adds or saves a few dozen instructions per call shows up.
# BISECT_FROM=N boots only patches N-1 to the last and builds only those:
# patch N-1 is then the reference every cell is compared with (the table
# says "base" for it); BISECT_BASE=1 boots the base too, as the reference.
# BISECT_REUSE=1 builds nothing and boots the kernels an earlier
# make bisect-build SAVE_KERNELS=1 (or make check SAVE_KERNELS=1) left in
# build/kernels, failing if one is missing or older than its patch file.
# BENCH_JOBS boots that many kernels at once; only with ICOUNT=1 (counts do
# not depend on load), where it defaults to the number of CPUs.
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
BENCH=${BENCH:-swaplat} ROUNDS=${ROUNDS:-3}
from=${BISECT_FROM:-1}
from=$((10#$from > 1 ? 10#$from - 1 : 1))
jobs=1
[ -n "${ICOUNT:-}" ] && jobs=${BENCH_JOBS:-$(nproc)}
guest=$TOP/benchmarks/guest/$BENCH.sh
[ -f "$guest" ] || { echo "bisect-bench: error: no benchmark '$BENCH'" >&2; exit 2; }
words=$("$TOP/scripts/qemu-run.sh" --env-words) || exit 2
withbase=1
[ "$from" -gt 1 ] && [ "${BISECT_BASE:-0}" != 1 ] && withbase=0
if [ $withbase = 1 ]; then
	make --no-print-directory -C "$TOP" base-kernel initramfs || exit 1
else
	make --no-print-directory -C "$TOP" initramfs || exit 1
fi
if [ "${BISECT_REUSE:-0}" != 1 ]; then
	SAVE_KERNELS=1 BISECT_VARIANTS=0 BISECT_FROM=$from "$TOP/scripts/bisect-build.sh" || exit 1
fi
out=$BUILD/bench/bisect-$BENCH-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/logs"
kernels=()
[ $withbase = 1 ] && kernels=("00-base:$BUILD/obj/base/arch/x86/boot/bzImage")
i=0
while read -r p; do
	i=$((i + 1))
	n=$(printf %02d "$i")
	[ "$i" -ge "$from" ] && kernels+=("$n:$BUILD/kernels/$n-${p%.patch}.bzImage")
done < <("$TOP/scripts/series-list.sh")
for k in "${kernels[@]}"; do
	f=${k#*:}
	if [ ! -f "$f" ]; then
		echo "bisect-bench: error: no kernel $f (make bisect-build SAVE_KERNELS=1)" >&2
		exit 1
	fi
	if [ "${BISECT_REUSE:-0}" = 1 ]; then
		# the saved kernel must be newer than every patch up to its own
		n=${k%%:*}
		n=${n%%-*}
		[ "$n" = 00 ] || while read -r p; do
			if [ "$TOP/patches/$p" -nt "$f" ]; then
				echo "bisect-bench: error: $f is older than patches/$p; build again" >&2
				exit 1
			fi
		done < <("$TOP/scripts/series-list.sh" | head -n "$((10#$n))")
	fi
	cp "$f" "$out/${k%%:*}.bzImage"
done
res=$out/results.tsv
printf 'round\tkernel\tmetric\tvalue\n' > "$res"
export TOP BUILD
t0=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
	# Even rounds go the other way round, so that no kernel always boots
	# right after the same neighbour or first in its round.
	order=("${kernels[@]}")
	if [ $((r % 2)) -eq 0 ]; then
		order=()
		for ((j = ${#kernels[@]} - 1; j >= 0; j--)); do order+=("${kernels[$j]}"); done
	fi
	for k in "${order[@]}"; do
		id=${k%%:*}
		log=$out/logs/$id-$r.log
		(
			"$TOP/scripts/bench-boot.sh" "$out/$id.bzImage" "$log" "$BENCH" "$r" "$id" "$res" >/dev/null
			echo "bisect-bench: round $r/$ROUNDS kernel $id done, $(( $(date +%s) - t0 ))s elapsed"
		) &
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	done
done
wait
python3 "$TOP/benchmarks/bisect_stats.py" "$res" --out "$out" ${ICOUNT:+--deterministic} \
	--command "make bisect-bench BENCH=$BENCH ROUNDS=$ROUNDS${ICOUNT:+ ICOUNT=1}${BISECT_FROM:+ BISECT_FROM=$BISECT_FROM}${BISECT_BASE:+ BISECT_BASE=$BISECT_BASE}${BISECT_REUSE:+ BISECT_REUSE=$BISECT_REUSE}${words:+ $words}${BENCH_CMDLINE:+ BENCH_CMDLINE='$BENCH_CMDLINE'}" || exit 1
echo "bisect-bench: results in $out"
