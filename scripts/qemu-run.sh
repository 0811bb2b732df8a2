#!/bin/bash
# Boot KERNEL with the project initramfs under QEMU (TCG) and run the named
# guest scripts (paths inside the guest, or names under /tests).
# usage: qemu-run.sh KERNEL LOG MEM_MB TIMEOUT_S SCRIPTS [EXTRA_CMDLINE]
#        qemu-run.sh --check-smp
#        qemu-run.sh --env-words
# Exit status: QEMU's, or 124 on timeout, or 2 (before QEMU starts) if SMP
# is not a number of vCPUs from 1 to 99 or QEMU_NO_THP is not 0 or 1 (or is
# 1 where it cannot work); --check-smp only makes those checks, so that
# the test runner refuses a bad value before its first boot, and
# --env-words makes them and then prints, on one line, the words a
# report's command line repeats to reproduce the run (SMP=N when SMP is
# set and ICOUNT is not, QEMU_NO_THP=1), so that make bench, bisect-bench
# and tcg-hostprof.sh refuse alike and name a run alike.  Env: SMP (2),
# ICOUNT (unset), QEMU_EXTRA (more QEMU options, split at blanks; e.g.
# -plugin for scripts/insn-profile.sh), KTAP_LOG (the file behind the
# guest's second serial port, ttyS1: tests/run.sh has the tests write
# their KTAP there; default LOG with .ktap for .log), INITRD (default
# build/initramfs.cpio; tests/run.sh passes one with the test modules,
# scripts/test-modules.sh).
# QEMU_NO_THP=1 starts QEMU with transparent huge pages disabled for its
# process (prctl PR_SET_THP_DISABLE, set by python3 before it execs QEMU),
# so that none of QEMU's memory, the guest's RAM and its translated-code
# buffer included, is on huge pages of the host, whatever the host's THP
# setting.  A failure to start QEMU that way is reported in LOG (127).
# ICOUNT=1 runs the guest with -icount shift=0: its clock advances one
# nanosecond per emulated instruction, so a time the guest measures is an
# instruction count, free of host noise.  It implies one vCPU: secondary
# CPU bring-up does not finish under -icount with QEMU 7.2.
set -uo pipefail
# SMP is checked unless ICOUNT=1, which boots one vCPU whatever it says.
if [ -z "${ICOUNT:-}" ]; then
	case ${SMP:-2} in
	[1-9] | [1-9][0-9]) ;;
	*) echo "qemu-run: error: SMP=${SMP}: a number of vCPUs, 1-99" >&2; exit 2 ;;
	esac
fi
# QEMU_NO_THP=1: python3 sets the flag, which survives exec, then runs its
# arguments (none: only the check that it can be set).  Python ignores
# SIGPIPE and SIGXFSZ, which exec would pass on: QEMU gets the defaults.
nothp_py='import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(41, 1, 0, 0, 0):
    sys.exit("qemu-run: error: QEMU_NO_THP=1: prctl(PR_SET_THP_DISABLE): "
             + os.strerror(ctypes.get_errno()))
if len(sys.argv) > 1:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    except OSError as e:
        sys.stderr.write("qemu-run: error: QEMU_NO_THP=1: cannot run %s: %s\n"
                         % (sys.argv[1], e.strerror))
        sys.exit(127)'
nothp=()
case ${QEMU_NO_THP:-0} in
0) ;;
1)	python3 -c "$nothp_py" ||
		{ echo "qemu-run: error: QEMU_NO_THP=1 needs python3 and prctl(PR_SET_THP_DISABLE)" >&2; exit 2; }
	nothp=(python3 -c "$nothp_py") ;;
*) echo "qemu-run: error: QEMU_NO_THP=${QEMU_NO_THP}: 0 or 1" >&2; exit 2 ;;
esac
case ${1:-} in
--check-smp) exit 0 ;;
--env-words)
	words=()
	[ -z "${ICOUNT:-}" ] && [ -n "${SMP:-}" ] && words+=("SMP=$SMP")
	[ "${QEMU_NO_THP:-0}" = 1 ] && words+=(QEMU_NO_THP=1)
	echo "${words[*]}"
	exit 0 ;;
esac
kernel=$1 log=$2 mem=$3 to=$4 scripts=$5 extra=${6:-}
initrd=${INITRD:-${BUILD:?}/initramfs.cpio}
# Two legacy pmem regions (memmap=), two 256 MiB brd disks, a memory-backed
# null_blk with 512 B blocks.
# tsc=reliable: TCG marks the TSC unstable and falls back to the HPET,
# whose every read is an emulated MMIO exit costing microseconds; the block
# layer's ktime_get() per bio would then weigh far more than on hardware.
cmdline="console=ttyS0 loglevel=5 panic=-1 oops=panic transparent_hugepage=madvise"
cmdline+=" clocksource=tsc tsc=reliable"
cmdline+=" memmap=128M!1536M memmap=128M!1792M brd.rd_nr=2 brd.rd_size=262144"
cmdline+=" null_blk.memory_backed=1 null_blk.gb=1 null_blk.bs=512"
cmdline+=" syncio.tests=$scripts $extra"
accel=(-accel tcg)
smp=${SMP:-2}
# shellcheck disable=SC2054	# -icount takes a comma-separated option list
[ -n "${ICOUNT:-}" ] && accel=(-accel tcg -icount shift=0,sleep=off) smp=1
read -ra extra_qemu <<< "${QEMU_EXTRA:-}"
ktap=${KTAP_LOG:-${log%.log}.ktap}
[ "$ktap" != "$log" ] || ktap=$log.ktap
timeout -k 10 "$to" "${nothp[@]}" qemu-system-x86_64 -machine pc -cpu max "${accel[@]}" \
	-smp "$smp" -m "$mem" -display none -no-reboot \
	-serial stdio -serial "file:$ktap" -monitor none \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" "${extra_qemu[@]}" \
	</dev/null >"$log" 2>&1
rc=$?
sed -i 's/\r$//' "$log"
[ -f "$ktap" ] && sed -i 's/\r$//' "$ktap"
exit $rc
