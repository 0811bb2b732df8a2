#!/bin/bash
# vm: mem=2048 timeout=1200
# Swap integrity on zram (lzo), brd, pmem and btt: swapverify fills a 96 MiB
# working set with per-page unique content inside a cgroup v2 group whose
# memory.max is a third of it, does random reads and rewrites, then checks
# every page.  A device passes only if every page matches and swap really
# happened: pswpout and pswpin both moved by at least MIN_SWAP pages.
# A second run per device asks for THP (MADV_HUGEPAGE) so that huge pages
# are split or swapped whole, as the kernel decides.
. /tests/lib/common.sh
SET_MB=${SET_MB:-96}
MAX_MB=$((SET_MB / 3))
OPS=${OPS:-30000}
MIN_SWAP=${MIN_SWAP:-4096}

zram=$(zram_setup 256M lzo)
pmem=$(pmem_dev 0)
btt=$(btt_setup 1 4096)
devs=("zram:$zram" "brd:$(brd_dev 0)" "pmem:$pmem" "btt:$btt")
ktap_plan $(( ${#devs[@]} * 2 ))
cg=$(memcg_setup swaptest "${MAX_MB}M")

swap_case() {
	local name=$1 dev=$2 flags=$3 what=$4 out rc pin pout
	if [ ! -b "$dev" ]; then
		ktap_fail "$name $what: no device ($dev)"
		return
	fi
	if ! swap_on "$dev"; then
		ktap_fail "$name $what: swapon $dev failed"
		return
	fi
	# With syncio.inject=swap-corrupt one byte of one page is flipped
	# before the final verify: the test must fail.
	injecting swap-corrupt && flags+=" -c 1000"
	# shellcheck disable=SC2086
	out=$(run_in_cg "$cg" swapverify -s "$SET_MB" -n "$OPS" -w 30 -S "$KTAP_N" $flags 2>&1)
	rc=$?
	swapoff "$dev" || rc=3
	pin=$(sed -n 's/^total_pswpin=//p' <<< "$out")
	pout=$(sed -n 's/^total_pswpout=//p' <<< "$out")
	diag "$name $what: $(grep -E '^(pages_verified|mismatches|total_)' <<< "$out" | tr '\n' ' ')"
	if [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$name $what: data mismatch or error (rc=$rc)"
	elif [ "${pin:-0}" -lt "$MIN_SWAP" ] || [ "${pout:-0}" -lt "$MIN_SWAP" ]; then
		ktap_fail "$name $what: too little swap (pswpin $pin, pswpout $pout < $MIN_SWAP)"
	else
		ktap_ok "$name $what: $(sed -n 's/^pages_verified=//p' <<< "$out") page checks, pswpin $pin, pswpout $pout"
	fi
}

for d in "${devs[@]}"; do
	swap_case "${d%%:*}" "${d#*:}" "" "4k pages"
	swap_case "${d%%:*}" "${d#*:}" "-H" "THP"
done
ktap_done
