#!/bin/bash
# make bisect-test: build the kernel after every patch (make bisect-build
# SAVE_KERNELS=1), then boot each and run the swap integrity test on all four
# devices, the raw integrity test on the devices that patch touches (all of
# them when it touches block/, mm/ or include/), and the synchronous-swap
# test (30-sync-swap) at every patch that touches the swap path or a
# driver's synchronous capability: mm/page_io.c, mm/swapfile.c,
# mm/swap_state.c, mm/memory.c, include/linux/swap.h, the backing-dev
# headers, or any line with BDI_CAP_SYNC, SWP_SYNCHRONOUS_IO or rw_page.
set -uo pipefail
: "${TOP:?}" "${BUILD:?}"
# BISECT_TEST_DRY=1 only lists what each patch would run.
if [ "${BISECT_TEST_DRY:-0}" != 1 ]; then
	SAVE_KERNELS=1 BISECT_VARIANTS=0 "$TOP/scripts/bisect-build.sh" || exit 1
	make --no-print-directory -C "$TOP" initramfs || exit 1
fi
export TOP BUILD
fail=0 i=0
while read -r p; do
	i=$((i + 1))
	k=$BUILD/kernels/$(printf %02d "$i")-${p%.patch}.bzImage
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
	[ "${BISECT_TEST_DRY:-0}" = 1 ] && { echo "    would run: ${tests[*]}"; continue; }
	if ! KLABEL="bisect-$(printf %02d "$i")" TEST_CMDLINE="syncio.raw_devs=${devs%,}" \
		"$TOP/tests/run.sh" "$k" "${tests[@]}"; then
		echo "bisect-test: FAIL at patch $i ($p)"
		fail=$((fail + 1))
	fi
done < <("$TOP/scripts/series-list.sh")
echo "bisect-test: $i patches, $fail failing"
[ $fail -eq 0 ]
