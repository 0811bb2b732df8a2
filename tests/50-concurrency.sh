#!/bin/bash
# vm: mem=2048 timeout=1200
# Concurrency on 2 vCPUs: two swapverify processes swap through one cgroup
# (zram and pmem swap devices at equal priority, so both carry pages) while
# fio writes and verifies on brd and on btt at the same time.  Every page and
# every block must verify, and swap must really have happened on each of
# the two swap devices (the peak of its "Used" column in /proc/swaps,
# sampled every 0.2 s, at least MIN_USED_KB; the global pswpin and pswpout
# at least 2048 pages).
#
# Injections (make test-inject):
#   conc-corrupt      one page of swapper 1 flipped in memory ("swapper 1")
#   conc-fio-corrupt  random 4 KiB blocks of btt overwritten behind fio's
#                     back while it runs ("fio verify on btt")
#   conc-noswapon     pmem's swapon is skipped: both swapper subtests must
#                     fail, since pmem carried no page
. /tests/lib/common.sh
MIN_USED_KB=${MIN_USED_KB:-4096}
ktap_plan 4
zram=$(zram_setup 256M lzo)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
brd=$(brd_dev 1)
cg=$(memcg_setup conc 40M)
swapon_ok=1
mkswap "$zram" >/dev/null && swapon -p 5 "$zram" || { swapon_ok=0; diag "swapon $zram failed"; }
if injecting conc-noswapon; then
	swapon_ok=0
else
	mkswap "$pmem" >/dev/null && swapon -p 5 "$pmem" || { swapon_ok=0; diag "swapon $pmem failed"; }
fi
pin0=$(vmstat pswpin) pout0=$(vmstat pswpout)
# used_kb DEV: the "Used" column of DEV in /proc/swaps (KiB), 0 if absent.
used_kb() { awk -v d="$1" '$1 == d { u = $4 } END { print u + 0 }' /proc/swaps; }

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
if injecting conc-fio-corrupt; then
	(while kill -0 $p4 2>/dev/null; do
		dd if=/dev/urandom of="$btt" bs=4k count=1 seek=$((RANDOM % 6144)) oflag=direct 2>/dev/null
		sleep 0.1
	done) &
fi
peak_zram=0 peak_pmem=0
while kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null; do
	u=$(used_kb "$zram"); [ "$u" -gt $peak_zram ] && peak_zram=$u
	u=$(used_kb "$pmem"); [ "$u" -gt $peak_pmem ] && peak_pmem=$u
	sleep 0.2
done
wait $p1; r1=$?
wait $p2; r2=$?
wait $p3; r3=$?
wait $p4; r4=$?
pin=$(( $(vmstat pswpin) - pin0 )) pout=$(( $(vmstat pswpout) - pout0 ))
diag "pswpin $pin pswpout $pout; peak swap used: zram $peak_zram KiB, pmem $peak_pmem KiB"
swapoff "$zram"; swapoff "$pmem" 2>/dev/null

for i in 1 2; do
	eval rc=\$r$i
	out=$(cat /tmp/sv$i.out)
	v=$(sed -n 's/^pages_verified=//p' <<< "$out")
	if [ "$rc" -eq 0 ] && [ $swapon_ok = 1 ] && [ "$pin" -ge 2048 ] && [ "$pout" -ge 2048 ] &&
	   [ $peak_zram -ge "$MIN_USED_KB" ] && [ $peak_pmem -ge "$MIN_USED_KB" ]; then
		ktap_ok "swapper $i: $v page checks under concurrent swap on zram ($peak_zram KiB peak) and pmem ($peak_pmem KiB peak)"
	else
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "swapper $i: rc=$rc, swapon ok=$swapon_ok, pswpin $pin, pswpout $pout, peak used zram $peak_zram KiB pmem $peak_pmem KiB (need $MIN_USED_KB each)"
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
