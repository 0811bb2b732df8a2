#!/bin/bash
# vm: mem=2048 timeout=1200
# Concurrency on 2 vCPUs: two swapverify processes swap through one cgroup
# (zram and pmem swap devices at equal priority, so both carry pages) while
# fio writes and verifies on brd and on btt at the same time.  Every page and
# every block must verify, and swap must really have happened.
. /tests/lib/common.sh
ktap_plan 4
zram=$(zram_setup 256M lzo)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
brd=$(brd_dev 1)
cg=$(memcg_setup conc 40M)
mkswap "$zram" >/dev/null && swapon -p 5 "$zram"
mkswap "$pmem" >/dev/null && swapon -p 5 "$pmem"
pin0=$(vmstat pswpin) pout0=$(vmstat pswpout)

fio_verify() {	# fio_verify DEV OUTFILE
	fio --thread --name=conc --filename="$1" --direct=1 --ioengine=psync --rw=randwrite \
		--bs=4k --size=24M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randseed=77 --loops=2 > "$2" 2>&1
}

c1=""
injecting conc-corrupt && c1="-c 500"
# shellcheck disable=SC2086
run_in_cg "$cg" swapverify -s 64 -n 30000 -S 1 $c1 > /tmp/sv1.out 2>&1 & p1=$!
run_in_cg "$cg" swapverify -s 64 -n 30000 -S 2 > /tmp/sv2.out 2>&1 & p2=$!
fio_verify "$brd" /tmp/fio1.out & p3=$!
fio_verify "$btt" /tmp/fio2.out & p4=$!
wait $p1; r1=$?
wait $p2; r2=$?
wait $p3; r3=$?
wait $p4; r4=$?
pin=$(( $(vmstat pswpin) - pin0 )) pout=$(( $(vmstat pswpout) - pout0 ))
diag "pswpin $pin pswpout $pout; zram $(awk '{print $3}' /sys/block/"${zram#/dev/}"/mm_stat) bytes used"
swapoff "$zram"; swapoff "$pmem"

for i in 1 2; do
	eval rc=\$r$i
	out=$(cat /tmp/sv$i.out)
	v=$(sed -n 's/^pages_verified=//p' <<< "$out")
	if [ "$rc" -eq 0 ] && [ "$pin" -ge 2048 ] && [ "$pout" -ge 2048 ]; then
		ktap_ok "swapper $i: $v page checks under concurrent swap"
	else
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "swapper $i: rc=$rc, pswpin $pin, pswpout $pout"
	fi
done
for i in 1 2; do
	eval rc=\$r$((i + 2))
	dev=$brd; [ $i = 2 ] && dev=$btt
	if [ "$rc" -eq 0 ]; then
		ktap_ok "fio verify on $dev: 2 x 24 MiB random 4k writes verified during swap"
	else
		grep -iE 'verify|error|bad' /tmp/fio$i.out | head -5 | sed 's/^/#   /'
		ktap_fail "fio verify on $dev (rc=$rc)"
	fi
done
ktap_done
