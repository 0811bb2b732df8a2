#!/bin/bash
# Host-side self-test of scripts/qemu-run.sh's check of SMP (no kernel, no
# QEMU: a stand-in qemu-system-x86_64 first in PATH records that it was
# started): a value that is not a number of vCPUs from 1 to 99 stops the
# boot with exit status 2 and a message naming SMP before QEMU starts, and
# so do --check-smp, which tests/run.sh calls before its first boot, and
# --env-words, which make bench, bisect-bench and scripts/tcg-hostprof.sh
# call; a good value reaches QEMU as -smp N, no value as -smp 2; ICOUNT=1
# boots one vCPU whatever SMP says.  QEMU_NO_THP=1 starts QEMU with
# transparent huge pages disabled for it (the stand-in asks
# prctl(PR_GET_THP_DISABLE)) and the same arguments as without it; 0 or
# no value leaves THP as the runner's own; any other value stops the
# boot, and --check-smp, with exit status 2 before QEMU starts.  The THP
# cases are skipped where the runner itself already runs with THP
# disabled (they could not tell).
# --env-words prints the words a report's command line repeats (SMP=N when
# SMP is set and ICOUNT is not, QEMU_NO_THP=1) and refuses the same bad
# values with exit status 2 and nothing on stdout.  Prints KTAP.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$(dirname "$here")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cat > "$tmp/bin/qemu-system-x86_64" <<'EOS'
#!/bin/bash
# stand-in: record its arguments, the -smp one, and whether THP is disabled
printf '%q ' "$@" > "$QEMU_STUB_OUT.args"
while [ $# -gt 0 ]; do [ "$1" = -smp ] && echo "smp=$2" > "$QEMU_STUB_OUT"; shift; done
python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(42, 0, 0, 0, 0))' > "$QEMU_STUB_OUT.thp"
exit 0
EOS
chmod +x "$tmp/bin/qemu-system-x86_64"
: > "$tmp/bzImage" && : > "$tmp/initrd"

# SMP ICOUNT args  expected: rc, stderr word, -smp seen (- for QEMU not started)
cases=(
	"0 - boot 2 SMP=0 -"
	"abc - boot 2 SMP=abc -"
	"100 - boot 2 SMP=100 -"
	"-1 - boot 2 SMP=-1 -"
	"0 - check 2 SMP=0 -"
	"07 - check 2 SMP=07 -"
	"1 - boot 0 - 1"
	"2 - boot 0 - 2"
	"99 - check 0 - -"
	"0 1 boot 0 - 1"
	"0 1 check 0 - -"
	"unset - boot 0 - 2"
)
# QEMU_NO_THP how  expected: rc, THP disabled in QEMU (1/0; - not started)
own_thp=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(42, 0, 0, 0, 0))')
thp_cases=(
	"unset boot 0 0"
	"0 boot 0 0"
	"1 boot 0 1"
	"2 boot 2 -"
	"yes boot 2 -"
	"yes check 2 -"
	"1 check 0 -"
)
# SMP ICOUNT QEMU_NO_THP  expected: rc, then the words (none: nothing)
words_cases=(
	"unset - 0 0"
	"4 - 0 0 SMP=4"
	"4 1 0 0"
	"4 - 1 0 SMP=4 QEMU_NO_THP=1"
	"unset 1 1 0 QEMU_NO_THP=1"
	"0 1 0 0"
	"0 - 0 2"
	"unset - yes 2"
)
# run_qemu_run HOW [env OPTIONS/ASSIGNMENTS...]: scripts/qemu-run.sh with
# the stand-in QEMU (HOW: boot, or check for --check-smp); its stderr on
# stdout, its exit status as ours
run_qemu_run() {
	local how=$1 args=("$tmp/bzImage" "$tmp/log" 256 20 none.sh)
	shift
	[ "$how" = check ] && args=(--check-smp)
	# shellcheck disable=SC2069	# stderr to our stdout, its stdout dropped
	env "$@" PATH="$tmp/bin:$PATH" QEMU_STUB_OUT="$tmp/seen" \
		INITRD="$tmp/initrd" BUILD="$tmp" \
		"$top/scripts/qemu-run.sh" "${args[@]}" 2>&1 >/dev/null
}
echo "KTAP version 1"
echo "1..$((${#cases[@]} + ${#thp_cases[@]} + ${#words_cases[@]}))"
n=0
for c in "${cases[@]}"; do
	read -r smp icount how want_rc want_err want_smp <<< "$c"
	n=$((n + 1))
	rm -f "$tmp/seen"
	[ "$icount" = - ] && icount=
	[ "$smp" = unset ] && smp=
	err=$(run_qemu_run "$how" SMP="$smp" ICOUNT="$icount" QEMU_NO_THP=)
	rc=$?
	seen=-
	[ -f "$tmp/seen" ] && seen=$(sed 's/^smp=//' "$tmp/seen")
	ok=1
	[ "$rc" = "$want_rc" ] || ok=0
	[ "$seen" = "$want_smp" ] || ok=0
	if [ "$want_err" != - ]; then
		case $err in *"$want_err"*) ;; *) ok=0 ;; esac
	fi
	desc="SMP=${smp:-(unset)}${icount:+ ICOUNT=1} $how: exit $rc, QEMU -smp $seen"
	if [ $ok = 1 ]; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc (expected exit $want_rc, -smp $want_smp, message ${want_err}; stderr: $err)"
	fi
done
# the arguments QEMU gets without the knob, to compare with QEMU_NO_THP=1
rm -f "$tmp/seen.args"
run_qemu_run boot SMP= ICOUNT= QEMU_NO_THP= >/dev/null
plain_args=$(cat "$tmp/seen.args" 2>/dev/null)
for c in "${thp_cases[@]}"; do
	read -r thp how want_rc want_thp <<< "$c"
	n=$((n + 1))
	desc="QEMU_NO_THP=$thp $how"
	if [ "$own_thp" != 0 ] && [ "$want_thp" != - ]; then
		echo "ok $n $desc # SKIP this runner already has THP disabled (prctl: ${own_thp:-none})"
		continue
	fi
	rm -f "$tmp/seen" "$tmp/seen.thp" "$tmp/seen.args"
	knob=(-u QEMU_NO_THP)
	[ "$thp" = unset ] || knob=("QEMU_NO_THP=$thp")
	err=$(run_qemu_run "$how" "${knob[@]}" SMP= ICOUNT=)
	rc=$?
	seen=-
	[ -f "$tmp/seen.thp" ] && seen=$(cat "$tmp/seen.thp")
	ok=1
	[ "$rc" = "$want_rc" ] || ok=0
	[ "$seen" = "$want_thp" ] || ok=0
	if [ "$want_rc" = 2 ]; then
		case $err in *QEMU_NO_THP*) ;; *) ok=0 ;; esac
	fi
	same=-
	if [ "$how" = boot ] && [ "$want_rc" = 0 ]; then
		same=no
		[ -n "$plain_args" ] && [ "$(cat "$tmp/seen.args" 2>/dev/null)" = "$plain_args" ] && same=yes
		[ $same = yes ] || ok=0
	fi
	desc+=": exit $rc, THP disabled in QEMU $seen, same arguments as without it $same"
	if [ $ok = 1 ]; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc (expected exit $want_rc, THP disabled $want_thp; stderr: $err)"
	fi
done
for c in "${words_cases[@]}"; do
	read -r smp icount thp want_rc want_words <<< "$c"
	n=$((n + 1))
	[ "$icount" = - ] && icount=
	smpv=(SMP="$smp")
	[ "$smp" = unset ] && { smp=''; smpv=(-u SMP); }
	out=$(env "${smpv[@]}" ICOUNT="$icount" QEMU_NO_THP="$thp" \
		"$top/scripts/qemu-run.sh" --env-words 2>/dev/null)
	rc=$?
	desc="--env-words SMP=${smp:-(unset)}${icount:+ ICOUNT=1} QEMU_NO_THP=$thp: exit $rc, words '$out'"
	if [ "$rc" = "$want_rc" ] && [ "$out" = "$want_words" ]; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc (expected exit $want_rc, words '$want_words')"
	fi
done
