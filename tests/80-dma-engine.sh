#!/bin/bash
# vm: mem=2048 timeout=600
# The dmaengine path the pmem DMA offload (part 3, not in the series yet)
# will take, on swdma (tests/modules/swdma.c), a software DMA_MEMCPY
# provider that is not part of the series, exercised with the in-tree dmatest
# (built in: /sys/module/dmatest/parameters).  Every dmatest run covers all
# swdma channels with random offsets and lengths in 16 KiB buffers, data
# verified, and counts one summary line per thread from dmesg:
#  1. the module loads and its channels (dma<N>chan<M> whose device is the
#     "swdma" platform device) appear in /sys/class/dma;
#  2. dmatest, 2 threads per channel, callbacks: 0 failures; swdma's
#     counters must show the descriptors completed, some of them on another
#     CPU than the one that issued them (when two CPUs are online);
#  3. dmatest in polled mode (dma_sync_wait() on cookies), 1 thread on 1
#     channel (polled dmatest terminates the channel after each test, and
#     a spinning poller must leave a CPU to swdma's worker): 0 failures;
#  4. fail_every=7: dmatest must report failures, exactly as many as swdma
#     injected (failed_injected), which proves that the runs above could
#     fail;
#  5. delay_us=2000 before each copy: 0 failures;
#  6. reorder=1 (with delay_us=500 and 4 threads per channel, so that
#     several descriptors wait on a channel): 0 failures, and the reordered
#     counter must have moved, else nothing was tested;
#  7. the provider unbound while dmatest runs: the unbind returns, the
#     channels leave /sys/class/dma, dmatest can be stopped, and once idle
#     every descriptor submitted is accounted for as completed, failed or
#     aborted.  Kernel warnings are the runner's to report;
#  8. bound again once dmatest has released the old channels: the channels
#     come back, dmatest 0 failures, and rmmod succeeds.
# Without /tests/modules/swdma.ko (or without dmatest) every subtest skips.
# Injection (make test-inject): dma-corrupt has swdma flip a byte of every
# 50th copy and report it done, which only dmatest's verify can catch
# (subtest 2).
. /tests/lib/common.sh
KO=/tests/modules/swdma.ko
DT=/sys/module/dmatest/parameters
SW=/sys/module/swdma/parameters
DRV=/sys/bus/platform/drivers/swdma
SWDMA_MAX_CHANS=8
DESC=(
	"swdma: the module loads and its DMA_MEMCPY channels appear in /sys/class/dma"
	"dmatest on every swdma channel, 2 threads each: verified copies, 0 failures, completions on another CPU"
	"dmatest polled on one swdma channel: 0 failures"
	"swdma fail_every=7: dmatest reports exactly the injected failures"
	"swdma delay_us=2000: dmatest 0 failures"
	"swdma reorder=1: descriptors completed out of order, dmatest 0 failures"
	"swdma unbound under dmatest: no hang, channels gone, every descriptor accounted for"
	"swdma bound again after the unbind: dmatest 0 failures, then the module unloads"
)
ktap_plan ${#DESC[@]}

skip_all() {
	local d
	diag "$1"
	for d in "${DESC[@]}"; do ktap_skip "$d"; done
	ktap_done
}
[ -f $KO ] || skip_all "no $KO (the runner builds tests/modules only for a kernel with its object directory)"
[ -d $DT ] || skip_all "no dmatest in this kernel (CONFIG_DMATEST)"

# The swdma channels: dma<N>chan<M> whose parent device is swdma.
swdma_chans() {
	local c
	for c in /sys/class/dma/dma*chan*; do
		[ -e "$c/device" ] || continue
		[ "$(basename "$(readlink -f "$c/device")")" = swdma ] && basename "$c"
	done
}
sw() { cat "$SW/$1"; }
DT_WANT=0 DT_THREADS=0 DT_TESTS=0 DT_FAILS=0 DT_BADRET=0
online_cpus() { grep -c '^cpu[0-9]' /proc/stat; }

# The summary lines of the dmatest threads since the last dmesg -c, as
# "thread tests failures ret".
dt_summaries() {
	dmesg | sed -n 's/.*dmatest: \(dma[0-9]*chan[0-9]*-copy[0-9]*\): summary \([0-9]*\) tests*, \([0-9]*\) failures.*(\(-*[0-9]*\))$/\1 \2 \3 \4/p'
}
# dt_tally: DT_THREADS DT_TESTS DT_FAILS DT_BADRET from those lines.
dt_tally() {
	read -r DT_THREADS DT_TESTS DT_FAILS DT_BADRET <<< "$(dt_summaries |
		awk '{ n++; t += $2; f += $3; if ($4 != 0) b++ } END { print n + 0, t + 0, f + 0, b + 0 }')"
}
dt_stop() { echo 0 > $DT/run; }

# dt_start ITERATIONS THREADS POLLED [NCHANS]: set dmatest up on every
# swdma channel, or on the first NCHANS (the other parameters first: each
# channel takes them when it is added) and start it.  Sets DT_WANT, the
# number of threads.
dt_start() {
	local c chans
	chans=$(swdma_chans | head -n "${4:-$SWDMA_MAX_CHANS}")
	DT_WANT=$(( $(echo "$chans" | wc -w) * $2 ))
	echo swdma > $DT/device
	echo 16384 > $DT/test_buf_size
	echo 0 > $DT/noverify
	echo 0 > $DT/norandom
	echo 0 > $DT/max_channels
	echo 3000 > $DT/timeout
	echo "$1" > $DT/iterations
	echo "$2" > $DT/threads_per_chan
	echo "$3" > $DT/polled
	dmesg -c > /dev/null
	[ -n "$chans" ] || { diag "dmatest: no swdma channel"; return 1; }
	for c in $chans; do
		echo "$c" > $DT/channel || { diag "dmatest: could not add $c"; return 1; }
	done
	echo 1 > $DT/run || { diag "dmatest: run=1 failed"; return 1; }
}

# dt_wait SECS: wait for one summary line per thread, then let dmatest
# release the channels (reading "run" once every thread is done does).
dt_wait() {
	local _
	for _ in $(seq $(($1 * 5))); do
		[ "$(dt_summaries | wc -l)" -ge "$DT_WANT" ] && break
		sleep 0.2
	done
	dt_tally
	if [ "$DT_THREADS" -lt "$DT_WANT" ]; then
		diag "dmatest: $DT_THREADS of $DT_WANT threads finished within $1 s; stopping it"
		within 60 dt_stop || diag "dmatest: run=0 did not return within 60 s"
		return 1
	fi
	cat $DT/run > /dev/null
	return 0
}

# dt_run ITERATIONS THREADS POLLED SECS [NCHANS]: a whole run; diag its
# tally.
dt_run() {
	dt_start "$1" "$2" "$3" "${5:-}" || return 1
	dt_wait "$4" || return 1
	diag "dmatest: $DT_THREADS threads, $DT_TESTS tests, $DT_FAILS failures"
	[ "$DT_BADRET" -eq 0 ] || { diag "dmatest: $DT_BADRET threads ended with an error code"; return 1; }
}

# dt_clean ITERATIONS THREADS POLLED SECS [NCHANS]: a whole run in which
# every thread reported 0 failures.
dt_clean() {
	dt_run "$@" || return 1
	[ "$DT_FAILS" -eq 0 ] && return 0
	dmesg | grep 'dmatest: .*result' | head -5 | sed 's/^/#   /'
	return 1
}

sw_params_off() {
	echo 0 > $SW/fail_every
	echo 0 > $SW/corrupt_every
	echo 0 > $SW/delay_us
	echo 0 > $SW/reorder
}

# 1: load.
dmesg -c > /dev/null
if ! out=$(insmod $KO channels=2 2>&1); then
	diag "insmod: $out"
	dmesg | grep swdma | sed 's/^/#   /'
	ktap_fail "${DESC[0]}"
	for d in "${DESC[@]:1}"; do ktap_fail "$d"; done
	ktap_done
fi
chans=$(swdma_chans)
nch=$(echo "$chans" | wc -w)
diag "swdma channels: ${chans//$'\n'/ }; $(dmesg | grep -o 'swdma: dma.*' | head -1)"
[ "$nch" -eq 2 ] && [ "$(sw submitted)" -eq 0 ]
ktap_result $? "${DESC[0]}"

# 2: callbacks, 2 threads per channel.  (Injection dma-corrupt: swdma
# falsifies every 50th copy and reports it done; dmatest's verify must
# catch it.)
c0=$(sw completed) r0=$(sw remote_cpu) s0=$(sw submitted)
rc=0
injecting dma-corrupt && echo 50 > $SW/corrupt_every
dt_clean 300 2 0 240 || rc=1
echo 0 > $SW/corrupt_every
dc=$(( $(sw completed) - c0 )) dr=$(( $(sw remote_cpu) - r0 )) ds=$(( $(sw submitted) - s0 ))
diag "swdma: $ds submitted, $dc completed, $dr on another CPU than their issuer; $(sw bytes_copied) bytes copied so far"
if [ $rc = 0 ] && { [ "$ds" -ne "$DT_TESTS" ] || [ "$dc" -ne "$DT_TESTS" ]; }; then
	rc=1
	diag "swdma counted $ds submitted and $dc completed for $DT_TESTS dmatest tests"
fi
if [ "$(online_cpus)" -gt 1 ] && [ "$dr" -le 0 ]; then
	rc=1
	diag "no descriptor completed on another CPU than its issuer's with $(online_cpus) CPUs online"
fi
ktap_result $rc "${DESC[1]}"

# 3: polled, one thread on one channel.  dma_sync_wait() spins without
# scheduling, and this kernel does not preempt (PREEMPT_NONE): a polling
# thread on the CPU a copy was queued to would starve that copy until its
# 5 s timeout.  One poller leaves the other CPU to the worker.
if [ "$(online_cpus)" -lt 2 ]; then
	diag "one CPU online: a polling dmatest thread would starve swdma's worker"
	ktap_skip "${DESC[2]}"
else
	rc=0
	dt_clean 200 1 1 240 1 || rc=1
	echo 0 > $DT/polled
	ktap_result $rc "${DESC[2]}"
fi

# 4: injected failures.  One thread per channel: a dmatest thread that saw
# a failure terminates its channel when it ends, which would drop the
# descriptors of another thread on the same channel.
i0=$(sw failed_injected)
echo 7 > $SW/fail_every
rc=0
dt_run 140 1 0 240 || rc=1
echo 0 > $SW/fail_every
di=$(( $(sw failed_injected) - i0 ))
diag "swdma injected $di failures, dmatest reported $DT_FAILS ($(dmesg | grep -c "completion error status") 'completion error status')"
if [ $rc = 0 ]; then
	if [ "$di" -le 0 ] || [ "$DT_FAILS" -le 0 ]; then
		rc=1
		diag "no failure injected or none reported: this subtest could not fail"
	elif [ "$DT_FAILS" -ne "$di" ]; then
		rc=1
		diag "dmatest reported $DT_FAILS failures for $di injected"
	fi
fi
ktap_result $rc "${DESC[3]}"

# 5: delay before each copy.
echo 2000 > $SW/delay_us
rc=0
dt_clean 100 2 0 240 || rc=1
echo 0 > $SW/delay_us
ktap_result $rc "${DESC[4]}"

# 6: out-of-order completion.
o0=$(sw reordered)
echo 500 > $SW/delay_us
echo 1 > $SW/reorder
rc=0
dt_clean 200 4 0 240 || rc=1
sw_params_off
dro=$(( $(sw reordered) - o0 ))
diag "swdma: $dro descriptors run ahead of an earlier one"
if [ "$dro" -le 0 ]; then
	rc=1
	diag "nothing was reordered: this subtest tested nothing"
fi
ktap_result $rc "${DESC[5]}"

# 7: unbind while dmatest runs (iterations with no end in sight).
rc=0
echo 200 > $SW/delay_us
if ! dt_start 1000000 2 0; then
	rc=1
else
	c0=$(sw completed)
	sleep 2
	[ "$(sw completed)" -gt "$c0" ] || diag "no descriptor completed in 2 s before the unbind"
	within 30 sysfs_write swdma $DRV/unbind
	urc=$?
	[ $urc -eq 124 ] && diag "unbind did not return within 30 s"
	[ $urc -eq 0 ] || { rc=1; diag "unbind failed ($urc)"; }
	left=$(swdma_chans)
	[ -z "$left" ] || { rc=1; diag "channels still in /sys/class/dma after the unbind: ${left//$'\n'/ }"; }
	sleep 1
	within 60 dt_stop || { rc=1; diag "dmatest run=0 did not return within 60 s after the unbind"; }
	dt_tally
	diag "dmatest: $DT_THREADS of $DT_WANT threads ended: $DT_TESTS tests, $DT_FAILS failures (errors expected after the unbind)"
	[ "$DT_THREADS" -eq "$DT_WANT" ] || { rc=1; diag "not every dmatest thread printed its summary"; }
	dmesg | grep 'swdma' | sed 's/^/#   /'
fi
sw_params_off
sub=$(sw submitted) comp=$(sw completed) finj=$(sw failed_injected) fu=$(sw failed_unmappable) ab=$(sw aborted)
diag "swdma: submitted $sub, completed $comp, failed_injected $finj, failed_unmappable $fu, aborted $ab"
if [ "$sub" -ne $((comp + finj + fu + ab)) ]; then
	rc=1
	diag "descriptors unaccounted for: $((sub - comp - finj - fu - ab))"
fi
[ "$fu" -eq 0 ] || { rc=1; diag "$fu descriptors had a range swdma could not map"; }
ktap_result $rc "${DESC[6]}"

# 8: bind again (the old registration is released now that dmatest let
# its channels go), use, unload.
rc=0
dmesg -c > /dev/null
within 30 sysfs_write swdma $DRV/bind || { rc=1; diag "bind failed or did not return: $(dmesg | grep swdma | tail -2)"; }
nch=$(swdma_chans | wc -l)
[ "$nch" -eq 2 ] || { rc=1; diag "$nch swdma channels after the bind, not 2"; }
if [ $rc = 0 ]; then
	dt_clean 100 2 0 240 || rc=1
fi
within 30 rmmod swdma || { rc=1; diag "rmmod swdma failed or did not return"; }
[ ! -d /sys/module/swdma ] || { rc=1; diag "/sys/module/swdma still there"; }
ktap_result $rc "${DESC[7]}"
ktap_done
