#!/bin/bash
# vm: mem=2048 timeout=900
# Raw data integrity: fio writes a crc32c verify pattern with O_DIRECT, then
# a second, separate fio run (--verify_only) reads it back from the device
# and checks every block.  zram (lzo), brd, pmem, btt (4096 B sectors, sysfs
# setup without ndctl) and null_blk (memory backed, 512 B blocks).
# Sequential and random, 4 KiB and 64 KiB, plus 512 B and 2 KiB where the
# device's logical block size allows.
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
ktap_plan ${#cases[@]}

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
	local out
	if ! out=$(fio --thread "${common[@]}" --do_verify=0 2>&1); then
		ktap_fail "$name $rw bs=$bs: fio write failed"
		echo "$out" | sed 's/^/#   /' | tail -20
		return
	fi
	if injecting raw-overwrite && [ "$name $rw $bs" = "zram write 4k" ]; then
		# Overwrite 4 KiB in the middle of what fio wrote (this case only:
		# make test-inject requires every other case to pass).
		dd if=/dev/urandom of="$dev" bs=4096 seek=256 count=1 oflag=direct 2>/dev/null
	fi
	if ! out=$(fio --thread "${common[@]}" --verify_only 2>&1); then
		ktap_fail "$name $rw bs=$bs: fio verify found bad data"
		echo "$out" | grep -iE 'verify|bad|crc|error' | head -10 | sed 's/^/#   /'
		return
	fi
	if grep -q 'verify' <<< "$out" && grep -qiE 'err= *[1-9]' <<< "$out"; then
		ktap_fail "$name $rw bs=$bs: fio reported errors"
		return
	fi
	ktap_ok "$name $rw bs=$bs: $size written, read back and verified (crc32c)"
}

for c in "${cases[@]}"; do
	# shellcheck disable=SC2086
	verify_case $c
done
ktap_done
