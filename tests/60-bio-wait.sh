#!/bin/bash
# vm: mem=2048 timeout=600
# Waiting for a bio: BLKZEROOUT (blkdiscard -z) ends in submit_bio_wait(),
# on devices that complete the bio inside submit_bio() (zram, brd, pmem,
# btt) and on devices that complete it later, from another context
# (null_blk from a softirq, loop from a workqueue).  Each device gets an
# 8 MiB random pattern, then eight ranges are zeroed one by one; the whole
# area is read back with O_DIRECT and must equal the pattern with exactly
# those ranges zeroed.
. /tests/lib/common.sh
MB=8
devs=("zram:$(zram_setup 64M lzo)" "brd:$(brd_dev 0)" "pmem:$(pmem_dev 0)"
      "btt:$(btt_setup 1 4096)" "null_blk:$(nullb_dev)" "loop:$(loop_setup 16)")
ktap_plan ${#devs[@]}
dd if=/dev/urandom of=/tmp/pattern bs=1M count=$MB 2>/dev/null

for d in "${devs[@]}"; do
	name=${d%%:*} dev=${d#*:}
	if [ ! -b "$dev" ]; then
		ktap_fail "bio-wait $name: no device"
		continue
	fi
	cp /tmp/pattern /tmp/expect
	out=$(dd if=/tmp/pattern of="$dev" bs=1M count=$MB oflag=direct conv=fsync 2>&1) || diag "$name: pattern write: $out"
	rc=0
	# Ranges of 4 KiB to 1 MiB at 4 KiB aligned offsets, some overlapping.
	for r in 0:4 12:64 100:256 300:1024 1024:128 1100:512 1536:40 2040:8; do
		off=$((${r%%:*} * 4096)) len=$((${r#*:} * 1024))
		blkdiscard -z -o "$off" -l "$len" "$dev" || { rc=1; diag "$name: blkdiscard -z -o $off -l $len failed"; }
		dd if=/dev/zero of=/tmp/expect bs=1024 seek=$((off / 1024)) count=$((len / 1024)) conv=notrunc 2>/dev/null
	done
	# syncio.inject=bio-wait-corrupt: one byte of zram's zeroed range
	# overwritten behind the test's back.
	injecting bio-wait-corrupt && [ "$name" = zram ] && printf '\377' | dd of="$dev" bs=1 seek=$((12 * 4096 + 7)) conv=notrunc 2>/dev/null && sync
	dd if="$dev" of=/tmp/got bs=1M count=$MB iflag=direct 2>/dev/null
	if ! cmp -s /tmp/got /tmp/expect; then
		diag "$name: content differs: $(cmp /tmp/got /tmp/expect 2>&1 | head -1); $(cmp -l /tmp/got /tmp/expect 2>/dev/null | wc -l) bytes, last at $(cmp -l /tmp/got /tmp/expect 2>/dev/null | tail -1)"
		rc=1
	fi
	ktap_result $rc "bio-wait $name: 8 zero-out ranges over an 8 MiB pattern read back exactly"
done
[ -n "$(losetup -a)" ] && losetup -D
ktap_done
