// SPDX-License-Identifier: GPL-2.0
/*
 * swapthreads: several threads of one process fault the same swapped-out
 * anonymous pages at the same moment, and each checks what it reads.
 *
 * On a swap device with SWP_SYNCHRONOUS_IO, do_swap_page() reads a page
 * whose swap count is 1 without going through the swap cache, so two
 * threads faulting the same pte each allocate a page and read the slot,
 * and only the pte lock decides whose page is installed.  Each round pages
 * the working set out (MADV_PAGEOUT), releases every thread at once (a
 * barrier), and has each read every page in the same order, so that most
 * faults meet another thread's fault on the same page; every word of each
 * page is checked against the page's current version.  Between rounds the
 * main thread rewrites one page in K with the next version, so a stale
 * slot or a lost write-back would be caught in the next round.
 *
 * Prints key=value lines (pages, rounds, threads, major faults, pswpin and
 * pswpout moved, mismatches) and exits 1 on any mismatch, 2 on errors.
 */
#define _GNU_SOURCE
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

static size_t page_size, npages;
static uint8_t *set;
static uint8_t *version;
static unsigned int nthreads = 4, rounds = 8, every = 3;
static pthread_barrier_t start, done;
static unsigned long mismatches[MAX_THREADS];
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
	const volatile uint64_t *p =
		(const volatile uint64_t *)(set + page * page_size);

	for (size_t i = 0; i < page_size / 8; i++)
		if (p[i] != mix(page, ver, i))
			return -1;
	return 0;
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

static void *reader(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;

	for (unsigned int r = 0; r < rounds; r++) {
		pthread_barrier_wait(&start);
		for (size_t p = 0; p < npages; p++) {
			if (check(p, version[p]) == 0)
				continue;
			mismatches[id]++;
			pthread_mutex_lock(&bad_lock);
			if (first_bad < 0)
				first_bad = (long)p;
			pthread_mutex_unlock(&bad_lock);
		}
		pthread_barrier_wait(&done);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: swapthreads [-s MiB] [-t threads] [-r rounds] [-k K]\n"
		"  -s  working set in MiB (default 32)\n"
		"  -t  threads faulting the same pages (default 4, max %d)\n"
		"  -r  rounds of page-out and concurrent read (default 8)\n"
		"  -k  rewrite one page in K between rounds (default 3)\n",
		MAX_THREADS);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long mb = 32, bad = 0, in0, out0;
	pthread_t tid[MAX_THREADS];
	struct rusage ru;
	int c;

	while ((c = getopt(argc, argv, "s:t:r:k:")) != -1) {
		switch (c) {
		case 's': mb = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = strtoul(optarg, NULL, 0); break;
		case 'r': rounds = strtoul(optarg, NULL, 0); break;
		case 'k': every = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!mb || !nthreads || nthreads > MAX_THREADS || !rounds || !every)
		usage();

	page_size = sysconf(_SC_PAGESIZE);
	npages = mb * 1024 * 1024 / page_size;
	set = mmap(NULL, npages * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	version = calloc(npages, 1);
	if (set == MAP_FAILED || !version) {
		perror("swapthreads: mmap");
		return 2;
	}
	madvise(set, npages * page_size, MADV_NOHUGEPAGE);
	for (size_t p = 0; p < npages; p++)
		fill(p, 0);

	in0 = vmstat("pswpin");
	out0 = vmstat("pswpout");
	if (pthread_barrier_init(&start, NULL, nthreads + 1) ||
	    pthread_barrier_init(&done, NULL, nthreads + 1)) {
		perror("swapthreads: barrier");
		return 2;
	}
	for (unsigned int t = 0; t < nthreads; t++)
		if (pthread_create(&tid[t], NULL, reader,
				   (void *)(uintptr_t)t)) {
			perror("swapthreads: pthread_create");
			return 2;
		}
	for (unsigned int r = 0; r < rounds; r++) {
		if (madvise(set, npages * page_size, MADV_PAGEOUT)) {
			perror("swapthreads: MADV_PAGEOUT");
			return 2;
		}
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		/* rewrite one page in K: the next round must see the new data */
		for (size_t p = r % every; p < npages; p += every) {
			version[p]++;
			fill(p, version[p]);
		}
	}
	for (unsigned int t = 0; t < nthreads; t++) {
		pthread_join(tid[t], NULL);
		bad += mismatches[t];
	}
	/* a last check of everything, single-threaded */
	madvise(set, npages * page_size, MADV_PAGEOUT);
	for (size_t p = 0; p < npages; p++)
		if (check(p, version[p])) {
			bad++;
			if (first_bad < 0)
				first_bad = (long)p;
		}
	getrusage(RUSAGE_SELF, &ru);
	printf("pages=%zu\nrounds=%u\nthreads=%u\nmajflt=%ld\n", npages,
	       rounds, nthreads, ru.ru_majflt);
	printf("pswpin=%lu\npswpout=%lu\nmismatches=%lu\n",
	       vmstat("pswpin") - in0, vmstat("pswpout") - out0, bad);
	if (bad) {
		printf("first_bad_page=%ld\n", first_bad);
		fprintf(stderr, "swapthreads: %lu pages read wrong data\n", bad);
		return 1;
	}
	return 0;
}
