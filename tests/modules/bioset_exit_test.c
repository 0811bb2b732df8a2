// SPDX-License-Identifier: GPL-2.0
/*
 * bioset_exit_test: a module that owns a bio_set with a per-cpu cache, for
 * tests/70-bio-cache.sh (not part of the series).
 *
 * Loading it writes a pattern to the first @blocks 4 KiB blocks of @dev
 * with bios of its own bio_set, then reads them back with up to 32 bios in
 * flight, checking every block in the completion handler (hardirq context
 * on null_blk with irqmode=2) and freeing the bio there.  It then frees and
 * reallocates a bio 256 times in task context and counts how often it gets
 * the bio it just freed (informative only: the slab allocator often does
 * that too).  It prints one
 * "bioset_exit_test: ..." line and fails to load on any I/O error or
 * mismatch.  Unloading it destroys the bio_set with bioset_exit() while
 * bios freed by completions sit in the caches of the CPUs that ran them.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/wait.h>

static char *dev = "/dev/nullb0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "block device to write and read back");
static unsigned int blocks = 4096;
module_param(blocks, uint, 0444);
MODULE_PARM_DESC(blocks, "number of 4 KiB blocks at the start of dev");
static int corrupt = -1;
module_param(corrupt, int, 0444);
MODULE_PARM_DESC(corrupt, "write this block with a wrong pattern (make test-inject)");

#define MAX_INFLIGHT	32

static struct bio_set test_bs;
static struct block_device *bdev;
static atomic_t inflight = ATOMIC_INIT(0);
static atomic_t errors = ATOMIC_INIT(0);
static atomic_t mismatches = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(inflight_wait);

static u64 word(unsigned int block, unsigned int i)
{
	return (u64)block * 0x9e3779b97f4a7c15ULL + i;
}

static void fill(struct page *page, unsigned int block)
{
	u64 *p = page_address(page);
	unsigned int i;

	for (i = 0; i < PAGE_SIZE / sizeof(u64); i++)
		p[i] = word(block, i);
}

static void read_end_io(struct bio *bio)
{
	struct page *page = bio_first_page_all(bio);
	unsigned int block = (unsigned long)bio->bi_private;
	u64 *p = page_address(page);
	unsigned int i;

	if (bio->bi_status) {
		atomic_inc(&errors);
	} else {
		for (i = 0; i < PAGE_SIZE / sizeof(u64); i++) {
			if (p[i] != word(block, i)) {
				atomic_inc(&mismatches);
				break;
			}
		}
	}
	bio_put(bio);
	__free_page(page);
	if (atomic_dec_and_test(&inflight))
		wake_up(&inflight_wait);
}

static int submit_block(unsigned int block, bool write)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct bio *bio;
	int ret;

	if (!page)
		return -ENOMEM;
	bio = bio_alloc_bioset(bdev, 1, write ? REQ_OP_WRITE : REQ_OP_READ,
			       GFP_KERNEL, &test_bs);
	bio->bi_iter.bi_sector = (sector_t)block << (PAGE_SHIFT - SECTOR_SHIFT);
	__bio_add_page(bio, page, PAGE_SIZE, 0);
	if (write) {
		fill(page, block);
		if (block == corrupt)
			((u64 *)page_address(page))[7] ^= 1;
		ret = submit_bio_wait(bio);
		bio_put(bio);
		__free_page(page);
		return ret;
	}
	bio->bi_private = (void *)(unsigned long)block;
	bio->bi_end_io = read_end_io;
	atomic_inc(&inflight);
	submit_bio(bio);
	return 0;
}

static int __init bioset_exit_test_init(void)
{
	unsigned int b, hits = 0;
	int ret;

	bdev = blkdev_get_by_path(dev, FMODE_READ | FMODE_WRITE, &test_bs);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	ret = bioset_init(&test_bs, 4, 0, BIOSET_NEED_BVECS | BIOSET_PERCPU_CACHE);
	if (ret)
		goto out_put;

	for (b = 0; b < blocks; b++) {
		ret = submit_block(b, true);
		if (ret) {
			pr_err("bioset_exit_test: write of block %u failed: %d\n", b, ret);
			goto out_exit;
		}
	}
	for (b = 0; b < blocks; b++) {
		wait_event(inflight_wait, atomic_read(&inflight) < MAX_INFLIGHT);
		ret = submit_block(b, false);
		if (ret)
			break;
	}
	wait_event(inflight_wait, atomic_read(&inflight) == 0);

	for (b = 0; b < 256; b++) {
		struct bio *bio = bio_alloc_bioset(bdev, 1, REQ_OP_READ, GFP_KERNEL,
						   &test_bs);
		struct bio *again;

		bio_put(bio);
		again = bio_alloc_bioset(bdev, 1, REQ_OP_READ, GFP_KERNEL, &test_bs);
		hits += again == bio;
		bio_put(again);
	}

	pr_info("bioset_exit_test: %s: %u blocks written and read back, %d I/O errors, %d mismatches; %u/256 allocations returned the bio just freed\n",
		dev, blocks, atomic_read(&errors), atomic_read(&mismatches), hits);
	if (ret || atomic_read(&errors) || atomic_read(&mismatches)) {
		ret = ret ? ret : -EIO;
		goto out_exit;
	}
	return 0;

out_exit:
	wait_event(inflight_wait, atomic_read(&inflight) == 0);
	bioset_exit(&test_bs);
out_put:
	blkdev_put(bdev, FMODE_READ | FMODE_WRITE);
	return ret;
}

static void __exit bioset_exit_test_exit(void)
{
	bioset_exit(&test_bs);
	blkdev_put(bdev, FMODE_READ | FMODE_WRITE);
	pr_info("bioset_exit_test: bio_set destroyed\n");
}

module_init(bioset_exit_test_init);
module_exit(bioset_exit_test_exit);
MODULE_DESCRIPTION("bio_set with a per-cpu cache: I/O from every context, then bioset_exit()");
MODULE_LICENSE("GPL");
