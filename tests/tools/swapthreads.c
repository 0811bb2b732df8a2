// SPDX-License-Identifier: GPL-2.0
/*
 * swapthreads: several threads of one process fault the same anonymous
 * pages while another thread keeps paging them out, and every page is
 * checked by the one thread that writes it.
 *
 * On a swap device with SWP_SYNCHRONOUS_IO, do_swap_page() reads a page
 * whose swap count is 1 without the swap cache: two threads faulting the
 * same pte each read the slot into a page of their own, and only the pte
 * lock and pte_same() decide whose page is installed.  If, between one
 * thread's read and its pte_same(), the page is swapped in by another
 * thread, rewritten and swapped out again to the same slot, the pte looks
 * the same and the stale copy can be installed (mainline closed that
 * window in 6.8 with a swapcache_prepare() guard).
 *
 * Each page has an owner, page % threads.  In each round every thread
 * walks every page in the same order: on the pages it owns it checks
 * every word against the page's current version, then writes the next
 * version; on the others it only reads a word, to fault the page while
 * its owner may be faulting it too.  A pageout thread calls MADV_PAGEOUT
 * on the whole set in a loop meanwhile, so pages are swapped out under
 * the walkers.  A walker starts round r only once r page-out passes have
 * completed, so that every round meets swap even on a device where one
 * pass takes longer than a round (btt under emulation).  After the last
 * round one thread checks every page.
 *
 * Prints key=value lines: pages, rounds, threads, checks (page checks
 * made), bad_pages (pages that read wrong data at least once),
 * failed_checks, pageouts (MADV_PAGEOUT passes), majflt, and the pswpin
 * and pswpout moved; exits 1 if a page read wrong data, 2 on errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define MAX_THREADS 64
#define MAX_ROUNDS 250		/* a page's version is 8 bits */

static size_t page_size, npages;
static uint8_t *set;
static uint8_t *version;	/* written only by the page's owner */
static uint8_t *bad;		/* likewise */
static unsigned int nthreads = 4, rounds = 8;
static unsigned long checks[MAX_THREADS], failed[MAX_THREADS];
static volatile int stop_pageout;
static long corrupt_page = -1;	/* -c: a write the page's version misses */
static unsigned long pageouts;	/* written by the pageout thread only */
static long first_bad = -1;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t mix(uint64_t page, uint64_t ver, uint64_t word)
{
	uint64_t x = page * 0x9e3779b97f4a7c15ULL ^ ver << 48 ^
		     word * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 29;
	return x;
}

static void fill(size_t page, uint8_t ver)
{
	uint64_t *p = (uint64_t *)(set + page * page_size);

	for (size_t i = 0; i < page_size / 8; i++)
		p[i] = mix(page, ver, i);
}

static int check(size_t page, uint8_t ver)
{
	const uint64_t *p = (const uint64_t *)(set + page * page_size);

	for (size_t i = 0; i < page_size / 8; i++)
		if (p[i] != mix(page, ver, i))
			return -1;
	return 0;
}

static void record_bad(unsigned int id, size_t page)
{
	failed[id]++;
	bad[page] = 1;
	pthread_mutex_lock(&bad_lock);
	if (first_bad < 0)
		first_bad = (long)page;
	pthread_mutex_unlock(&bad_lock);
}

static unsigned long vmstat(const char *key)
{
	char name[64];
	unsigned long v, r = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %lu", name, &v) == 2)
		if (!strcmp(name, key))
			r = v;
	fclose(f);
	return r;
}

static void *pageout(void *arg)
{
	(void)arg;
	while (!stop_pageout) {
		if (madvise(set, npages * page_size, MADV_PAGEOUT) == 0)
			__atomic_store_n(&pageouts, pageouts + 1,
					 __ATOMIC_RELEASE);
		else
			usleep(1000);
	}
	return NULL;
}

/* Wait for n page-out passes in all, so that round n meets swap. */
static void wait_pageouts(unsigned long n)
{
	while (__atomic_load_n(&pageouts, __ATOMIC_ACQUIRE) < n)
		usleep(1000);
}

static void *walker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	volatile uint8_t sink;

	for (unsigned int r = 0; r < rounds; r++) {
		wait_pageouts(r);
		for (size_t p = 0; p < npages; p++) {
			if (p % nthreads != id) {
				/* fault it, racing its owner */
				sink = set[p * page_size + (r * 64) % page_size];
				(void)sink;
				continue;
			}
			checks[id]++;
			if (check(p, version[p]))
				record_bad(id, p);
			version[p]++;
			fill(p, version[p]);
			/* -c: the next version written, the old one recorded */
			if (r == 0 && (long)p == corrupt_page)
				fill(p, version[p] + 1);
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: swapthreads [-s MiB] [-t threads] [-r rounds] [-c page]\n"
		"  -s  working set in MiB (default 32)\n"
		"  -t  threads walking the same pages (default 4, max %d)\n"
		"  -r  rounds (default 8, max %d)\n"
		"  -c  write one version too many to this page (tests the test)\n",
		MAX_THREADS, MAX_ROUNDS);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long mb = 32, bad_pages = 0, nchecks = 0, nfailed = 0;
	unsigned long in0, out0;
	pthread_t tid[MAX_THREADS], po;
	struct rusage ru;
	int c, rc;

	while ((c = getopt(argc, argv, "s:t:r:c:")) != -1) {
		switch (c) {
		case 's': mb = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = strtoul(optarg, NULL, 0); break;
		case 'r': rounds = strtoul(optarg, NULL, 0); break;
		case 'c': corrupt_page = strtol(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!mb || !nthreads || nthreads > MAX_THREADS || !rounds ||
	    rounds > MAX_ROUNDS)
		usage();

	page_size = sysconf(_SC_PAGESIZE);
	npages = mb * 1024 * 1024 / page_size;
	set = mmap(NULL, npages * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (set == MAP_FAILED) {
		perror("swapthreads: mmap");
		return 2;
	}
	version = calloc(npages, 1);
	bad = calloc(npages, 1);
	if (!version || !bad) {
		fprintf(stderr, "swapthreads: out of memory\n");
		return 2;
	}
	/* 4 KiB pages: MADV_PAGEOUT splits nothing, every pte its own slot */
	madvise(set, npages * page_size, MADV_NOHUGEPAGE);
	for (size_t p = 0; p < npages; p++)
		fill(p, 0);

	in0 = vmstat("pswpin");
	out0 = vmstat("pswpout");
	rc = pthread_create(&po, NULL, pageout, NULL);
	if (rc) {
		fprintf(stderr, "swapthreads: pthread_create: %s\n", strerror(rc));
		return 2;
	}
	for (unsigned int t = 0; t < nthreads; t++) {
		rc = pthread_create(&tid[t], NULL, walker, (void *)(uintptr_t)t);
		if (rc) {
			fprintf(stderr, "swapthreads: pthread_create: %s\n",
				strerror(rc));
			return 2;
		}
	}
	for (unsigned int t = 0; t < nthreads; t++) {
		pthread_join(tid[t], NULL);
		nchecks += checks[t];
	}
	stop_pageout = 1;
	pthread_join(po, NULL);

	/* the last check, of every page, after one more page-out */
	if (madvise(set, npages * page_size, MADV_PAGEOUT) == 0)
		pageouts++;
	for (size_t p = 0; p < npages; p++) {
		nchecks++;
		if (check(p, version[p]))
			record_bad(0, p);
	}
	nfailed = 0;
	for (unsigned int t = 0; t < nthreads; t++)
		nfailed += failed[t];
	for (size_t p = 0; p < npages; p++)
		bad_pages += bad[p];

	getrusage(RUSAGE_SELF, &ru);
	printf("pages=%zu\nrounds=%u\nthreads=%u\nchecks=%lu\n", npages,
	       rounds, nthreads, nchecks);
	printf("bad_pages=%lu\nfailed_checks=%lu\npageouts=%lu\nmajflt=%ld\n",
	       bad_pages, nfailed, pageouts, ru.ru_majflt);
	printf("pswpin=%lu\npswpout=%lu\n", vmstat("pswpin") - in0,
	       vmstat("pswpout") - out0);
	if (bad_pages) {
		printf("first_bad_page=%ld\n", first_bad);
		fprintf(stderr, "swapthreads: %lu pages read wrong data (%lu failed checks)\n",
			bad_pages, nfailed);
		return 1;
	}
	return 0;
}
