#!/bin/bash
# Does a function compile to the same code in two kernel builds?
# usage: scripts/same-code.sh OBJDIR_A OBJDIR_B FILE.o FUNCTION...
# e.g.   scripts/same-code.sh build/obj/at-25 build/obj/series drivers/nvdimm/pmem.o pmem_submit_bio
# Compares objdump -dr of each FUNCTION in FILE.o of both directories with
# the addresses taken out: the instructions, and the symbol of every
# relocation (call and jump targets, data), must be the same.  The label
# objdump puts on an unrelocated branch out of the function (a tail call
# shown against whatever symbol lies at offset 0) is dropped, since its
# relocation line names the real target.  Prints one line per function
# and exits 1 if any differs.
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,3s/^# //p' "$0" >&2; exit 2; }
a=$1 b=$2 obj=$3
shift 3
dump() {	# dump OBJDIR FUNCTION
	objdump -dr --no-show-raw-insn "$1/$obj" | awk -v f="<$2>:" '
		$2 == f { p = 1; next }
		p && /^$/ { exit }
		p' | sed -E -e 's/^[[:space:]]*[0-9a-f]+:[[:space:]]*//' \
		-e 's/[0-9a-f]+ <[^>]*>$//' -e 's/[[:space:]]+$//'
}
rc=0
for f in "$@"; do
	da=$(dump "$a" "$f") db=$(dump "$b" "$f")
	if [ -z "$da" ] || [ -z "$db" ]; then
		echo "same-code: $f: not found in $a/$obj or $b/$obj"
		rc=1
	elif [ "$da" = "$db" ]; then
		echo "same-code: $f: identical ($(grep -vc 'R_X86' <<< "$da") instructions)"
	else
		echo "same-code: $f: DIFFERENT"
		diff <(echo "$da") <(echo "$db") | head -20
		rc=1
	fi
done
exit $rc
