// SPDX-License-Identifier: GPL-2.0
/*
 * swapverify: fill an anonymous working set with per-page unique content,
 * make the kernel swap it (cgroup memory.max from the caller, and/or
 * MADV_PAGEOUT), do random reads and writes, then verify every page.
 *
 * Every 8-byte word of page p at version v holds mix(p, v, word), so a page
 * that comes back from swap with another page's data, an older version, or
 * a torn write is caught.  Prints what it measured as "key=value" lines and
 * exits 1 on any mismatch, 2 on usage or system errors.
 *
 * -F runs the fill, the access phase and the verify with the task's
 * make-it-fail set, so that the kernel's fault injection (failslab,
 * fail_page_alloc with task-filter) fails allocations made on its behalf:
 * its page faults and the direct reclaim, swap-outs included, that they
 * run into under the caller's memory.max.  Setup and the report run
 * without it.
 *
 * -B N survives swap I/O errors: a SIGBUS (a swap-in that failed) on a
 * page's access is counted and the access retried, up to N times per
 * access; a page still unreadable then is counted as such and left out of
 * every later access and of the verify.  Its data must never come back
 * wrong: a page that reads is verified like any other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static size_t page_size;
static int compressible;	/* -Z: one word in 64 set, the rest zero */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static inline uint64_t mix(uint64_t page, uint64_t ver, uint64_t word)
{
	uint64_t x = page * 0x9e3779b97f4a7c15ULL ^ ver << 48 ^ word * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 29;
	return x;
}

static void fill(uint64_t *p, size_t page, uint8_t ver)
{
	size_t n = page_size / 8;

	for (size_t i = 0; i < n; i++)
		p[i] = compressible && i % 64 ? 0 : mix(page, ver, i);
}

static int check(const uint64_t *p, size_t page, uint8_t ver)
{
	size_t n = page_size / 8;

	for (size_t i = 0; i < n; i++)
		if (p[i] != (compressible && i % 64 ? 0 : mix(page, ver, i)))
			return -1;
	return 0;
}

/* -B: SIGBUS recovery around each page access */
static unsigned long bus_retries;	/* 0: a SIGBUS kills, as without -B */
static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;
static size_t sigbus_events, pages_sigbus, pages_unreadable;
static uint8_t *bus_state;		/* per page: 1 saw a SIGBUS, 2 unreadable */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si; (void)uc;
	if (!bus_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	bus_armed = 0;
	siglongjmp(bus_jmp, 1);
}

enum { CHECK, REWRITE, FIRST_FILL };

/*
 * Run one access of page @page: CHECK it, REWRITE it with its next
 * version, or give it its FIRST_FILL (version 0: a page partly filled can
 * be swapped out and in again before the fill ends).  With -B a SIGBUS
 * retries it.  Returns the access's result, or 0 for a page given up on
 * (now or earlier), which is then not counted as verified.
 */
static int access_page(char *mem, size_t page, uint8_t *ver, int write, int *skipped)
{
	uint64_t *pg = (uint64_t *)(mem + page * page_size);
	volatile unsigned long tries = 0;
	volatile int w = write;
	volatile int r;

	*skipped = 0;
	if (bus_state && bus_state[page] == 2) {
		*skipped = 1;
		return 0;
	}
	if (bus_retries && sigsetjmp(bus_jmp, 1)) {
		sigbus_events++;
		if (bus_state[page] == 0) {
			bus_state[page] = 1;
			pages_sigbus++;
		}
		if (++tries > bus_retries) {
			bus_state[page] = 2;
			pages_unreadable++;
			*skipped = 1;
			return 0;
		}
	}
	bus_armed = 1;
	if (w == CHECK) {
		r = check(pg, page, ver[page]);
	} else {
		fill(pg, page, w == REWRITE ? ver[page] + 1 : 0);
		r = 0;
	}
	bus_armed = 0;
	if (w == REWRITE)
		ver[page]++;
	return r;
}

static long vmstat(const char *key)
{
	char name[64];
	long val;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &val) == 2) {
		if (!strcmp(name, key)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}

struct snap {
	long pswpin, pswpout, majflt;
	double t;
};

static void snap(struct snap *s)
{
	struct rusage ru;
	struct timespec ts;

	getrusage(RUSAGE_SELF, &ru);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->pswpin = vmstat("pswpin");
	s->pswpout = vmstat("pswpout");
	s->majflt = ru.ru_majflt;
	s->t = ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *phase, const struct snap *a, const struct snap *b)
{
	printf("%s_pswpin=%ld\n%s_pswpout=%ld\n%s_majflt=%ld\n%s_seconds=%.3f\n",
	       phase, b->pswpin - a->pswpin, phase, b->pswpout - a->pswpout,
	       phase, b->majflt - a->majflt, phase, b->t - a->t);
}

/*
 * -D DEV -C N: overwrite the swap slots of up to N swapped-out pages on the
 * swap device DEV itself.  The kernel refuses write() to an active swap
 * device and SIGBUSes writes through a mapping of it, but BLKZEROOUT is a
 * block-layer request of its own: each slot is zeroed on the device with
 * it.  The slot of a page comes from /proc/self/pagemap: bit 62 marks a
 * swap entry, bits 0-4 hold its type and bits 5-54 its offset in pages.
 * The pages are left alone, so the kernel reads the zeroed slot back on the
 * next fault: the verify must catch it.  Returns the slots overwritten.
 */
static size_t corrupt_slots(const char *mem, size_t npages, const char *dev, size_t n)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int fd = open(dev, O_WRONLY);
	size_t done = 0;

	if (pm < 0 || fd < 0) {
		perror("swapverify: corrupt setup");
		exit(2);
	}
	/* Spread the victims over the set: every (npages / n)th swapped page. */
	for (size_t p = 0; p < npages && done < n; p += npages / n ?: 1) {
		uint64_t e, range[2];
		off_t at = (off_t)((uintptr_t)mem / page_size + p) * 8;

		for (size_t q = p; q < npages && q < p + 64; q++, at += 8) {
			if (pread(pm, &e, 8, at) != 8) {
				perror("swapverify: pagemap");
				exit(2);
			}
			if (!(e >> 62 & 1) || e >> 63)
				continue;
			range[0] = ((e & ((1ULL << 55) - 1)) >> 5) * page_size;
			range[1] = page_size;
			if (ioctl(fd, BLKZEROOUT, range)) {
				perror("swapverify: BLKZEROOUT on a swap slot");
				exit(2);
			}
			done++;
			break;
		}
	}
	close(fd);
	close(pm);
	return done;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: swapverify [-s MiB] [-n ops] [-w write%%] [-S seed] [-q]\n"
		"                  [-o] [-H] [-Z] [-c page] [-D dev -C n] [-B n] [-P prefix] [-F]\n"
		"  -s  working set size in MiB (default 64)\n"
		"  -n  random operations after the fill (default 20000)\n"
		"  -w  percentage of operations that rewrite a page (default 30)\n"
		"  -q  sequential read pass instead of random operations\n"
		"  -o  MADV_PAGEOUT the whole set before the access phase\n"
		"  -H  ask for transparent huge pages (MADV_HUGEPAGE)\n"
		"  -Z  compressible content (one word in 64 unique, the rest 0)\n"
		"  -c  corrupt page N (with -B: the first readable page from N on)\n"
		"      before the final verify (tests the test)\n"
		"  -C  after the fill, overwrite the swap slots of n swapped-out\n"
		"      pages on swap device -D with BLKZEROOUT (tests swap-in)\n"
		"  -B  retry an access that gets SIGBUS up to n times, then count\n"
		"      the page unreadable and leave it out (swap I/O errors)\n"
		"  -P  after the fill, create PREFIX.ready and wait for PREFIX.go\n"
		"      to exist before the access phase (the fill timed apart)\n"
		"  -F  set /proc/self/make-it-fail from the fill to the end of the\n"
		"      verify (failslab, fail_page_alloc with task-filter)\n");
	exit(2);
}

/* -F: the fd of /proc/self/make-it-fail, opened before anything fails */
static int fail_fd = -1;

static void make_it_fail(int on)
{
	if (fail_fd >= 0 && pwrite(fail_fd, on ? "1" : "0", 1, 0) != 1) {
		perror("swapverify: /proc/self/make-it-fail");
		exit(2);
	}
}

/*
 * -P PREFIX: tell the caller that the fill is done (PREFIX.ready) and
 * wait, touching nothing, until it says go (PREFIX.go exists), so that
 * another process can put the filled set under memory pressure.
 */
static int pause_for(const char *prefix)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s.ready", prefix);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("swapverify: -P");
		return -1;
	}
	close(fd);
	snprintf(path, sizeof(path), "%s.go", prefix);
	while (access(path, F_OK))
		usleep(100000);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = 64, npages, ops = 20000, bad = 0, verified = 0;
	unsigned int wpct = 30;
	long corrupt = -1;
	const char *slot_dev = NULL, *pause_prefix = NULL;
	size_t slots = 0, slots_done = 0;
	int seq = 0, pageout = 0, huge = 0, failme = 0, c;
	struct snap s0, s1, s2, s3;
	uint8_t *ver;
	char *mem;

	while ((c = getopt(argc, argv, "s:n:w:S:qoHZc:D:C:B:P:F")) != -1) {
		switch (c) {
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'n': ops = strtoul(optarg, NULL, 0); break;
		case 'w': wpct = strtoul(optarg, NULL, 0); break;
		case 'S': rng_state ^= strtoull(optarg, NULL, 0) * 0xff51afd7ed558ccdULL; break;
		case 'q': seq = 1; break;
		case 'o': pageout = 1; break;
		case 'H': huge = 1; break;
		case 'Z': compressible = 1; break;
		case 'c': corrupt = strtol(optarg, NULL, 0); break;
		case 'D': slot_dev = optarg; break;
		case 'C': slots = strtoul(optarg, NULL, 0); break;
		case 'B': bus_retries = strtoul(optarg, NULL, 0); break;
		case 'P': pause_prefix = optarg; break;
		case 'F': failme = 1; break;
		default: usage();
		}
	}
	if (!mib || wpct > 100 || (slots && !slot_dev))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	npages = mib * 1024 * 1024 / page_size;
	ver = calloc(npages, 1);
	if (bus_retries) {
		/*
		 * The program's own memory (versions, page states, stack,
		 * data) must not be swapped: a SIGBUS there is not a page of
		 * the set.  Lock what exists now; the set is mapped after.
		 */
		bus_state = calloc(npages, 1);
		if (!ver || !bus_state || mlockall(MCL_CURRENT)) {
			perror("swapverify: -B setup");
			return 2;
		}
	}
	mem = mmap(NULL, npages * page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ver || mem == MAP_FAILED) {
		perror("swapverify: allocation");
		return 2;
	}
	if (madvise(mem, npages * page_size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) && huge)
		perror("swapverify: MADV_HUGEPAGE");
	if (bus_retries) {
		struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };

		if (sigaction(SIGBUS, &sa, NULL)) {
			perror("swapverify: -B setup");
			return 2;
		}
	}

	if (failme) {
		fail_fd = open("/proc/self/make-it-fail", O_WRONLY);
		if (fail_fd < 0) {
			perror("swapverify: -F (CONFIG_FAULT_INJECTION?)");
			return 2;
		}
	}
	snap(&s0);
	make_it_fail(1);
	for (size_t p = 0; p < npages; p++) {
		int skip;

		access_page(mem, p, ver, FIRST_FILL, &skip);
	}
	if (pageout && madvise(mem, npages * page_size, MADV_PAGEOUT)) {
		perror("swapverify: MADV_PAGEOUT");
		return 2;
	}
	if (slots)
		slots_done = corrupt_slots(mem, npages, slot_dev, slots);
	snap(&s1);
	if (pause_prefix && pause_for(pause_prefix))
		return 2;

	if (seq) {
		for (size_t p = 0; p < npages; p++) {
			int skip;

			if (access_page(mem, p, ver, CHECK, &skip))
				bad++;
			verified += !skip;
		}
	} else {
		for (size_t i = 0; i < ops; i++) {
			size_t p = rng() % npages;
			int w = rng() % 100 < wpct ? REWRITE : CHECK, skip;

			if (access_page(mem, p, ver, w, &skip))
				bad++;
			verified += w == CHECK && !skip;
		}
	}
	snap(&s2);

	/*
	 * Fault the page in under -B's guard first, then flip the byte; with
	 * -B, a page given up on as unreadable is passed over for the next
	 * one that reads, so that the flip lands on a page the verify checks.
	 */
	for (size_t p = corrupt; corrupt >= 0 && p < npages; p++) {
		int skip;

		access_page(mem, p, ver, CHECK, &skip);
		if (skip)
			continue;
		mem[p * page_size + 123] ^= 0x5a;
		break;
	}
	for (size_t p = 0; p < npages; p++) {
		int skip;

		if (access_page(mem, p, ver, CHECK, &skip)) {
			if (bad < 10)
				fprintf(stderr, "swapverify: page %zu (version %u) mismatch\n",
					p, ver[p]);
			bad++;
		}
		verified += !skip;
	}
	make_it_fail(0);
	snap(&s3);

	printf("pages=%zu\nops=%zu\npages_verified=%zu\nmismatches=%zu\n",
	       npages, seq ? npages : ops, verified, bad);
	if (bus_retries)
		printf("sigbus=%zu\npages_sigbus=%zu\npages_unreadable=%zu\n",
		       sigbus_events, pages_sigbus, pages_unreadable);
	if (slots)
		printf("slots_overwritten=%zu\n", slots_done);
	report("fill", &s0, &s1);
	report("access", &s1, &s2);
	report("verify", &s2, &s3);
	report("total", &s0, &s3);
	return bad ? 1 : 0;
}
