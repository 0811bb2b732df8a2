// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts the guest instructions executed
 * in each translation block, inside a window.  The window opens and closes
 * each time the guest executes the block at address toggle= (after the
 * first skip= executions of it).  At exit it writes one line per block
 * executed in a window: "vaddr instructions executions".
 *
 *   qemu-system-x86_64 ... -plugin insnprof.so,toggle=ffffffff810bb471,skip=1,out=F
 *
 * Debian ships no qemu-plugin.h, so the few declarations used are written
 * out below.  They are QEMU's plugin API version 1 (QEMU 7.x, as in
 * Debian bookworm); QEMU refuses to load a plugin of another version.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From QEMU's include/qemu/qemu-plugin.h, API version 1. */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_CB_NO_REGS		0
#define QEMU_PLUGIN_INLINE_ADD_U64	0
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *udata);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  vcpu_udata_cb_t cb, int flags, void *udata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *udata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* One per (address, length) of a translated block; never freed. */
struct block {
	uint64_t vaddr, insns;
	uint64_t count;		/* executions, bumped inline by TCG code */
	uint64_t start;		/* count when the window opened */
	uint64_t acc;		/* executions inside windows */
};

#define NSLOT (1u << 21)
static struct block **slots;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t toggle;
static int skip, hits, windows;
static bool open_;
static const char *outpath = "insnprof.out";

static void for_each_block(void (*fn)(struct block *b))
{
	for (unsigned int i = 0; i < NSLOT; i++)
		if (slots[i])
			fn(slots[i]);
}

static void window_edge(struct block *b)
{
	if (open_)
		b->start = b->count;
	else
		b->acc += b->count - b->start;
}

static void toggle_cb(unsigned int vcpu, void *udata)
{
	pthread_mutex_lock(&lock);
	if (++hits > skip) {
		open_ = !open_;
		windows += open_;
		for_each_block(window_edge);
	}
	pthread_mutex_unlock(&lock);
}

static struct block *lookup(uint64_t va, uint64_t n)
{
	unsigned int i = ((va * 0x9e3779b97f4a7c15ull + n) >> 43) & (NSLOT - 1);
	unsigned int probes = 0;

	while (slots[i] && !(slots[i]->vaddr == va && slots[i]->insns == n)) {
		i = (i + 1) & (NSLOT - 1);
		if (++probes == NSLOT) {
			fprintf(stderr, "insnprof: block table full\n");
			abort();
		}
	}
	if (!slots[i]) {
		slots[i] = calloc(1, sizeof(**slots));
		if (!slots[i])
			abort();
		slots[i]->vaddr = va;
		slots[i]->insns = n;
	}
	return slots[i];
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	pthread_mutex_lock(&lock);
	b = lookup(va, qemu_plugin_tb_n_insns(tb));
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->count, 1);
	if (va == toggle)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, toggle_cb,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static FILE *out;

static void dump(struct block *b)
{
	if (open_)	/* the guest never closed the last window */
		b->acc += b->count - b->start;
	if (b->acc)
		fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
			b->vaddr, b->insns, b->acc);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	out = fopen(outpath, "w");
	if (!out) {
		perror(outpath);
		return;
	}
	fprintf(out, "# windows %d\n", windows);
	for_each_block(dump);
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const struct qemu_info_t *info,
					   int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "toggle=", 7)) {
			toggle = strtoull(argv[i] + 7, NULL, 16);
		} else if (!strncmp(argv[i], "skip=", 5)) {
			skip = atoi(argv[i] + 5);
		} else if (!strncmp(argv[i], "out=", 4)) {
			outpath = strdup(argv[i] + 4);
		} else {
			fprintf(stderr, "insnprof: unknown option '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!toggle) {
		fprintf(stderr, "insnprof: toggle=ADDRESS is required\n");
		return -1;
	}
	slots = calloc(NSLOT, sizeof(*slots));
	if (!slots)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
