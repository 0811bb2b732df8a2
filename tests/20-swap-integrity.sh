#!/bin/bash
# vm: mem=2048 timeout=1200
# Swap integrity on zram (lzo), brd, pmem and btt: swapverify fills a 96 MiB
# working set with per-page unique content inside a cgroup v2 group whose
# memory.max is a third of it, does random reads and rewrites, then checks
# every page.  A device passes only if every page matches and swap really
# happened: pswpout and pswpin both moved by at least MIN_SWAP pages.
# A second run per device asks for THP (MADV_HUGEPAGE) so that huge pages
# are split or swapped whole, as the kernel decides; it fails unless huge
# pages were really allocated (thp_fault_alloc moved), and reports how many
# were swapped out whole (thp_swpout) or split (thp_swpout_fallback,
# thp_split_page).
#
# Injections (make test-inject), each aimed at one subtest:
#   swap-corrupt    one byte of one page flipped in memory (zram 4k pages)
#   swap-slot-brd   16 swap slots zeroed on the brd device itself (BLKZEROOUT)
#                   while their pages are swapped out (brd 4k pages)
#   swap-slot-pmem  the same on pmem (pmem 4k pages)
#   swap-failreq    fail_make_request fails 2% of brd's bios (brd 4k pages):
#                   a failed swap-in must not hand back data (SIGBUS)
#   swap-nolimit    no memory.max, so no swap happens (btt 4k pages)
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

thp_counters() { echo "$(vmstat thp_fault_alloc) $(vmstat thp_swpout) $(vmstat thp_swpout_fallback) $(vmstat thp_split_page)"; }

swap_case() {
	local name=$1 dev=$2 flags=$3 what=$4 out rc pin pout cgroup=$cg thp0 thp1
	if [ ! -b "$dev" ]; then
		ktap_fail "$name $what: no device ($dev)"
		return
	fi
	if ! swap_on "$dev"; then
		ktap_fail "$name $what: swapon $dev failed"
		return
	fi
	case "$INJECT:$name $what" in
	"swap-corrupt:zram 4k pages") flags+=" -c 1000" ;;
	"swap-slot-brd:brd 4k pages"|"swap-slot-pmem:pmem 4k pages") flags+=" -D $dev -C 16" ;;
	"swap-failreq:brd 4k pages") fail_requests "$dev" on ;;
	"swap-nolimit:btt 4k pages") cgroup=/sys/fs/cgroup ;;
	esac
	thp0=$(thp_counters)
	# shellcheck disable=SC2086
	out=$(run_in_cg "$cgroup" swapverify -s "$SET_MB" -n "$OPS" -w 30 -S "$KTAP_N" $flags 2>&1)
	rc=$?
	thp1=$(thp_counters)
	injecting swap-failreq && fail_requests "$dev" off
	swapoff "$dev" || rc=3
	pin=$(sed -n 's/^total_pswpin=//p' <<< "$out")
	pout=$(sed -n 's/^total_pswpout=//p' <<< "$out")
	diag "$name $what: $(grep -E '^(pages_verified|mismatches|slots_overwritten|total_)' <<< "$out" | tr '\n' ' ')"
	# thp_fault_alloc, thp_swpout, thp_swpout_fallback, thp_split_page
	read -r ta0 ts0 tf0 tp0 <<< "$thp0"
	read -r ta1 ts1 tf1 tp1 <<< "$thp1"
	local thp="THP allocated $((ta1 - ta0)), swapped whole $((ts1 - ts0)), fallback $((tf1 - tf0)), split $((tp1 - tp0))"
	[[ $flags == *-H* ]] && diag "$name $what: $thp"
	if [ $rc -eq 1 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$name $what: data mismatch ($(sed -n 's/^mismatches=//p' <<< "$out") pages)"
	elif [ $rc -gt 128 ]; then
		ktap_fail "$name $what: swapverify killed by signal $((rc - 128)) ($(kill -l $((rc - 128))))"
	elif [ $rc -ne 0 ]; then
		grep swapverify <<< "$out" | head -5 | sed 's/^/#   /'
		ktap_fail "$name $what: error (rc=$rc)"
	elif [ "${pin:-0}" -lt "$MIN_SWAP" ] || [ "${pout:-0}" -lt "$MIN_SWAP" ]; then
		ktap_fail "$name $what: too little swap (pswpin $pin, pswpout $pout < $MIN_SWAP)"
	elif [[ $flags == *-H* ]] && [ $((ta1 - ta0)) -eq 0 ]; then
		ktap_fail "$name $what: THP was requested but no huge page was allocated ($thp)"
	else
		ktap_ok "$name $what: $(sed -n 's/^pages_verified=//p' <<< "$out") page checks, pswpin $pin, pswpout $pout$([[ $flags == *-H* ]] && echo "; $thp")"
	fi
}

for d in "${devs[@]}"; do
	swap_case "${d%%:*}" "${d#*:}" "" "4k pages"
	swap_case "${d%%:*}" "${d#*:}" "-H" "THP"
done
ktap_done
