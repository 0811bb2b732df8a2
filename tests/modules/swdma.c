// SPDX-License-Identifier: GPL-2.0
/*
 * swdma: a software dmaengine provider with DMA_MEMCPY channels, to test
 * dmaengine clients (the planned pmem DMA-offload driver) under QEMU, which
 * has no DMA engine.  Test-only: it is not part of the series.
 *
 * Loading the module registers a platform device "swdma" and a platform
 * driver for it, whose probe registers a dma_device with @channels public
 * DMA_MEMCPY channels: DMA_PRIVATE is not set, so dmatest and
 * dma_request_chan_by_mask() find them.  They appear as dma<N>chan<M> in
 * /sys/class/dma, each with a "device" link to the platform device.
 *
 * The provider may be unbound while clients use it
 * (echo swdma > /sys/bus/platform/drivers/swdma/unbind): every descriptor
 * submitted and not yet run then completes with DMA_TRANS_ABORTED (callback
 * called, status DMA_ERROR), prep fails from then on, and the dma_device
 * stays valid until the last client has released its channels
 * (device_release); only then can the driver be bound again or the module
 * be removed (dmaengine holds a module reference per client channel).
 * With release=0 the provider has no device_release, like ptdma and most
 * providers in 6.1: dmaengine then warns ("called while N clients hold a
 * reference") if a client still holds a channel when the provider is
 * unbound, which is what a client that does not watch for the unbind of
 * its provider's device gets on such hardware.
 *
 * Each channel runs its copies in a work item queued on the next online
 * CPU after the one that called issue_pending (on that same CPU only when
 * it is the only one online), so completions arrive asynchronously from
 * another CPU.  Callbacks are called from that work item with bottom halves
 * disabled, like from a real driver's tasklet.  The copies need a CPU: on a
 * kernel without preemption, a client spinning in dma_sync_wait() (which
 * never schedules) on the CPU a copy was queued to starves it until the
 * client's timeout, so busy-polling clients must leave a CPU to the worker.
 *
 * Addresses: the platform device has a 64-bit DMA mask and no IOMMU, so a
 * DMA address is a dma-direct physical address (dma_to_phys()).  A range
 * wholly in System RAM is copied through the direct map (phys_to_virt()).
 * A range wholly in persistent memory (memmap= "Persistent Memory (legacy)",
 * E820 type 12, or "Persistent Memory"), which is not in the direct map, is
 * mapped with memremap(MEMREMAP_WB) for the copy.  Anything else (MMIO,
 * holes, a range straddling RAM and something else) is never touched: the
 * descriptor fails with DMA_TRANS_READ_FAILED (source) or
 * DMA_TRANS_WRITE_FAILED (destination) and counts in failed_unmappable.
 *
 * Parameters (in /sys/module/swdma/parameters; "rw": writable at run time):
 *   channels=N      channels, 1..8 (default 2), read at probe
 *   release=0       no device_release (default 1), read at probe: above
 *   copy_align=N    dma_device copy_align, log2 of bytes, 0..8 (default 0,
 *                   any alignment); prep refuses a misaligned request
 *   fail_every=N    rw: every Nth descriptor run fails, nothing copied,
 *                   with DMA_TRANS_READ_FAILED (0, the default: off)
 *   abort_every=N   rw: every Nth descriptor run completes with
 *                   DMA_TRANS_ABORTED, nothing copied, as a provider's
 *                   descriptors do when its channel is torn down under
 *                   them (0, the default: off); counted in abort_injected
 *   corrupt_every=N rw: every Nth descriptor run copies, then flips one
 *                   byte of the destination and reports success: the
 *                   silent fault only a client's data check can catch
 *                   (0, the default: off)
 *   delay_us=N      rw: sleep N us (0..1000000) before running each
 *                   descriptor (default 0)
 *   reorder=1       rw: run and complete descriptors out of order (below)
 * Counters (read-only): submitted, completed (copied without error;
 * corrupted ones included), corrupted, failed_injected, abort_injected,
 * failed_unmappable, aborted (never run: dropped by
 * terminate_all, or failed by an unbind), reordered (descriptors run ahead
 * of an earlier one), remote_cpu (descriptors run on another CPU than the
 * one that issued them), bytes_copied.  Once the channels are idle,
 * submitted == completed + failed_injected + abort_injected +
 * failed_unmappable + aborted.
 *
 * Order of completion and cookies: with reorder=1 the worker, when a
 * channel has two or more issued descriptors, runs the second before the
 * first, and completes it first (a descriptor is passed over at most once,
 * so none starves).  Callbacks then arrive out of order, which is legal for
 * clients that rely only on callbacks.  Clients that poll cookies
 * (dma_sync_wait(), dmatest's polled mode, dma_async_is_complete() on the
 * last/used pair of dma_async_is_tx_complete()) assume that cookies complete
 * in order.  So the channel's completed_cookie, reported as txstate->last,
 * only advances over an unbroken run of finished cookies, and tx_status
 * answers for the very cookie asked about from a history of the last 256
 * finished cookies of the channel: a descriptor finished early reads
 * DMA_COMPLETE (or DMA_ERROR) at once, and never makes an earlier one still
 * in flight look complete.  Hence DMA_COMPLETION_NO_ORDER is not
 * advertised.  An error older than 256 finished cookies reads DMA_COMPLETE:
 * the callback_result is the authoritative report.
 *
 * terminate_all drops every descriptor not yet run without calling its
 * callback (the cookies then read DMA_ERROR); a copy already running
 * finishes, without its callback.  device_synchronize waits for the worker.
 * Descriptors are freed once they retire, acked or not, as virt-dma does;
 * the callback is called whether or not DMA_PREP_INTERRUPT was asked for.
 */
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/dma-direct.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#define SWDMA_NAME		"swdma"
#define SWDMA_MAX_CHANNELS	8
#define SWDMA_MAX_LEN		SZ_4M
#define SWDMA_MAX_DELAY_US	1000000
#define SWDMA_HIST		256	/* finished cookies remembered, power of 2 */

/* --- parameters and counters ------------------------------------------ */

static unsigned int channels = 2;
static unsigned int copy_align;
static unsigned int fail_every;
static unsigned int abort_every;
static unsigned int corrupt_every;
static unsigned int delay_us;
static bool reorder;

static int swdma_set_channels(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, SWDMA_MAX_CHANNELS);
}

static const struct kernel_param_ops swdma_channels_ops = {
	.set = swdma_set_channels,
	.get = param_get_uint,
};

module_param_cb(channels, &swdma_channels_ops, &channels, 0444);
MODULE_PARM_DESC(channels, "number of DMA_MEMCPY channels, 1..8 (default 2)");

static int swdma_set_align(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, DMAENGINE_ALIGN_1_BYTE,
				     DMAENGINE_ALIGN_256_BYTES);
}

static const struct kernel_param_ops swdma_align_ops = {
	.set = swdma_set_align,
	.get = param_get_uint,
};

module_param_cb(copy_align, &swdma_align_ops, &copy_align, 0444);
MODULE_PARM_DESC(copy_align, "copy alignment as log2 of bytes, 0..8 (default 0: any)");

module_param(fail_every, uint, 0644);
MODULE_PARM_DESC(fail_every, "fail every Nth descriptor run, copying nothing (0: off)");

module_param(abort_every, uint, 0644);
MODULE_PARM_DESC(abort_every, "complete every Nth descriptor run with DMA_TRANS_ABORTED, copying nothing (0: off)");

module_param(corrupt_every, uint, 0644);
MODULE_PARM_DESC(corrupt_every, "flip a byte of every Nth descriptor's copy, reporting success (0: off)");

static int swdma_set_delay(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SWDMA_MAX_DELAY_US);
}

static const struct kernel_param_ops swdma_delay_ops = {
	.set = swdma_set_delay,
	.get = param_get_uint,
};

module_param_cb(delay_us, &swdma_delay_ops, &delay_us, 0644);
MODULE_PARM_DESC(delay_us, "sleep this many microseconds before each descriptor (0..1000000)");

module_param(reorder, bool, 0644);
MODULE_PARM_DESC(reorder, "run the second issued descriptor of a channel before the first");

static bool release = true;
module_param(release, bool, 0444);
MODULE_PARM_DESC(release, "implement device_release (default 1); 0 behaves like a provider without it");

static int swdma_stat_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%llu\n", (u64)atomic64_read(kp->arg));
}

static int swdma_stat_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops swdma_stat_ops = {
	.set = swdma_stat_set,
	.get = swdma_stat_get,
};

static atomic64_t stat_submitted = ATOMIC64_INIT(0);
module_param_cb(submitted, &swdma_stat_ops, &stat_submitted, 0444);
MODULE_PARM_DESC(submitted, "descriptors submitted");

static atomic64_t stat_completed = ATOMIC64_INIT(0);
module_param_cb(completed, &swdma_stat_ops, &stat_completed, 0444);
MODULE_PARM_DESC(completed, "descriptors copied without error");

static atomic64_t stat_corrupted = ATOMIC64_INIT(0);
module_param_cb(corrupted, &swdma_stat_ops, &stat_corrupted, 0444);
MODULE_PARM_DESC(corrupted, "descriptors whose copy corrupt_every falsified");

static atomic64_t stat_failed_injected = ATOMIC64_INIT(0);
module_param_cb(failed_injected, &swdma_stat_ops, &stat_failed_injected, 0444);
MODULE_PARM_DESC(failed_injected, "descriptors failed by fail_every");

static atomic64_t stat_abort_injected = ATOMIC64_INIT(0);
module_param_cb(abort_injected, &swdma_stat_ops, &stat_abort_injected, 0444);
MODULE_PARM_DESC(abort_injected, "descriptors aborted by abort_every");

static atomic64_t stat_failed_unmappable = ATOMIC64_INIT(0);
module_param_cb(failed_unmappable, &swdma_stat_ops, &stat_failed_unmappable, 0444);
MODULE_PARM_DESC(failed_unmappable, "descriptors failed: a range neither System RAM nor pmem");

static atomic64_t stat_aborted = ATOMIC64_INIT(0);
module_param_cb(aborted, &swdma_stat_ops, &stat_aborted, 0444);
MODULE_PARM_DESC(aborted, "descriptors never run: terminated, or failed by an unbind");

static atomic64_t stat_reordered = ATOMIC64_INIT(0);
module_param_cb(reordered, &swdma_stat_ops, &stat_reordered, 0444);
MODULE_PARM_DESC(reordered, "descriptors run ahead of an earlier one (reorder=1)");

static atomic64_t stat_remote_cpu = ATOMIC64_INIT(0);
module_param_cb(remote_cpu, &swdma_stat_ops, &stat_remote_cpu, 0444);
MODULE_PARM_DESC(remote_cpu, "descriptors run on another CPU than the one that issued them");

static atomic64_t stat_bytes_copied = ATOMIC64_INIT(0);
module_param_cb(bytes_copied, &swdma_stat_ops, &stat_bytes_copied, 0444);
MODULE_PARM_DESC(bytes_copied, "bytes copied");

/* Descriptors run so far, for fail_every. */
static atomic_t swdma_runs = ATOMIC_INIT(0);

/* --- data structures ---------------------------------------------------- */

enum swdma_state {
	SWDMA_PREPARED,		/* on ->prepared, not submitted yet */
	SWDMA_SUBMITTED,	/* on ->pending, has a cookie */
	SWDMA_ISSUED,		/* on ->queue, waiting for the worker */
	SWDMA_ACTIVE,		/* on ->queue, being run by the worker */
	SWDMA_DONE,		/* on ->queue, finished before an earlier one */
};

enum swdma_outcome {
	SWDMA_COPIED,
	SWDMA_INJECTED,
	SWDMA_INJECTED_ABORT,
	SWDMA_BAD_SRC,
	SWDMA_BAD_DST,
	SWDMA_ABORTED,
};

struct swdma_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	dma_addr_t dst;
	dma_addr_t src;
	size_t len;
	enum swdma_state state;
	unsigned int issue_cpu;
	bool held;		/* passed over once by reorder */
	bool terminated;	/* terminate_all while SWDMA_ACTIVE */
};

struct swdma_hist {
	dma_cookie_t cookie;
	enum dma_status status;
};

struct swdma_chan {
	struct dma_chan chan;
	unsigned int id;
	struct work_struct work;
	/* protects the lists, the states, hist, dead and the chan's cookies */
	spinlock_t lock;
	struct list_head prepared;	/* SWDMA_PREPARED */
	struct list_head pending;	/* SWDMA_SUBMITTED, in cookie order */
	struct list_head queue;		/* issued, active, done: cookie order */
	bool dead;			/* unbound: prep fails, the rest aborts */
	struct swdma_hist hist[SWDMA_HIST];
};

struct swdma_dev {
	struct dma_device dma;
	unsigned int nr_chans;
	bool in_core;	/* registered, and dmaengine has not released it */
	bool chan_refs;	/* we hold a reference on each chan->dev */
	struct swdma_chan chans[SWDMA_MAX_CHANNELS];
};

/*
 * One provider per module, in static storage: after an unbind, dmaengine
 * and its clients keep using the dma_device and its channels until the
 * last client releases them, so their memory must outlive the binding.
 */
static struct swdma_dev swdma;
static struct platform_device *swdma_pdev;
static struct workqueue_struct *swdma_wq;

static struct swdma_chan *to_swdma_chan(struct dma_chan *chan)
{
	return container_of(chan, struct swdma_chan, chan);
}

static struct swdma_desc *to_swdma_desc(struct dma_async_tx_descriptor *tx)
{
	return container_of(tx, struct swdma_desc, tx);
}

/* --- cookies ------------------------------------------------------------ */

static dma_cookie_t swdma_prev_cookie(dma_cookie_t cookie)
{
	return cookie > DMA_MIN_COOKIE ? cookie - 1 : INT_MAX;
}

static void swdma_record(struct swdma_chan *ch, dma_cookie_t cookie,
			 enum dma_status status)
{
	struct swdma_hist *h = &ch->hist[cookie & (SWDMA_HIST - 1)];

	h->cookie = cookie;
	h->status = status;
}

/*
 * Retire the finished descriptors at the head of the queue onto @retired
 * and set completed_cookie just below the oldest cookie not finished.
 * Called with ch->lock held.
 */
static void swdma_retire(struct swdma_chan *ch, struct list_head *retired)
{
	struct swdma_desc *d, *n;

	list_for_each_entry_safe(d, n, &ch->queue, node) {
		if (d->state != SWDMA_DONE)
			break;
		list_move_tail(&d->node, retired);
	}
	d = list_first_entry_or_null(&ch->queue, struct swdma_desc, node);
	if (!d)
		d = list_first_entry_or_null(&ch->pending, struct swdma_desc, node);
	ch->chan.completed_cookie = d ? swdma_prev_cookie(d->tx.cookie) : ch->chan.cookie;
}

static void swdma_free_list(struct list_head *list)
{
	struct swdma_desc *d, *n;

	list_for_each_entry_safe(d, n, list, node) {
		list_del(&d->node);
		dma_descriptor_unmap(&d->tx);
		kfree(d);
	}
}

/* --- copying -------------------------------------------------------------- */

static int swdma_count_bytes(struct resource *res, void *arg)
{
	u64 *bytes = arg;

	*bytes += resource_size(res);
	return 0;
}

/*
 * Whether the pages holding [phys, phys + len) all lie in resources of this
 * kind.  region_intersects() only looks at the top level and takes a range
 * half in a hole for one wholly inside: count what the resources cover.
 */
static bool swdma_covered(phys_addr_t phys, size_t len, unsigned long flags,
			  unsigned long desc)
{
	u64 start = round_down(phys, PAGE_SIZE);
	u64 end = round_up(phys + len, PAGE_SIZE) - 1;
	u64 bytes = 0;

	walk_iomem_res_desc(desc, flags, start, end, &bytes, swdma_count_bytes);
	return bytes == end - start + 1;
}

/* A kernel mapping of a DMA range, or NULL if it is not memory we may copy. */
static void *swdma_map(struct swdma_chan *ch, dma_addr_t addr, size_t len,
		       bool *remapped)
{
	phys_addr_t phys = dma_to_phys(ch->chan.device->dev, addr);
	int ram;

	*remapped = false;
	if (phys + len - 1 < phys)
		return NULL;
	ram = region_intersects(phys, len, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE);
	if (ram == REGION_INTERSECTS &&
	    swdma_covered(phys, len, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE))
		return phys_to_virt(phys);
	/* pmem: not in the direct map; memremap() warns on ranges with RAM */
	if (ram == REGION_DISJOINT &&
	    (swdma_covered(phys, len, IORESOURCE_MEM, IORES_DESC_PERSISTENT_MEMORY_LEGACY) ||
	     swdma_covered(phys, len, IORESOURCE_MEM, IORES_DESC_PERSISTENT_MEMORY))) {
		*remapped = true;
		return memremap(phys, len, MEMREMAP_WB);
	}
	return NULL;
}

static void swdma_bad_range(struct swdma_chan *ch, const char *what,
			    dma_addr_t addr, size_t len)
{
	dev_err_ratelimited(ch->chan.device->dev,
			    "chan %u: %s %pad+%#zx is neither System RAM nor pmem: not copied\n",
			    ch->id, what, &addr, len);
}

static enum swdma_outcome swdma_run(struct swdma_chan *ch, struct swdma_desc *d)
{
	unsigned int every = READ_ONCE(fail_every);
	unsigned int abort = READ_ONCE(abort_every);
	unsigned int corrupt = READ_ONCE(corrupt_every);
	unsigned int delay = READ_ONCE(delay_us);
	unsigned int run = atomic_inc_return(&swdma_runs);
	bool src_remapped, dst_remapped;
	void *src, *dst;

	if (delay)
		fsleep(delay);
	if (every && run % every == 0)
		return SWDMA_INJECTED;
	if (abort && run % abort == 0)
		return SWDMA_INJECTED_ABORT;

	src = swdma_map(ch, d->src, d->len, &src_remapped);
	if (!src) {
		swdma_bad_range(ch, "source", d->src, d->len);
		return SWDMA_BAD_SRC;
	}
	dst = swdma_map(ch, d->dst, d->len, &dst_remapped);
	if (!dst) {
		if (src_remapped)
			memunmap(src);
		swdma_bad_range(ch, "destination", d->dst, d->len);
		return SWDMA_BAD_DST;
	}
	memcpy(dst, src, d->len);
	if (corrupt && run % corrupt == 0 && d->len) {
		((u8 *)dst)[d->len / 2] ^= 0x5a;
		atomic64_inc(&stat_corrupted);
	}
	if (dst_remapped)
		memunmap(dst);
	if (src_remapped)
		memunmap(src);
	return SWDMA_COPIED;
}

static void swdma_account(struct swdma_desc *d, enum swdma_outcome out)
{
	switch (out) {
	case SWDMA_COPIED:
		atomic64_inc(&stat_completed);
		atomic64_add(d->len, &stat_bytes_copied);
		break;
	case SWDMA_INJECTED:
		atomic64_inc(&stat_failed_injected);
		break;
	case SWDMA_INJECTED_ABORT:
		atomic64_inc(&stat_abort_injected);
		break;
	case SWDMA_BAD_SRC:
	case SWDMA_BAD_DST:
		atomic64_inc(&stat_failed_unmappable);
		break;
	case SWDMA_ABORTED:
		atomic64_inc(&stat_aborted);
		return;
	}
	if (raw_smp_processor_id() != d->issue_cpu)
		atomic64_inc(&stat_remote_cpu);
}

static enum dmaengine_tx_result swdma_result(enum swdma_outcome out)
{
	switch (out) {
	case SWDMA_COPIED:
		return DMA_TRANS_NOERROR;
	case SWDMA_INJECTED:
	case SWDMA_BAD_SRC:
		return DMA_TRANS_READ_FAILED;
	case SWDMA_BAD_DST:
		return DMA_TRANS_WRITE_FAILED;
	case SWDMA_INJECTED_ABORT:
	case SWDMA_ABORTED:
		break;
	}
	return DMA_TRANS_ABORTED;
}

/* A descriptor's callback, copied out under the lock, called without it. */
struct swdma_cb {
	dma_async_tx_callback callback;
	dma_async_tx_callback_result callback_result;
	void *param;
	struct dmaengine_result result;
};

static void swdma_invoke(const struct swdma_cb *cb)
{
	if (!cb->callback && !cb->callback_result)
		return;
	local_bh_disable();
	if (cb->callback_result)
		cb->callback_result(cb->param, &cb->result);
	else
		cb->callback(cb->param);
	local_bh_enable();
}

static void swdma_finish(struct swdma_chan *ch, struct swdma_desc *d,
			 enum swdma_outcome out)
{
	struct swdma_cb cb = {};
	LIST_HEAD(retired);
	unsigned long flags;

	dma_descriptor_unmap(&d->tx);
	swdma_account(d, out);

	spin_lock_irqsave(&ch->lock, flags);
	if (d->terminated) {
		/* terminate_all ran meanwhile: no callback */
		list_move_tail(&d->node, &retired);
		swdma_record(ch, d->tx.cookie, DMA_ERROR);
	} else {
		d->state = SWDMA_DONE;
		swdma_record(ch, d->tx.cookie,
			     out == SWDMA_COPIED ? DMA_COMPLETE : DMA_ERROR);
		cb.callback = d->tx.callback;
		cb.callback_result = d->tx.callback_result;
		cb.param = d->tx.callback_param;
		cb.result.result = swdma_result(out);
		cb.result.residue = out == SWDMA_COPIED ? 0 : d->len;
	}
	swdma_retire(ch, &retired);
	spin_unlock_irqrestore(&ch->lock, flags);

	swdma_invoke(&cb);
	swdma_free_list(&retired);
}

/*
 * The next issued descriptor to run, marked SWDMA_ACTIVE, or NULL.  With
 * reorder, the second issued descriptor goes ahead of the first unless the
 * first was already passed over once.  Called with ch->lock held.
 */
static struct swdma_desc *swdma_pick(struct swdma_chan *ch)
{
	bool ahead = READ_ONCE(reorder) && !ch->dead;
	struct swdma_desc *d, *first = NULL;

	list_for_each_entry(d, &ch->queue, node) {
		if (d->state != SWDMA_ISSUED)
			continue;
		if (!first) {
			first = d;
			if (!ahead || d->held)
				break;
			continue;
		}
		first->held = true;
		atomic64_inc(&stat_reordered);
		d->state = SWDMA_ACTIVE;
		return d;
	}
	if (first)
		first->state = SWDMA_ACTIVE;
	return first;
}

static void swdma_work(struct work_struct *work)
{
	struct swdma_chan *ch = container_of(work, struct swdma_chan, work);
	struct swdma_desc *d;
	unsigned long flags;
	bool dead;

	for (;;) {
		spin_lock_irqsave(&ch->lock, flags);
		d = swdma_pick(ch);
		dead = ch->dead;
		spin_unlock_irqrestore(&ch->lock, flags);
		if (!d)
			break;
		swdma_finish(ch, d, dead ? SWDMA_ABORTED : swdma_run(ch, d));
		cond_resched();
	}
}

/* --- dmaengine operations ------------------------------------------------ */

static dma_cookie_t swdma_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct swdma_chan *ch = to_swdma_chan(tx->chan);
	struct swdma_desc *d = to_swdma_desc(tx);
	dma_cookie_t cookie;
	unsigned long flags;

	spin_lock_irqsave(&ch->lock, flags);
	cookie = ch->chan.cookie < INT_MAX ? ch->chan.cookie + 1 : DMA_MIN_COOKIE;
	ch->chan.cookie = cookie;
	tx->cookie = cookie;
	d->state = SWDMA_SUBMITTED;
	list_move_tail(&d->node, &ch->pending);
	spin_unlock_irqrestore(&ch->lock, flags);

	atomic64_inc(&stat_submitted);
	return cookie;
}

static struct dma_async_tx_descriptor *
swdma_prep_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		  size_t len, unsigned long flags)
{
	struct swdma_chan *ch = to_swdma_chan(chan);
	struct swdma_desc *d;
	unsigned long irqflags;

	if (!len || len > SWDMA_MAX_LEN ||
	    !is_dma_copy_aligned(chan->device, src, dst, len))
		return NULL;
	d = kzalloc(sizeof(*d), GFP_NOWAIT | __GFP_NOWARN);
	if (!d)
		return NULL;
	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.flags = flags;
	d->tx.tx_submit = swdma_tx_submit;
	d->dst = dst;
	d->src = src;
	d->len = len;
	d->state = SWDMA_PREPARED;

	spin_lock_irqsave(&ch->lock, irqflags);
	if (ch->dead) {
		spin_unlock_irqrestore(&ch->lock, irqflags);
		kfree(d);
		return NULL;
	}
	list_add_tail(&d->node, &ch->prepared);
	spin_unlock_irqrestore(&ch->lock, irqflags);
	return &d->tx;
}

/* Move every submitted descriptor to the queue.  Called with ch->lock held. */
static void swdma_issue_locked(struct swdma_chan *ch, unsigned int cpu)
{
	struct swdma_desc *d;

	list_for_each_entry(d, &ch->pending, node) {
		d->state = SWDMA_ISSUED;
		d->issue_cpu = cpu;
	}
	list_splice_tail_init(&ch->pending, &ch->queue);
}

/* The next online CPU after @cpu, wrapping; @cpu itself if it is alone. */
static unsigned int swdma_other_cpu(unsigned int cpu)
{
	unsigned int next = cpumask_next(cpu, cpu_online_mask);

	return next < nr_cpu_ids ? next : cpumask_first(cpu_online_mask);
}

static void swdma_issue_pending(struct dma_chan *chan)
{
	struct swdma_chan *ch = to_swdma_chan(chan);
	unsigned int cpu = raw_smp_processor_id();
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&ch->lock, flags);
	kick = !list_empty(&ch->pending);
	swdma_issue_locked(ch, cpu);
	spin_unlock_irqrestore(&ch->lock, flags);
	if (kick)
		queue_work_on(swdma_other_cpu(cpu), swdma_wq, &ch->work);
}

static enum dma_status swdma_tx_status(struct dma_chan *chan, dma_cookie_t cookie,
				       struct dma_tx_state *txstate)
{
	struct swdma_chan *ch = to_swdma_chan(chan);
	struct swdma_hist *h = &ch->hist[cookie & (SWDMA_HIST - 1)];
	dma_cookie_t last, used;
	enum dma_status status;
	unsigned long flags;

	spin_lock_irqsave(&ch->lock, flags);
	last = chan->completed_cookie;
	used = chan->cookie;
	if (cookie >= DMA_MIN_COOKIE && h->cookie == cookie)
		status = h->status;
	else
		status = dma_async_is_complete(cookie, last, used);
	spin_unlock_irqrestore(&ch->lock, flags);

	dma_set_tx_state(txstate, last, used, 0);
	return status;
}

static int swdma_terminate_all(struct dma_chan *chan)
{
	struct swdma_chan *ch = to_swdma_chan(chan);
	struct swdma_desc *d, *n;
	unsigned int aborted = 0;
	LIST_HEAD(dropped);
	unsigned long flags;

	spin_lock_irqsave(&ch->lock, flags);
	list_for_each_entry_safe(d, n, &ch->queue, node) {
		if (d->state == SWDMA_ACTIVE) {
			d->terminated = true;
			continue;
		}
		if (d->state == SWDMA_ISSUED) {
			swdma_record(ch, d->tx.cookie, DMA_ERROR);
			aborted++;
		}
		list_move_tail(&d->node, &dropped);
	}
	list_for_each_entry(d, &ch->pending, node) {
		swdma_record(ch, d->tx.cookie, DMA_ERROR);
		aborted++;
	}
	list_splice_tail_init(&ch->pending, &dropped);
	swdma_retire(ch, &dropped);
	spin_unlock_irqrestore(&ch->lock, flags);

	atomic64_add(aborted, &stat_aborted);
	swdma_free_list(&dropped);
	return 0;
}

static void swdma_synchronize(struct dma_chan *chan)
{
	flush_work(&to_swdma_chan(chan)->work);
}

static int swdma_alloc_chan_resources(struct dma_chan *chan)
{
	struct swdma_chan *ch = to_swdma_chan(chan);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&ch->lock, flags);
	if (ch->dead) {
		/*
		 * Unregistered channels stay on the dma_device's list until
		 * it is released, and can still be offered to a new client.
		 * Not -ENODEV: on that, find_candidate() takes the device off
		 * dma_device_list, and dma_device_release() would do it again.
		 */
		ret = -EBUSY;
	} else {
		chan->cookie = DMA_MIN_COOKIE;
		chan->completed_cookie = DMA_MIN_COOKIE;
		memset(ch->hist, 0, sizeof(ch->hist));
	}
	spin_unlock_irqrestore(&ch->lock, flags);
	return ret;
}

static void swdma_free_chan_resources(struct dma_chan *chan)
{
	struct swdma_chan *ch = to_swdma_chan(chan);
	LIST_HEAD(unused);
	unsigned long flags;

	swdma_terminate_all(chan);
	flush_work(&ch->work);
	spin_lock_irqsave(&ch->lock, flags);
	list_splice_tail_init(&ch->prepared, &unused);
	spin_unlock_irqrestore(&ch->lock, flags);
	swdma_free_list(&unused);
}

/* Called by dmaengine, dma_list_mutex held, when the last reference goes. */
static void swdma_release(struct dma_device *dma)
{
	struct swdma_dev *sd = container_of(dma, struct swdma_dev, dma);

	WRITE_ONCE(sd->in_core, false);
}

/* --- platform driver ------------------------------------------------------ */

static bool swdma_filter_none(struct dma_chan *chan, void *param)
{
	return false;
}

/*
 * Drop the references we hold on the channels' sysfs devices (they keep
 * dma_chan_name() valid for clients after an unbind) once dmaengine is done
 * with the old registration.  dma_release_channel() calls our
 * device_release with dma_list_mutex held and still writes chan->device
 * (privatecnt, cap_mask) after it, and has dropped the module reference
 * before it unlocks: a channel request that cannot succeed takes and drops
 * dma_list_mutex, after which nothing of dmaengine touches the old
 * registration any more.
 */
static void swdma_reap(struct swdma_dev *sd)
{
	struct dma_chan *chan;
	dma_cap_mask_t mask;
	unsigned int i;

	if (!sd->chan_refs)
		return;
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_channel(mask, swdma_filter_none, NULL);
	if (chan)
		dma_release_channel(chan);
	for (i = 0; i < sd->nr_chans; i++)
		put_device(&sd->chans[i].chan.dev->device);
	sd->chan_refs = false;
}

static int swdma_probe(struct platform_device *pdev)
{
	struct swdma_dev *sd = &swdma;
	struct dma_device *dma = &sd->dma;
	unsigned int i;
	int ret;

	if (READ_ONCE(sd->in_core)) {
		dev_err(&pdev->dev, "the previous binding is still in use by a dmaengine client\n");
		return -EBUSY;
	}
	swdma_reap(sd);
	memset(sd, 0, sizeof(*sd));

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	ret = dma_set_max_seg_size(&pdev->dev, SWDMA_MAX_LEN);
	if (ret)
		return ret;
	if (get_dma_ops(&pdev->dev)) {
		dev_err(&pdev->dev, "DMA addresses are not dma-direct here: unsupported\n");
		return -ENODEV;
	}

	dma_cap_set(DMA_MEMCPY, dma->cap_mask);
	INIT_LIST_HEAD(&dma->channels);
	dma->dev = &pdev->dev;
	dma->copy_align = copy_align;
	dma->directions = BIT(DMA_MEM_TO_MEM);
	dma->residue_granularity = DMA_RESIDUE_GRANULARITY_DESCRIPTOR;
	dma->device_alloc_chan_resources = swdma_alloc_chan_resources;
	dma->device_free_chan_resources = swdma_free_chan_resources;
	dma->device_prep_dma_memcpy = swdma_prep_memcpy;
	dma->device_issue_pending = swdma_issue_pending;
	dma->device_tx_status = swdma_tx_status;
	dma->device_terminate_all = swdma_terminate_all;
	dma->device_synchronize = swdma_synchronize;
	if (release)
		dma->device_release = swdma_release;

	sd->nr_chans = channels;
	for (i = 0; i < sd->nr_chans; i++) {
		struct swdma_chan *ch = &sd->chans[i];

		ch->id = i;
		spin_lock_init(&ch->lock);
		INIT_LIST_HEAD(&ch->prepared);
		INIT_LIST_HEAD(&ch->pending);
		INIT_LIST_HEAD(&ch->queue);
		INIT_WORK(&ch->work, swdma_work);
		ch->chan.device = dma;
		ch->chan.cookie = DMA_MIN_COOKIE;
		ch->chan.completed_cookie = DMA_MIN_COOKIE;
		list_add_tail(&ch->chan.device_node, &dma->channels);
	}

	ret = dma_async_device_register(dma);
	if (ret) {
		dev_err(&pdev->dev, "dma_async_device_register: %d\n", ret);
		return ret;
	}
	WRITE_ONCE(sd->in_core, true);
	for (i = 0; i < sd->nr_chans; i++)
		get_device(&sd->chans[i].chan.dev->device);
	sd->chan_refs = true;
	platform_set_drvdata(pdev, sd);
	dev_info(&pdev->dev, "dma%d: %u memcpy channels (test-only software engine)\n",
		 dma->dev_id, sd->nr_chans);
	return 0;
}

static int swdma_remove(struct platform_device *pdev)
{
	struct swdma_dev *sd = platform_get_drvdata(pdev);
	unsigned int i;
	bool held;

	/* Everything submitted and not run yet completes as aborted. */
	for (i = 0; i < sd->nr_chans; i++) {
		struct swdma_chan *ch = &sd->chans[i];
		unsigned long flags;

		spin_lock_irqsave(&ch->lock, flags);
		ch->dead = true;
		swdma_issue_locked(ch, raw_smp_processor_id());
		spin_unlock_irqrestore(&ch->lock, flags);
		queue_work(swdma_wq, &ch->work);
	}
	/*
	 * Without device_release, dmaengine is done with the registration
	 * when this returns, unless a client still holds a channel (it
	 * warns then): keep the registration, and refuse a new probe, until
	 * the module goes, which that client's module reference prevents.
	 */
	held = false;
	for (i = 0; i < sd->nr_chans; i++)
		held |= sd->chans[i].chan.client_count > 0;
	dma_async_device_unregister(&sd->dma);
	if (!sd->dma.device_release && !held)
		WRITE_ONCE(sd->in_core, false);
	for (i = 0; i < sd->nr_chans; i++)
		flush_work(&sd->chans[i].work);
	dev_info(&pdev->dev, "unregistered; %s\n",
		 READ_ONCE(sd->in_core) ? "clients still hold channels" : "released");
	return 0;
}

static struct platform_driver swdma_driver = {
	.probe = swdma_probe,
	.remove = swdma_remove,
	.driver = {
		.name = SWDMA_NAME,
	},
};

static int __init swdma_init(void)
{
	int ret;

	swdma_wq = alloc_workqueue(SWDMA_NAME, WQ_MEM_RECLAIM, 0);
	if (!swdma_wq)
		return -ENOMEM;
	ret = platform_driver_register(&swdma_driver);
	if (ret)
		goto err_wq;
	swdma_pdev = platform_device_register_simple(SWDMA_NAME, PLATFORM_DEVID_NONE,
						     NULL, 0);
	if (IS_ERR(swdma_pdev)) {
		ret = PTR_ERR(swdma_pdev);
		goto err_drv;
	}
	if (!READ_ONCE(swdma.in_core)) {
		/* probe failed, and said why */
		ret = -ENODEV;
		goto err_dev;
	}
	return 0;

err_dev:
	platform_device_unregister(swdma_pdev);
err_drv:
	platform_driver_unregister(&swdma_driver);
err_wq:
	destroy_workqueue(swdma_wq);
	return ret;
}

static void __exit swdma_exit(void)
{
	platform_device_unregister(swdma_pdev);
	platform_driver_unregister(&swdma_driver);
	/* No client can hold a channel now: each holds a module reference. */
	swdma_reap(&swdma);
	destroy_workqueue(swdma_wq);
}

module_init(swdma_init);
module_exit(swdma_exit);

MODULE_DESCRIPTION("Software DMA_MEMCPY dmaengine provider for tests (not part of the series)");
MODULE_LICENSE("GPL");
