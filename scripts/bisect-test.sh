#!/bin/bash
# make bisect-test: build the kernel after every patch (make bisect-build
# SAVE_KERNELS=1), then boot each and run the swap integrity test on all four
# devices, the raw integrity test on the devices that patch touches (all of
# them when it touches block/, mm/ or include/), and the synchronous-swap
# test (30-sync-swap) at every patch that touches the swap path or a
# driver's synchronous capability: mm/page_io.c, mm/swapfile.c,
# mm/swap_state.c, mm/memory.c, include/linux/swap.h, the backing-dev
# headers, or any line with BDI_CAP_SYNC, SWP_SYNCHRONOUS_IO or rw_page, and
# the pmem blk-mq test (90-pmem-mq) from the patch that adds nd_pmem.mode on.
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
# BISECT_TEST_DRY=1 only lists what each patch would run.
# BISECT_FROM=N tests patches N.. only, BISECT_TO=M patches ..M only;
# BISECT_REUSE=1 boots the kernels a SAVE_KERNELS=1 build left in
# build/kernels instead of building them.
from=${BISECT_FROM:-1}
to=${BISECT_TO:-9999}
if [ "${BISECT_TEST_DRY:-0}" != 1 ] && [ "${BISECT_REUSE:-0}" = 1 ]; then
	make --no-print-directory -C "$TOP" initramfs || exit 1
elif [ "${BISECT_TEST_DRY:-0}" != 1 ]; then
	SAVE_KERNELS=1 BISECT_VARIANTS=0 "$TOP/scripts/bisect-build.sh" || exit 1
	make --no-print-directory -C "$TOP" initramfs || exit 1
fi
export TOP BUILD
# The first patch that adds nd_pmem.mode (pmem's blk-mq mode), if any.
mq_from=$("$TOP/scripts/series-list.sh" | grep -n . | while IFS=: read -r n q; do
	grep -q '^+.*nd_pmem\.mode' "$TOP/patches/$q" && { echo "$n"; break; }
done)
fail=0 i=0
while read -r p; do
	i=$((i + 1))
	k=$BUILD/kernels/$(printf %02d "$i")-${p%.patch}.bzImage
	[ "$i" -ge "$from" ] && [ "$i" -le "$to" ] || continue
	if [ ! -f "$k" ] || [ "$k" -ot "$TOP/patches/$p" ]; then
		echo "bisect-test: no kernel for patch $i newer than $p (make bisect-build SAVE_KERNELS=1)"
		fail=$((fail + 1))
		continue
	fi
	files=$(grep '^+++ b/' "$TOP/patches/$p" | cut -c7-)
	devs=""
	grep -q '^drivers/block/zram/' <<< "$files" && devs+="zram,"
	grep -q '^drivers/block/brd' <<< "$files" && devs+="brd,"
	grep -q '^drivers/nvdimm/pmem' <<< "$files" && devs+="pmem,"
	grep -q '^drivers/nvdimm/btt' <<< "$files" && devs+="btt,"
	grep -qE '^(block|mm|include|fs)/' <<< "$files" && devs="zram,brd,pmem,btt,null_blk,"
	echo "### bisect-test $(printf %02d "$i") $p (raw devices: ${devs:-none})"
	tests=(20-swap-integrity.sh)
	[ -n "$devs" ] && tests+=(10-raw-integrity.sh)
	if grep -qE '^(mm/(page_io|swapfile|swap_state|memory)\.c|include/linux/(swap|backing-dev[a-z-]*)\.h)$' <<< "$files" ||
	   grep -qE '^[-+].*(BDI_CAP_SYNC|SWP_SYNCHRONOUS_IO|rw_page)' "$TOP/patches/$p"; then
		tests+=(30-sync-swap.sh)
	fi
	# pmem's blk-mq mode and its DMA offload, from the patch that adds it
	[ -n "$mq_from" ] && [ "$i" -ge "$mq_from" ] && tests+=(90-pmem-mq.sh)
	[ "${BISECT_TEST_DRY:-0}" = 1 ] && { echo "    would run: ${tests[*]}"; continue; }
	if ! KLABEL="bisect-$(printf %02d "$i")" TEST_CMDLINE="syncio.raw_devs=${devs%,}" \
		"$TOP/tests/run.sh" "$k" "${tests[@]}"; then
		echo "bisect-test: FAIL at patch $i ($p)"
		fail=$((fail + 1))
	fi
done < <("$TOP/scripts/series-list.sh")
echo "bisect-test: $i patches, $fail failing"
[ $fail -eq 0 ]
