#!/bin/bash
# Host-side self-test of scripts/qemu-run.sh's check of SMP (no kernel, no
# QEMU: a stand-in qemu-system-x86_64 first in PATH records that it was
# started): a value that is not a number of vCPUs from 1 to 99 stops the
# boot with exit status 2 and a message naming SMP before QEMU starts, and
# so does --check-smp, which make bench, bisect-bench, tests/run.sh and
# scripts/tcg-hostprof.sh call before their first boot; a good value
# reaches QEMU as -smp N, no value as -smp 2; ICOUNT=1 boots one vCPU
# whatever SMP says.  QEMU_NO_THP=1 starts QEMU with transparent huge
# pages disabled for it (the stand-in reads THP_enabled in its own
# /proc/self/status), 0 or no value leaves it as the runner's own, and any
# other value stops the boot with exit status 2 before QEMU starts.
# Prints KTAP.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$(dirname "$here")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cat > "$tmp/bin/qemu-system-x86_64" <<'EOS'
#!/bin/bash
# stand-in: record the -smp argument and whether THP is enabled for it
while [ $# -gt 0 ]; do [ "$1" = -smp ] && echo "smp=$2" > "$QEMU_STUB_OUT"; shift; done
awk '$1 == "THP_enabled:" { print $2 }' /proc/self/status > "$QEMU_STUB_OUT.thp"
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
# QEMU_NO_THP  expected: rc, THP_enabled seen by QEMU (- for not started)
own_thp=$(awk '$1 == "THP_enabled:" { print $2 }' /proc/self/status)
thp_cases=(
	"unset 0 ${own_thp:-?}"
	"0 0 ${own_thp:-?}"
	"1 0 0"
	"2 2 -"
	"yes 2 -"
)
echo "KTAP version 1"
echo "1..$((${#cases[@]} + ${#thp_cases[@]}))"
n=0
for c in "${cases[@]}"; do
	read -r smp icount how want_rc want_err want_smp <<< "$c"
	n=$((n + 1))
	rm -f "$tmp/seen"
	[ "$icount" = - ] && icount=
	[ "$smp" = unset ] && smp=
	if [ "$how" = check ]; then
		args=(--check-smp)
	else
		args=("$tmp/bzImage" "$tmp/log" 256 20 none.sh)
	fi
	err=$(PATH=$tmp/bin:$PATH QEMU_STUB_OUT=$tmp/seen SMP=$smp ICOUNT=$icount \
		INITRD=$tmp/initrd BUILD=$tmp "$top/scripts/qemu-run.sh" "${args[@]}" 2>&1 >/dev/null)
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
for c in "${thp_cases[@]}"; do
	read -r thp want_rc want_thp <<< "$c"
	n=$((n + 1))
	rm -f "$tmp/seen" "$tmp/seen.thp"
	[ "$thp" = unset ] && thp=
	err=$(PATH=$tmp/bin:$PATH QEMU_STUB_OUT=$tmp/seen QEMU_NO_THP=$thp \
		INITRD=$tmp/initrd BUILD=$tmp "$top/scripts/qemu-run.sh" \
		"$tmp/bzImage" "$tmp/log" 256 20 none.sh 2>&1 >/dev/null)
	rc=$?
	seen=-
	[ -f "$tmp/seen.thp" ] && seen=$(cat "$tmp/seen.thp")
	ok=1
	[ "$rc" = "$want_rc" ] || ok=0
	[ "$seen" = "$want_thp" ] || ok=0
	if [ "$want_rc" = 2 ]; then
		case $err in *QEMU_NO_THP*) ;; *) ok=0 ;; esac
	fi
	desc="QEMU_NO_THP=${thp:-(unset)}: exit $rc, THP_enabled in QEMU $seen"
	if [ $ok = 1 ]; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc (expected exit $want_rc, THP_enabled $want_thp; stderr: $err)"
	fi
done
