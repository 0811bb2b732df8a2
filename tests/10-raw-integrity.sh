#!/bin/bash
# vm: mem=2048 timeout=900
# Raw data integrity: fio writes a crc32c verify pattern with O_DIRECT, then
# a second, separate fio run (--verify_only) reads it back from the device
# and checks every block.  zram (lzo), brd, pmem, btt (4096 B sectors, sysfs
# setup without ndctl) and null_blk (memory backed, 512 B blocks).
# Sequential and random, 4 KiB and 64 KiB, plus 512 B and 2 KiB where the
# device's logical block size allows.  Then a partition on a bio-based disk
# (pmem) and on a blk-mq one (loop over a tmpfs file): an MBR whose one
# partition starts at 1 MiB, fio verify on the partition, and the
# partition's data compared with the whole disk's at 1 MiB, the sectors
# before it unchanged.
. /tests/lib/common.sh
SIZE=${SIZE:-8M}

# syncio.raw_devs=zram,brd on the kernel command line limits the devices
# (make bisect-test passes the devices a patch touches).
only=$(sed -n 's/.*syncio\.raw_devs=\([^ ]*\).*/\1/p' /proc/cmdline)
zram=$(zram_setup 256M lzo)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
devs=()
for d in "zram:$zram" "brd:$(brd_dev 0)" "pmem:$pmem" "btt:$btt" "null_blk:$(nullb_dev)"; do
	[ -z "$only" ] || [[ ",$only," == *",${d%%:*},"* ]] && devs+=("$d")
done

cases=()
for d in "${devs[@]}"; do
	name=${d%%:*} dev=${d#*:}
	for rw in write randwrite; do
		for bs in 512 2k 4k 64k; do
			cases+=("$name $dev $rw $bs")
		done
	done
done
parts=()
for d in "${devs[@]}"; do
	[ "${d%%:*}" = pmem ] && parts=(pmem loop)
done
ktap_plan $((${#cases[@]} + ${#parts[@]}))

# fio_write LABEL FIO_ARGS...: fio writes its verify pattern; on failure a
# "not ok LABEL: ..." and status 1.
fio_write() {
	local label=$1 out
	shift
	if ! out=$(fio --thread "$@" --do_verify=0 2>&1); then
		ktap_fail "$label: fio write failed"
		echo "$out" | sed 's/^/#   /' | tail -20
		return 1
	fi
}

# fio_verify LABEL FIO_ARGS...: a separate fio run reads the pattern back
# and checks every block; on bad data or any fio error a "not ok LABEL: ..."
# and status 1.
fio_verify() {
	local label=$1 out
	shift
	if ! out=$(fio --thread "$@" --verify_only 2>&1); then
		ktap_fail "$label: fio verify found bad data"
		echo "$out" | grep -iE 'verify|bad|crc|error' | head -10 | sed 's/^/#   /'
		return 1
	fi
	if grep -qiE 'err= *[1-9]' <<< "$out"; then
		ktap_fail "$label: fio reported errors"
		return 1
	fi
}

verify_case() {
	local name=$1 dev=$2 rw=$3 bs=$4 lb bsb
	case $bs in 512) bsb=512 ;; 2k) bsb=2048 ;; 4k) bsb=4096 ;; 64k) bsb=65536 ;; esac
	if [ ! -b "$dev" ]; then
		ktap_fail "$name $rw bs=$bs: no device ($dev)"
		return
	fi
	lb=$(lbs "$dev")
	if [ "$bsb" -lt "$lb" ]; then
		ktap_skip "$name $rw bs=$bs: logical block size is $lb"
		return
	fi
	# Sub-page cases write less: they are slow under TCG.
	local size=$SIZE
	[ "$bsb" -lt 4096 ] && size=2M
	local common=(--name=v --filename="$dev" --direct=1 --ioengine=psync
		--rw="$rw" --bs="$bs" --size="$size" --verify=crc32c
		--randrepeat=1 --randseed=$((4242 + KTAP_N)) --verify_state_save=0)
	# Each case has its own seed, and fio's verify header holds seed,
	# offset and length: data left by an earlier case (or zeroes) cannot
	# pass for this case's write.
	fio_write "$name $rw bs=$bs" "${common[@]}" || return
	if injecting raw-overwrite && [ "$name $rw $bs" = "zram write 4k" ]; then
		# Overwrite 4 KiB in the middle of what fio wrote (this case only:
		# make test-inject requires every other case to pass).
		dd if=/dev/urandom of="$dev" bs=4096 seek=256 count=1 oflag=direct 2>/dev/null
	fi
	fio_verify "$name $rw bs=$bs" "${common[@]}" || return
	ktap_ok "$name $rw bs=$bs: $size written, read back and verified (crc32c)"
}

for c in "${cases[@]}"; do
	# shellcheck disable=SC2086
	verify_case $c
done

# le32 N: N as four little-endian bytes, in printf escapes
le32() {
	printf '\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255))
}

# part_case NAME DISK: one Linux partition at 1 MiB (sector 2048), 16 MiB.
part_case() {
	local name=$1 disk=$2 part start=2048 nr=32768 mbr=/tmp/mbr.bin
	if [ ! -b "$disk" ]; then
		ktap_fail "$name partition: no disk ($disk)"
		return
	fi
	# The first MiB is zeroed, then the MBR goes into its first sector.
	dd if=/dev/zero of="$disk" bs=1M count=1 oflag=direct 2>/dev/null
	{
		dd if=/dev/zero bs=446 count=1 2>/dev/null
		# shellcheck disable=SC2059
		printf "\\x00\\xfe\\xff\\xff\\x83\\xfe\\xff\\xff$(le32 $start)$(le32 $nr)"
		dd if=/dev/zero bs=48 count=1 2>/dev/null
		printf '\x55\xaa'
	} > $mbr
	dd if=$mbr of="$disk" bs=512 count=1 conv=notrunc oflag=direct 2>/dev/null
	blockdev --rereadpt "$disk"
	case $disk in *[0-9]) part=${disk}p1 ;; *) part=${disk}1 ;; esac
	local _
	for _ in $(seq 100); do
		[ -b "$part" ] && break
		sleep 0.1
	done
	if [ ! -b "$part" ]; then
		ktap_fail "$name partition: $part did not appear"
		return
	fi
	if [ "$(cat "/sys/class/block/${part#/dev/}/start")" != $start ]; then
		ktap_fail "$name partition: $part does not start at sector $start"
		return
	fi
	local common=(--name=p --filename="$part" --direct=1 --ioengine=psync
		--rw=randwrite --bs=4k --size=8M --verify=crc32c --randrepeat=1
		--randseed=4343 --verify_state_save=0)
	fio_write "$name partition" "${common[@]}" || return
	if injecting raw-part-overwrite && [ "$name" = pmem ]; then
		# Through the whole disk, into the partition's data.
		dd if=/dev/urandom of="$disk" bs=4096 seek=$((start / 8 + 100)) \
			count=1 oflag=direct 2>/dev/null
	fi
	fio_verify "$name partition" "${common[@]}" || return
	local a b
	a=$(dd if="$part" bs=64k count=128 iflag=direct 2>/dev/null | md5sum)
	b=$(dd if="$disk" bs=64k skip=16 count=128 iflag=direct 2>/dev/null | md5sum)
	if [ "$a" != "$b" ]; then
		ktap_fail "$name partition: its data is not at sector $start of $disk"
		return
	fi
	a=$(dd if="$disk" bs=512 skip=1 count=$((start - 1)) iflag=direct 2>/dev/null | md5sum)
	b=$(dd if=/dev/zero bs=512 count=$((start - 1)) 2>/dev/null | md5sum)
	if [ "$a" != "$b" ]; then
		ktap_fail "$name partition: sectors before it were written"
		return
	fi
	dd if=/dev/zero of="$disk" bs=512 count=1 oflag=direct 2>/dev/null
	blockdev --rereadpt "$disk"
	ktap_ok "$name partition: 8M written at sector $start of $disk through $part, read back and verified (crc32c), found at that offset of the disk"
}

for name in "${parts[@]}"; do
	case $name in
	pmem) part_case pmem "$pmem" ;;
	loop)	# -P: partition scanning, which a loop device has only on request
		dd if=/dev/zero of=/tmp/part.img bs=1M count=0 seek=32 2>/dev/null
		part_case loop "$(losetup -f --show -P /tmp/part.img)" ;;
	esac
done
ktap_done
