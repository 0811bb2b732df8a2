#!/bin/bash
# vm: mem=1024 timeout=300
# Nested bio-based submission: tests/modules/stackbd.ko, a bio-based device
# stacked on brd, splits every bio inside its ->submit_bio(): a clone of
# the first 4 KiB goes to brd (the level below), and the rest, in two
# halves, back to stackbd (the same level).  Those bios go through the
# lists of __submit_bio_noacct() (current->bio_list), which patches 11,
# 18, 50 and 63 of the series change.  fio writes a verify pattern through
# it with O_DIRECT (4 KiB to 1 MiB random writes) and buffered, and a
# separate fio run reads it back; the data must also be on brd at the same
# offsets.  stackbd counts what the lists promise: no ->submit_bio()
# entered from inside another of the same task, current->bio_list set in
# each, and the level below handled first, then the same level, then what
# was left from before, so that the clones of one bio reach brd in
# ascending order of their sectors.
. /tests/lib/common.sh

ko=/tests/modules/stackbd.ko
low=$(brd_dev 1)
stack=/dev/stackbd0
P=/sys/module/stackbd/parameters
subtests=("stacked O_DIRECT" "stacked buffered" "same data on $low"
	  "bio lists, no nested ->submit_bio" "bio lists, lower level first")
ktap_plan ${#subtests[@]}

if [ ! -f $ko ]; then
	for t in "${subtests[@]}"; do
		ktap_skip "$t: no $ko (the runner builds it only for a kernel with its object directory)"
	done
	ktap_done
fi

args=()
injecting stack-nested && args=(recurse=1)
injecting stack-lower-nested && args=(recurse=2)
injecting stack-unordered && args=(hold=1)
reports0=$(kernel_reports)
if ! out=$(insmod $ko lower="$low" split_kb=4 "${args[@]}" 2>&1) || [ ! -b $stack ]; then
	diag "insmod failed: $out"
	dmesg | tail -20 | sed 's/^/# /'
	for t in "${subtests[@]}"; do
		ktap_fail "$t: no $stack"
	done
	ktap_done
fi

# fio_rw ARGS...: write the verify pattern, then read it back in a
# separate run; prints nothing, or a reason and returns 1.
fixed=(--randrepeat=1 --randseed=4243 --verify_state_save=0)
fio_rw() {
	local out
	if ! out=$(fio --thread --name=w --filename=$stack --rw=randwrite \
			--verify=crc32c --do_verify=0 "${fixed[@]}" "$@" 2>&1); then
		echo "fio write failed: $(grep -iE 'error|err=' <<< "$out" | head -3)"
		return 1
	fi
	if injecting stack-corrupt && [[ " $* " == *" --direct=1 "* ]]; then
		# bad blocks under stackbd, behind its back
		for blk in 256 2048 8192; do
			dd if=/dev/urandom of="$low" bs=4k seek=$blk count=1 \
				conv=notrunc oflag=direct 2>/dev/null
		done
	fi
	[[ " $* " == *" --direct=1 "* ]] || echo 3 > /proc/sys/vm/drop_caches
	if ! out=$(fio --thread --name=w --filename=$stack --rw=randwrite \
			--verify=crc32c --verify_only "${fixed[@]}" "$@" 2>&1) ||
	   grep -qiE 'err= *[1-9]' <<< "$out"; then
		echo "fio verify found bad data: $(grep -iE 'verify|bad|crc' <<< "$out" | head -3 | tr '\n' ' ')"
		return 1
	fi
}

if why=$(fio_rw --direct=1 --ioengine=libaio --iodepth=8 --bsrange=4k-1m \
		--offset=0 --size=48M); then
	ktap_ok "stacked O_DIRECT: 4k-1m random writes verified"
else
	ktap_fail "stacked O_DIRECT: $why"
fi
if why=$(fio_rw --direct=0 --bs=64k --offset=64M --size=32M --end_fsync=1); then
	ktap_ok "stacked buffered: 64k random writes verified after drop_caches"
else
	ktap_fail "stacked buffered: $why"
fi

# sum96 DEV: the sha256 of DEV's first 96 MiB, or "short" if dd fails
sum96() {
	local sum
	sum=$(set -o pipefail; dd if="$1" bs=1M count=96 iflag=direct 2>/dev/null |
		head -c $((96 << 20)) | sha256sum) && echo "$sum" || echo short
}
a=$(sum96 $stack) b=$(sum96 "$low")
if [ "$a" = short ] || [ "$b" = short ]; then
	ktap_fail "same data on $low: cannot read 96 MiB (stackbd: $a, brd: $b)"
elif [ "$a" = "$b" ]; then
	ktap_ok "same data on $low: the first 96 MiB match"
else
	ktap_fail "same data on $low: the first 96 MiB differ"
fi

n=$(cat $P/nested) u=$(cat $P/unlisted) o=$(cat $P/unordered)
x=$(cat $P/untracked) r=$(cat $P/rescued) s=$(cat $P/splits) c=$(cat $P/clones)
diag "stackbd: nested=$n unlisted=$u unordered=$o untracked=$x rescued=$r splits=$s clones=$c"
if [ "$s" -eq 0 ] || [ "$c" -le "$s" ] || [ "$x" != 0 ]; then
	# the lists were not exercised, or not all of it was seen
	ktap_fail "bio lists, no nested ->submit_bio: not exercised (splits=$s clones=$c untracked=$x)"
	ktap_fail "bio lists, lower level first: not exercised (splits=$s clones=$c untracked=$x)"
elif [ "$r" != 0 ]; then
	# a bio_set's rescuer submitted some: per-task order does not apply
	ktap_skip "bio lists, no nested ->submit_bio: $r bios went through a rescuer"
	ktap_skip "bio lists, lower level first: $r bios went through a rescuer"
else
	if [ "$n" = 0 ] && [ "$u" = 0 ]; then
		ktap_ok "bio lists, no nested ->submit_bio: $s splits, $c clones, none nested, current->bio_list set in each"
	else
		ktap_fail "bio lists, no nested ->submit_bio: nested=$n unlisted=$u"
	fi
	if [ "$o" = 0 ]; then
		ktap_ok "bio lists, lower level first: each clone for $low done before the next stackbd ->submit_bio, and in sector order"
	else
		ktap_fail "bio lists, lower level first: unordered=$o"
	fi
fi

rmmod stackbd || diag "rmmod stackbd failed"
reports=$(( $(kernel_reports) - reports0 ))
[ "$reports" -eq 0 ] || { diag "kernel reports: $reports"; dmesg | tail -40 | sed 's/^/# /'; }
ktap_done
