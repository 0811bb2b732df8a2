#!/bin/bash
# vm: mem=2048 timeout=600
# zram with a backing device: pages written back to it (writeback of idle
# pages) are read by zram_submit_bio() with a bio of its own, chained to the
# caller's and submitted to the backing device from inside zram's
# ->submit_bio: the one nested submission of the four synchronous drivers.
# Backing devices: brd (bio-based and synchronous itself) and loop (blk-mq,
# completed from a workqueue).  Each zram device gets a 16 MiB random
# pattern; every page is marked idle and written back; the pattern is read
# back with O_DIRECT and buffered reads (after dropping the page cache),
# then half of it is rewritten (freeing those blocks on the backing device)
# and all of it read back again.  Fails on any difference, or unless
# bd_stat shows pages written to and read from the backing device.
. /tests/lib/common.sh
MB=16
ktap_plan 2
dd if=/dev/urandom of=/tmp/wb-pattern bs=1M count=$MB 2>/dev/null
dd if=/dev/urandom of=/tmp/wb-second bs=1M count=$((MB / 2)) 2>/dev/null
cp /tmp/wb-pattern /tmp/wb-expect2
dd if=/tmp/wb-second of=/tmp/wb-expect2 bs=1M conv=notrunc 2>/dev/null

# bd_stat: bd_count bd_reads bd_writes, in pages
bd_field() { awk -v f="$2" '{ print $f }' "/sys/block/zram$1/bd_stat"; }

for b in brd loop; do
	case $b in
	brd) back=$(brd_dev 1) ;;
	loop) back=$(loop_setup 64) ;;
	esac
	rc=0
	id=$(cat /sys/class/zram-control/hot_add)
	z=/dev/zram$id
	if ! echo "$back" > "/sys/block/zram$id/backing_dev" ||
	   ! echo lzo > "/sys/block/zram$id/comp_algorithm" ||
	   ! echo 64M > "/sys/block/zram$id/disksize"; then
		ktap_fail "zram writeback to $b: setup"
		continue
	fi
	dd if=/tmp/wb-pattern of="$z" bs=1M oflag=direct conv=fsync 2>/dev/null || { rc=1; diag "$b: pattern write failed"; }
	echo all > "/sys/block/zram$id/idle"
	echo idle > "/sys/block/zram$id/writeback" || { rc=1; diag "$b: writeback failed"; }
	written=$(bd_field "$id" 3)
	[ "${written:-0}" -ge $((MB * 256 * 9 / 10)) ] || { rc=1; diag "$b: only ${written:-0} pages written back"; }
	# syncio.inject=zram-wb-corrupt: the backing device's copy changed
	# behind zram's back (on brd, through its block device node)
	if injecting zram-wb-corrupt; then
		dd if=/dev/urandom of="$back" bs=4096 count=1 seek=17 oflag=direct conv=notrunc 2>/dev/null
	fi
	reads0=$(bd_field "$id" 2)
	dd if="$z" of=/tmp/wb-got bs=1M count=$MB iflag=direct 2>/dev/null
	cmp -s /tmp/wb-got /tmp/wb-pattern || { rc=1; diag "$b: O_DIRECT read-back differs: $(cmp /tmp/wb-got /tmp/wb-pattern 2>&1 | head -1)"; }
	sync; echo 3 > /proc/sys/vm/drop_caches
	dd if="$z" of=/tmp/wb-got bs=64k count=$((MB * 16)) 2>/dev/null
	cmp -s /tmp/wb-got /tmp/wb-pattern || { rc=1; diag "$b: buffered read-back differs: $(cmp /tmp/wb-got /tmp/wb-pattern 2>&1 | head -1)"; }
	reads=$(( $(bd_field "$id" 2) - reads0 ))
	[ "$reads" -ge $((MB * 256)) ] || { rc=1; diag "$b: only $reads pages read from the backing device"; }
	dd if=/tmp/wb-second of="$z" bs=1M oflag=direct conv=fsync 2>/dev/null || { rc=1; diag "$b: rewrite failed"; }
	sync; echo 3 > /proc/sys/vm/drop_caches
	dd if="$z" of=/tmp/wb-got bs=1M count=$MB iflag=direct 2>/dev/null
	cmp -s /tmp/wb-got /tmp/wb-expect2 || { rc=1; diag "$b: read-back after rewrite differs: $(cmp /tmp/wb-got /tmp/wb-expect2 2>&1 | head -1)"; }
	diag "$b: $written pages written back, $reads read back from $back, $(bd_field "$id" 1) still there after the rewrite"
	zram_reset "$z"
	[ "$b" = loop ] && losetup -D
	ktap_result $rc "zram writeback to $b: 16 MiB written back, read back (O_DIRECT, buffered) and rewritten exactly"
done
ktap_done
