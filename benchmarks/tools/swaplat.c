// SPDX-License-Identifier: GPL-2.0
/*
 * swaplat: swap latency in the spirit of pmbench.  Touches a working set
 * larger than the caller's cgroup v2 memory.max at random pages and times
 * every access; an access during which the process took a major fault is a
 * "faulting access".  Prints count, average, median and p99 of faulting
 * accesses and a log2 histogram, as key=value lines.
 *
 * Page content is half random, half zero, so that zram compresses about as
 * much as real anonymous memory and no page is "same filled".
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t rs = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline long majflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_majflt;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t mib = 96, n = 20000, warm = 2000, npages, ps, nf = 0;
	unsigned int wpct = 0;
	uint64_t *lat, sum = 0, hist[40] = { 0 };
	volatile char *mem;
	int c;

	while ((c = getopt(argc, argv, "s:n:W:w:S:")) != -1) {
		switch (c) {
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'W': warm = strtoul(optarg, NULL, 0); break;
		case 'w': wpct = strtoul(optarg, NULL, 0); break;
		case 'S': rs ^= strtoull(optarg, NULL, 0) * 0x9e3779b97f4a7c15ULL; break;
		default:
			fprintf(stderr, "usage: swaplat [-s MiB] [-n accesses] [-W warmup] [-w write%%] [-S seed]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ps = sysconf(_SC_PAGESIZE);
	npages = mib * 1024 * 1024 / ps;
	lat = calloc(n, sizeof(*lat));
	mem = mmap(NULL, npages * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!lat || mem == MAP_FAILED) {
		perror("swaplat");
		return 2;
	}
	madvise((void *)mem, npages * ps, MADV_NOHUGEPAGE);
	for (size_t p = 0; p < npages; p++) {
		uint64_t *w = (uint64_t *)(mem + p * ps);

		for (size_t i = 0; i < ps / 16; i++)
			w[i] = rng();
	}
	for (size_t i = 0; i < warm; i++)
		mem[(rng() % npages) * ps + 8]++;

	for (size_t i = 0; i < n; i++) {
		size_t p = rng() % npages;
		int wr = rng() % 100 < wpct;
		long f0 = majflt();
		uint64_t t0 = now_ns(), t;

		if (wr)
			mem[p * ps + 64]++;
		else
			(void)mem[p * ps + 64];
		t = now_ns() - t0;
		if (majflt() != f0) {
			lat[nf++] = t;
			sum += t;
			hist[63 - __builtin_clzll(t | 1)]++;
		}
	}
	qsort(lat, nf, sizeof(*lat), cmp_u64);
	printf("accesses=%zu\nfaults=%zu\n", n, nf);
	if (nf) {
		printf("fault_avg_ns=%llu\nfault_median_ns=%llu\nfault_p99_ns=%llu\n",
		       (unsigned long long)(sum / nf),
		       (unsigned long long)lat[nf / 2],
		       (unsigned long long)lat[nf * 99 / 100]);
		for (int b = 0; b < 40; b++)
			if (hist[b])
				printf("hist_%llu_ns=%llu\n", 1ULL << b,
				       (unsigned long long)hist[b]);
	}
	return 0;
}
