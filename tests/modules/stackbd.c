// SPDX-License-Identifier: GPL-2.0
/*
 * stackbd: a bio-based block device stacked on another one, for
 * tests/14-stacked-submit.sh (not part of the series).
 *
 * Its ->submit_bio() submits from inside itself, as stacking drivers do,
 * which is what the bio lists of bio-based submission (current->bio_list,
 * __submit_bio_noacct()) are for.  A bio from above is cloned into a root
 * of stackbd's own and submitted to stackbd again.  A bio larger than
 * @split_kb is split in three: the first @split_kb is cloned and submitted
 * to @lower (the level below), and the rest, cut in two halves, is
 * submitted to stackbd itself again (the same level), first half first.
 * The block layer must call no ->submit_bio() from inside another of the
 * same task, and must handle the bios for the lower level first, then
 * those for the same level, then those left from earlier: done that way,
 * the clones of one root reach @lower in ascending order of their sectors.
 * stackbd counts, in read-only module parameters:
 *
 *   nested	a ->submit_bio() of stackbd, or of @lower for one of its
 *		clones, entered while the same task was in stackbd's;
 *   unlisted	a ->submit_bio() entered without current->bio_list set;
 *   unordered	a ->submit_bio() entered while a clone this task submitted
 *		to @lower had not completed, or a clone that reached @lower
 *		below the one before it of the same root;
 *   untracked	a ->submit_bio() that found the task table full (the counts
 *		above then miss it; the test wants none);
 *   rescued	a piece or clone that another task (a bio_set's rescuer)
 *		submitted or completed: the checks skip its root, and the test
 *		skips its verdicts on them;
 *   splits, clones	how often each happened.
 *
 * The counts rely on @lower completing its bios inside its own
 * ->submit_bio(), as brd does (a clone that submit_bio_noacct() ends early,
 * past the end of the device for instance, would count as nested too).
 * For make test-inject, recurse=1 hands the first half of a split to
 * stackbd's ->submit_bio() directly instead of through submit_bio_noacct(),
 * and recurse=2 a clone to @lower's, once per root, so that "nested" must
 * count; hold=1 keeps back the first clone of each root that is split and
 * submits it after the next piece's, so that "unordered" must count.
 * Unloading it prints the counters in one "stackbd: ..." line.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

static char *lower = "/dev/ram1";
module_param(lower, charp, 0444);
MODULE_PARM_DESC(lower, "block device to stack on");
static unsigned int split_kb = 4;
module_param(split_kb, uint, 0444);
MODULE_PARM_DESC(split_kb, "split every bio into pieces of this many KiB");
static unsigned int recurse;
module_param(recurse, uint, 0444);
MODULE_PARM_DESC(recurse, "1: call stackbd's, 2: @lower's ->submit_bio() directly once per bio from above (make test-inject)");
static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "submit the first clone of a bio from above late (make test-inject)");

static unsigned int nested, unlisted, unordered, untracked, rescued;
static unsigned int splits, clones;
module_param(nested, uint, 0444);
module_param(unlisted, uint, 0444);
module_param(unordered, uint, 0444);
module_param(untracked, uint, 0444);
module_param(rescued, uint, 0444);
module_param(splits, uint, 0444);
module_param(clones, uint, 0444);

/* The tasks in stackbd's ->submit_bio() or with a clone in flight. */
#define MAX_TASKS	64
struct stackbd_task {
	struct task_struct	*task;
	unsigned int		depth;		/* in ->submit_bio() */
	unsigned int		pending;	/* clones not yet completed */
};

static struct stackbd_task tasks[MAX_TASKS];
static DEFINE_SPINLOCK(tasks_lock);

/*
 * Every bio stackbd allocates, ahead of the bio in its bio_set.  A bio
 * from above is cloned first (its root); the pieces split from the root
 * and the clones sent to @lower point to it.
 */
struct stackbd_bio {
	struct stackbd_bio	*root;
	struct bio		*parent;	/* root: bio from above, clone: piece */
	struct stackbd_task	*owner;		/* clone: its submitter */
	struct task_struct	*task;		/* root, clone: submitted by */
	sector_t		sector;		/* clone: where it starts */
	sector_t		next;		/* root: end of the last clone */
	struct bio		*held;		/* root, hold=1: a late clone */
	bool			recursed;	/* root, recurse: done */
	bool			rescued;	/* root: a piece went elsewhere */
	struct bio		bio;
};

/*
 * One bio_set per kind of bio, so that no ->submit_bio() waits on a pool
 * for a bio while holding another from the same pool that is not on the
 * list yet (front waits for its clone, which comes from its own pool).
 */
enum { BS_ROOT, BS_FRONT, BS_HALF, BS_CLONE, NR_BS };
static struct bio_set stackbd_bs[NR_BS];
static struct block_device *lower_bdev;
static struct gendisk *stackbd_disk;
static int stackbd_major;

static struct stackbd_bio *to_sbio(struct bio *bio)
{
	return container_of(bio, struct stackbd_bio, bio);
}

/*
 * A clone of @src for @bdev from @stackbd_bs[@kind], with the fields ahead
 * of it cleared but for those every clone has: @parent, the task, @end_io.
 */
static struct bio *stackbd_clone(struct bio *src, struct block_device *bdev,
				 int kind, struct bio *parent,
				 bio_end_io_t *end_io)
{
	struct bio *clone = bio_alloc_clone(bdev, src, GFP_NOIO,
					    &stackbd_bs[kind]);
	struct stackbd_bio *c = to_sbio(clone);

	memset(c, 0, offsetof(struct stackbd_bio, bio));
	c->parent = parent;
	c->task = current;
	clone->bi_end_io = end_io;
	return clone;
}

static bool stackbd_own(struct bio *bio)
{
	return bio->bi_pool >= &stackbd_bs[0] &&
	       bio->bi_pool < &stackbd_bs[NR_BS];
}

/* Returns the task's slot, taking a free one; NULL when all are taken. */
static struct stackbd_task *task_slot(void)
{
	struct stackbd_task *free = NULL;
	int i;

	lockdep_assert_held(&tasks_lock);
	for (i = 0; i < MAX_TASKS; i++) {
		if (tasks[i].task == current)
			return &tasks[i];
		if (!tasks[i].task && !free)
			free = &tasks[i];
	}
	if (free)
		free->task = current;
	return free;
}

static void task_slot_put(struct stackbd_task *t)
{
	lockdep_assert_held(&tasks_lock);
	if (!t->depth && !t->pending)
		t->task = NULL;
}

/* Ends @parent with the status of @bio, which is put. */
static void stackbd_end(struct bio *bio, struct bio *parent)
{
	if (bio->bi_status && !parent->bi_status)
		parent->bi_status = bio->bi_status;
	bio_put(bio);
	bio_endio(parent);
}

static void stackbd_root_end_io(struct bio *bio)
{
	stackbd_end(bio, to_sbio(bio)->parent);
}

static void stackbd_clone_end_io(struct bio *bio)
{
	struct stackbd_bio *c = to_sbio(bio);
	struct stackbd_task *t = c->owner;
	unsigned long flags;

	spin_lock_irqsave(&tasks_lock, flags);
	if (current != c->task) {
		/* punted to a bio_set's rescuer: the checks do not apply */
		rescued++;
		c->root->rescued = true;
	} else if (!c->root->rescued) {
		/* @lower completes inline: its ->submit_bio() runs now */
		if (t && t->depth)
			nested++;
		if (c->sector < c->root->next)
			unordered++;
	}
	c->root->next = c->sector + bio_sectors(bio);
	if (t) {
		t->pending--;
		task_slot_put(t);
	}
	spin_unlock_irqrestore(&tasks_lock, flags);
	stackbd_end(bio, c->parent);
}

static void stackbd_submit_bio(struct bio *bio)
{
	unsigned int max = split_kb << (10 - SECTOR_SHIFT);
	struct stackbd_bio *root, *c;
	struct bio *clone, *held = NULL, *first = NULL;
	bool direct_half = false, direct_clone = false;
	struct stackbd_task *t;
	unsigned long flags;

	/* a bio from above: go round once more as a root of our own */
	if (!stackbd_own(bio)) {
		clone = stackbd_clone(bio, bio->bi_bdev, BS_ROOT, bio,
				      stackbd_root_end_io);
		to_sbio(clone)->root = to_sbio(clone);
		submit_bio_noacct(clone);
		return;
	}
	root = to_sbio(bio)->root;

	spin_lock_irqsave(&tasks_lock, flags);
	if (current != root->task) {
		rescued++;
		root->rescued = true;
	}
	t = task_slot();
	if (t) {
		if (t->depth)
			nested++;
		if (t->pending)
			unordered++;
		t->depth++;
	} else {
		untracked++;
	}
	if (!current->bio_list)
		unlisted++;
	/* hold=1: the clone kept back goes after this piece's own */
	held = root->held;
	root->held = NULL;
	spin_unlock_irqrestore(&tasks_lock, flags);

	if (max && bio_sectors(bio) > max) {
		struct bio *front = bio_split(bio, max, GFP_NOIO,
					      &stackbd_bs[BS_FRONT]);
		unsigned int half = round_down(bio_sectors(bio) / 2, max);

		to_sbio(front)->root = root;
		bio_chain(front, bio);
		if (half) {
			first = bio_split(bio, half, GFP_NOIO,
					  &stackbd_bs[BS_HALF]);
			to_sbio(first)->root = root;
			bio_chain(first, bio);
		}
		spin_lock_irqsave(&tasks_lock, flags);
		splits++;
		if (recurse == 1 && first && !root->recursed) {
			root->recursed = true;
			direct_half = true;
		}
		spin_unlock_irqrestore(&tasks_lock, flags);
		/* both halves to the same level, the first half first */
		if (first && direct_half)
			stackbd_submit_bio(first);
		else if (first)
			submit_bio_noacct(first);
		submit_bio_noacct(bio);
		bio = front;
	}

	clone = stackbd_clone(bio, lower_bdev, BS_CLONE, bio,
			      stackbd_clone_end_io);
	c = to_sbio(clone);
	c->root = root;
	c->owner = t;
	c->sector = clone->bi_iter.bi_sector;
	spin_lock_irqsave(&tasks_lock, flags);
	clones++;
	if (t)
		t->pending++;
	/* hold=1: keep the first clone of a root back, if more will come */
	if (hold && !root->next && !root->held && !held && first) {
		root->held = clone;
		clone = NULL;
	}
	if (clone && recurse == 2 && !root->recursed) {
		root->recursed = true;
		direct_clone = true;
	}
	spin_unlock_irqrestore(&tasks_lock, flags);
	if (direct_clone)
		lower_bdev->bd_disk->fops->submit_bio(clone);
	else if (clone)
		submit_bio_noacct(clone);
	if (held)
		submit_bio_noacct(held);

	spin_lock_irqsave(&tasks_lock, flags);
	if (t) {
		t->depth--;
		task_slot_put(t);
	}
	spin_unlock_irqrestore(&tasks_lock, flags);
}

static const struct block_device_operations stackbd_fops = {
	.owner		= THIS_MODULE,
	.submit_bio	= stackbd_submit_bio,
};

static int __init stackbd_init(void)
{
	struct request_queue *lq;
	int i, ret;

	if (!split_kb || split_kb > 1024) {
		pr_err("stackbd: split_kb must be 1-1024\n");
		return -EINVAL;
	}
	for (i = 0; i < NR_BS; i++) {
		ret = bioset_init(&stackbd_bs[i], 64,
				  offsetof(struct stackbd_bio, bio),
				  BIOSET_NEED_RESCUER);
		if (ret)
			goto out_bs;
	}
	lower_bdev = blkdev_get_by_path(lower, FMODE_READ | FMODE_WRITE |
					FMODE_EXCL, &stackbd_bs[0]);
	if (IS_ERR(lower_bdev)) {
		ret = PTR_ERR(lower_bdev);
		pr_err("stackbd: cannot open %s: %d\n", lower, ret);
		goto out_bs;
	}
	ret = register_blkdev(0, "stackbd");
	if (ret < 0)
		goto out_bdev;
	stackbd_major = ret;

	ret = -ENOMEM;
	stackbd_disk = blk_alloc_disk(NUMA_NO_NODE);
	if (!stackbd_disk)
		goto out_major;
	stackbd_disk->major = stackbd_major;
	stackbd_disk->first_minor = 0;
	stackbd_disk->minors = 1;
	stackbd_disk->fops = &stackbd_fops;
	stackbd_disk->flags |= GENHD_FL_NO_PART;
	strscpy(stackbd_disk->disk_name, "stackbd0",
		sizeof(stackbd_disk->disk_name));
	lq = bdev_get_queue(lower_bdev);
	if ((split_kb << 10) % queue_logical_block_size(lq)) {
		pr_err("stackbd: split_kb is not a multiple of %s's block size\n",
		       lower);
		ret = -EINVAL;
		goto out_disk;
	}
	blk_queue_logical_block_size(stackbd_disk->queue,
				     queue_logical_block_size(lq));
	blk_queue_physical_block_size(stackbd_disk->queue,
				      queue_physical_block_size(lq));
	set_capacity(stackbd_disk, bdev_nr_sectors(lower_bdev));
	ret = add_disk(stackbd_disk);
	if (ret)
		goto out_disk;
	pr_info("stackbd: stackbd0 on %s, split at %u KiB%s%s\n", lower,
		split_kb, recurse ? ", recursing" : "", hold ? ", holding" : "");
	return 0;

out_disk:
	put_disk(stackbd_disk);
out_major:
	unregister_blkdev(stackbd_major, "stackbd");
out_bdev:
	blkdev_put(lower_bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
out_bs:
	while (i--)
		bioset_exit(&stackbd_bs[i]);
	return ret;
}

static void __exit stackbd_exit(void)
{
	int i;

	del_gendisk(stackbd_disk);
	put_disk(stackbd_disk);
	unregister_blkdev(stackbd_major, "stackbd");
	blkdev_put(lower_bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
	for (i = 0; i < NR_BS; i++)
		bioset_exit(&stackbd_bs[i]);
	pr_info("stackbd: nested=%u unlisted=%u unordered=%u untracked=%u rescued=%u splits=%u clones=%u\n",
		nested, unlisted, unordered, untracked, rescued, splits, clones);
}

module_init(stackbd_init);
module_exit(stackbd_exit);
MODULE_DESCRIPTION("bio-based stacking device for the syncio VM tests");
MODULE_LICENSE("GPL");
