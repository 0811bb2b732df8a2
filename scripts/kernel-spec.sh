# shellcheck shell=bash
# Sourced by bench.sh and insn-profile.sh (needs TOP and BUILD).
# built_objdir base|series: build that kernel if it is not up to date and
# print its build directory (the bzImage is arch/x86/boot/bzImage in it).
built_objdir() {
	case $1 in
	base) make --no-print-directory -C "$TOP" base-kernel >&2 || return 1
	      echo "$BUILD/obj/base" ;;
	series) make --no-print-directory -C "$TOP" kernel >&2 || return 1
		echo "$BUILD/obj/series" ;;
	*) echo "built_objdir: '$1' is neither base nor series" >&2
	   return 1 ;;
	esac
}
