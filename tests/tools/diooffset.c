// SPDX-License-Identifier: GPL-2.0
/*
 * diooffset: O_DIRECT reads and writes of a block device from a buffer
 * that starts OFFSET bytes into a page, with guard bytes around it.
 *
 *   diooffset DEVICE OFFSET [LENGTH]
 *
 * LENGTH (default 4096) bytes at device offset 0 are first written
 * with a known pattern through a page-aligned O_DIRECT buffer.  Then:
 *
 *   read:  pread() LENGTH bytes with O_DIRECT into the offset buffer;
 *   write: pwrite() a second pattern from the offset buffer, then read
 *          the device back through a page-aligned buffer.
 *
 * The kernel may refuse the unaligned transfer (EINVAL, the device's
 * DMA alignment) or do it; what it must not do is transfer wrong data
 * or touch memory outside the buffer.  A refused write must leave the
 * device's data as it was.
 *
 * Prints "read=R write=W", each ok, refused, corrupt (done, but with
 * wrong data or guard bytes overwritten) or failed (another error), and
 * exits 0 when both are ok or refused, 1 otherwise (each error found is
 * printed), 2 on usage or system errors.  The patterns come from a
 * generator with no short period, so a page or half page copied to the
 * wrong place is caught.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GUARD 0xee

static int errors;

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
		if (p[i] == GUARD)	/* the guard byte never occurs in data */
			p[i] = 0;
	}
}

static void compare(const char *what, const unsigned char *got,
		    const unsigned char *want, size_t n)
{
	size_t i, first = n, bad = 0;

	for (i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			if (first == n)
				first = i;
			bad++;
		}
	}
	if (bad) {
		printf("error: %s: %zu of %zu bytes wrong, first at %zu\n",
		       what, bad, n, first);
		errors++;
	}
}

static void guards(const char *what, const unsigned char *area, size_t off,
		   size_t len, size_t total)
{
	size_t i, before = 0, after = 0;

	for (i = 0; i < off; i++)
		before += area[i] != GUARD;
	for (i = off + len; i < total; i++)
		after += area[i] != GUARD;
	if (before || after) {
		printf("error: %s: %zu guard bytes before the buffer and %zu after it overwritten\n",
		       what, before, after);
		errors++;
	}
}

/* what became of a transfer of len bytes that returned r */
static const char *outcome(const char *op, ssize_t r, size_t len)
{
	int err = errno;

	if (r < 0 && err == EINVAL)
		return "refused";
	if (r != (ssize_t)len) {
		printf("error: %s: returned %zd (%s)\n", op, r, r < 0 ? strerror(err) : "short");
		errors++;
		return "failed";
	}
	return "ok";
}

int main(int argc, char **argv)
{
	unsigned char *area, *aligned, *want1, *want2, *buf;
	size_t off, len, total;
	const char *rres, *wres;
	size_t PG;
	int fd, before;

	/* the last line is the verdict: keep stdout in order with stderr */
	setvbuf(stdout, NULL, _IOLBF, 0);
	PG = sysconf(_SC_PAGESIZE);

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: diooffset DEVICE OFFSET [LENGTH]\n");
		return 2;
	}
	off = strtoul(argv[2], NULL, 0);
	len = argc > 3 ? strtoul(argv[3], NULL, 0) : PG;
	if (off >= PG || !len || len % 512) {
		fprintf(stderr, "diooffset: OFFSET must be below %zu, LENGTH a multiple of 512\n", PG);
		return 2;
	}
	/* a guard page before the buffer's page, the buffer, a guard page after */
	total = PG + ((off + len + PG - 1) / PG) * PG + PG;
	if (posix_memalign((void **)&area, PG, total) ||
	    posix_memalign((void **)&aligned, PG, len)) {
		perror("diooffset: posix_memalign");
		return 2;
	}
	want1 = malloc(len);
	want2 = malloc(len);
	if (!want1 || !want2) {
		perror("diooffset: malloc");
		return 2;
	}
	fill(want1, len, 1000 + off);
	fill(want2, len, 2000 + off);
	buf = area + PG + off;

	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "diooffset: open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	memcpy(aligned, want1, len);
	if (pwrite(fd, aligned, len, 0) != (ssize_t)len) {
		fprintf(stderr, "diooffset: aligned write: %s\n", strerror(errno));
		return 2;
	}

	/* read into the offset buffer */
	memset(area, GUARD, total);
	before = errors;
	rres = outcome("read", pread(fd, buf, len, 0), len);
	if (!strcmp(rres, "refused")) {
		guards("refused read", area, PG + off, 0, total);
	} else if (!strcmp(rres, "ok")) {
		compare("read: data", buf, want1, len);
		guards("read", area, PG + off, len, total);
	}
	if (errors != before && strcmp(rres, "failed"))
		rres = "corrupt";

	/* write from the offset buffer */
	memset(area, GUARD, total);
	memcpy(buf, want2, len);
	before = errors;
	wres = outcome("write", pwrite(fd, buf, len, 0), len);
	guards("write", area, PG + off, len, total);
	compare("write: buffer changed", buf, want2, len);
	memset(aligned, 0, len);
	if (pread(fd, aligned, len, 0) != (ssize_t)len) {
		fprintf(stderr, "diooffset: aligned read: %s\n", strerror(errno));
		return 2;
	}
	if (!strcmp(wres, "ok"))
		compare("write: device data", aligned, want2, len);
	else if (!strcmp(wres, "refused"))
		compare("refused write: device data", aligned, want1, len);
	if (errors != before && strcmp(wres, "failed"))
		wres = "corrupt";

	printf("read=%s write=%s\n", rres, wres);
	close(fd);
	return errors ? 1 : 0;
}
