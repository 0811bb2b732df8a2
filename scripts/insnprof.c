// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts, per guest instruction address,
 * how many times the instruction executed inside a window.  The window
 * opens and closes each time the guest executes the instruction at
 * address toggle= (after the first skip= executions of it).  At exit it
 * writes a header and one line per kernel instruction executed in a
 * window, "vaddr executions"; all user-space instructions (addresses
 * below 1 << 47) are summed on one line with address 0:
 *
 *   # insnprof 2 per-instruction
 *   # windows OPENED
 *   # open-at-exit 0|1
 *   ffffffff810bb471 1234
 *
 *   qemu-system-x86_64 ... -plugin insnprof.so,toggle=ffffffff810bb471,skip=0,out=F
 *
 * incl=ADDR[:ADDR...] also counts, for each function whose first
 * instruction is at ADDR, how often it was entered inside a window and
 * how many kernel instructions ran from that entry to its return,
 * callees included (one line "# incl ADDR ENTRIES INSTRUCTIONS" each).
 * The return is found by counting the call and ret instructions executed
 * after the entry: the ret that brings the count back to zero ends the
 * call.  A tail call's callee returns for it, a return thunk's ret counts
 * as the function's own, and an interrupt taken inside is counted with the
 * function (its calls and returns balance), as the ftrace function
 * profiler does.  A call that sleeps cannot be followed this way (the
 * context switch returns on another task's stack): with switch=ADDR, the
 * address of __switch_to_asm(), such a call is dropped when it switches
 * and counted apart ("# incl ADDR ENTRIES INSTRUCTIONS SWITCHED", the
 * instructions being those of the calls that did not switch).  The guest
 * must have one vCPU: callbacks from any other vCPU are counted in
 * "# incl-other-vcpu".
 *
 * mem=BITS also counts, per instruction, its memory accesses inside a
 * window and how many of them miss a model of QEMU's software TLB:
 * direct-mapped, 1 << BITS entries of 4 KiB pages, one table for the
 * accesses of kernel code and one for those of user code (QEMU's MMU
 * indexes by privilege; its third table, for kernel accesses with
 * EFLAGS.AC set, is not modelled), each with an 8-entry victim table.
 * The model is warm and never flushed, and an access that crosses a
 * page is looked up once: its misses are the conflict and capacity
 * misses of a TLB of that size, not QEMU's own (which is resized and
 * flushed on every CR3 write, invisibly to a plugin), nor a count of
 * the pages touched.  The counts go to OUT.mem, one line
 * "vaddr accesses misses" per instruction (user space on one line with
 * address 0).
 *
 * Counting: every instruction gets an inline "add 1" that TCG runs just
 * before the instruction.  An instruction the translation block does not
 * reach, because an earlier one raised an exception or (under -icount)
 * stopped the block for I/O, is not counted, so a block cut short is
 * counted exactly as far as it ran.  One error remains: an instruction
 * that faults and is restarted after the handler (a page fault, mostly
 * in user space) is counted for both attempts, so a window's count is
 * high by at most the number of such exceptions in it.  A rep-prefixed
 * string instruction counts once per iteration, as -icount does (TCG
 * runs each iteration as one execution of the instruction).
 *
 * Debian ships no qemu-plugin.h, so the few declarations used are written
 * out below.  They are QEMU's plugin API version 1 (QEMU 7.x, as in
 * Debian bookworm, whose qemu-system-x86_64 exports each of them); QEMU
 * refuses to load a plugin of another version.
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
struct qemu_plugin_insn;
struct qemu_info_t;
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_CB_NO_REGS		0
#define QEMU_PLUGIN_INLINE_ADD_U64	0
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *udata);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					   vcpu_udata_cb_t cb, int flags, void *udata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, int op,
						void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *udata);
typedef uint32_t qemu_plugin_meminfo_t;
#define QEMU_PLUGIN_MEM_RW		3
typedef void (*vcpu_mem_cb_t)(unsigned int vcpu, qemu_plugin_meminfo_t info,
			      uint64_t vaddr, void *udata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, vcpu_mem_cb_t cb,
				      int flags, int rw, void *udata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* One per kernel instruction address ever translated; never freed. */
struct insn {
	uint64_t vaddr;
	uint64_t count;		/* executions, bumped inline by TCG code */
	uint64_t start;		/* count when the window opened */
	uint64_t acc;		/* executions inside windows */
	uint64_t mem, miss;	/* mem=: accesses and model TLB misses in windows */
};

#define NSLOT (1u << 22)
#define USER_TOP (1ull << 47)
static struct insn **slots;
static unsigned int used;
static struct insn user;	/* every user-space instruction */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t toggle;
static int skip, hits, windows;
static bool open_;
static const char *outpath = "insnprof.out";

/* incl=: inclusive counts of a few functions (one vCPU). */
#define NINCL 8
static struct incl {
	uint64_t entry;		/* address of the first instruction */
	bool active;
	long depth;		/* calls not yet returned since the entry */
	uint64_t start;		/* kinsns at the entry */
	uint64_t entries, insns, switched;
} incl[NINCL];
static uint64_t switch_addr;	/* __switch_to_asm, or 0 */
static int nincl;
static uint64_t kinsns;		/* every kernel instruction, bumped inline */
static uint64_t other_vcpu;

/* mem=: the model TLB (see the top of the file). */
#define NVICTIM 8
static int tlb_bits;
static struct tlb {
	uint64_t *page;		/* page number + 1 per entry, 0 if empty */
	uint64_t victim[NVICTIM];
	unsigned int next;	/* victim entry to replace next */
} tlb[2];			/* accesses by kernel code, by user code */

static bool tlb_miss(struct tlb *t, uint64_t vaddr)
{
	uint64_t pg = (vaddr >> 12) + 1;
	uint64_t *e = &t->page[(vaddr >> 12) & ((1u << tlb_bits) - 1)];

	if (*e == pg)
		return false;
	for (int i = 0; i < NVICTIM; i++) {
		if (t->victim[i] == pg) {	/* swap, as QEMU's victim TLB does */
			t->victim[i] = *e;
			*e = pg;
			return false;
		}
	}
	if (*e) {	/* QEMU moves only a valid entry to the victim table */
		t->victim[t->next] = *e;
		t->next = (t->next + 1) % NVICTIM;
	}
	*e = pg;
	return true;
}

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct insn *p = udata;

	if (!open_)
		return;
	p->mem++;
	p->miss += tlb_miss(&tlb[p == &user], vaddr);
}

static void window_edge(struct insn *p)
{
	if (open_)
		p->start = p->count;
	else
		p->acc += p->count - p->start;
}

static void for_each_insn(void (*fn)(struct insn *p))
{
	fn(&user);
	for (unsigned int i = 0; i < NSLOT; i++)
		if (slots[i])
			fn(slots[i]);
}

static void toggle_cb(unsigned int vcpu, void *udata)
{
	pthread_mutex_lock(&lock);
	if (++hits > skip) {
		open_ = !open_;
		windows += open_;
		for_each_insn(window_edge);
	}
	pthread_mutex_unlock(&lock);
}

static void incl_enter_cb(unsigned int vcpu, void *udata)
{
	struct incl *f = udata;

	if (vcpu) {
		other_vcpu++;
		return;
	}
	if (!open_ || f->active)	/* outside a window, or recursion */
		return;
	f->active = true;
	f->depth = 0;
	f->start = kinsns;
	f->entries++;
}

static void incl_call_cb(unsigned int vcpu, void *udata)
{
	if (vcpu) {
		other_vcpu++;
		return;
	}
	for (int i = 0; i < nincl; i++)
		if (incl[i].active)
			incl[i].depth++;
}

static void incl_ret_cb(unsigned int vcpu, void *udata)
{
	if (vcpu) {
		other_vcpu++;
		return;
	}
	for (int i = 0; i < nincl; i++) {
		struct incl *f = &incl[i];

		if (!f->active)
			continue;
		if (f->depth-- > 0)
			continue;
		/* this ret ends the call; kinsns already counts it */
		f->insns += kinsns - f->start;
		f->active = false;
	}
}

/* A context switch: the active calls cannot be followed any further. */
static void incl_switch_cb(unsigned int vcpu, void *udata)
{
	if (vcpu) {
		other_vcpu++;
		return;
	}
	for (int i = 0; i < nincl; i++) {
		if (incl[i].active) {
			incl[i].active = false;
			incl[i].switched++;
		}
	}
}

/* 1 for a near call, 2 for a near return, else 0 (x86-64 encodings). */
static int call_or_ret(const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0x2e || b[i] == 0x3e ||
			 b[i] == 0x26 || b[i] == 0x36 || b[i] == 0x64 || b[i] == 0x65 ||
			 b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0xf0))
		i++;
	if (i < n && (b[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i >= n)
		return 0;
	if (b[i] == 0xe8)
		return 1;
	if (b[i] == 0xff && i + 1 < n && ((b[i + 1] >> 3) & 7) == 2)
		return 1;
	if (b[i] == 0xc3 || b[i] == 0xc2)
		return 2;
	return 0;
}

static struct insn *lookup(uint64_t va)
{
	unsigned int i = (va * 0x9e3779b97f4a7c15ull) >> (64 - 22);

	while (slots[i] && slots[i]->vaddr != va)
		i = (i + 1) & (NSLOT - 1);
	if (!slots[i]) {
		if (++used > NSLOT / 2) {
			fprintf(stderr, "insnprof: instruction table full\n");
			abort();
		}
		slots[i] = calloc(1, sizeof(**slots));
		if (!slots[i])
			abort();
		slots[i]->vaddr = va;
	}
	return slots[i];
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	pthread_mutex_lock(&lock);
	for (size_t k = 0; k < n; k++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, k);
		uint64_t va = qemu_plugin_insn_vaddr(in);
		struct insn *p = va < USER_TOP ? &user : lookup(va);

		qemu_plugin_register_vcpu_insn_exec_inline(in, QEMU_PLUGIN_INLINE_ADD_U64,
							   &p->count, 1);
		if (tlb_bits)
			qemu_plugin_register_vcpu_mem_cb(in, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, p);
		if (va == toggle)
			qemu_plugin_register_vcpu_insn_exec_cb(in, toggle_cb,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		if (!nincl || va < USER_TOP)
			continue;
		qemu_plugin_register_vcpu_insn_exec_inline(in, QEMU_PLUGIN_INLINE_ADD_U64,
							   &kinsns, 1);
		if (va == switch_addr)
			qemu_plugin_register_vcpu_insn_exec_cb(in, incl_switch_cb,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		for (int i = 0; i < nincl; i++)
			if (va == incl[i].entry)
				qemu_plugin_register_vcpu_insn_exec_cb(in, incl_enter_cb,
								       QEMU_PLUGIN_CB_NO_REGS,
								       &incl[i]);
		switch (call_or_ret(qemu_plugin_insn_data(in), qemu_plugin_insn_size(in))) {
		case 1:
			qemu_plugin_register_vcpu_insn_exec_cb(in, incl_call_cb,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
			break;
		case 2:
			qemu_plugin_register_vcpu_insn_exec_cb(in, incl_ret_cb,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

static FILE *out;

static void dump(struct insn *p)
{
	if (open_)	/* the guest never closed the last window */
		p->acc += p->count - p->start;
	if (p->acc)
		fprintf(out, "%" PRIx64 " %" PRIu64 "\n", p == &user ? 0 : p->vaddr, p->acc);
}

static void dump_mem(struct insn *p)
{
	if (p->mem)
		fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
			p == &user ? 0 : p->vaddr, p->mem, p->miss);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	if (tlb_bits) {
		char *path = malloc(strlen(outpath) + 5);

		if (path) {
			sprintf(path, "%s.mem", outpath);
			out = fopen(path, "w");
			if (out) {
				fprintf(out, "# insnprof-mem 1 tlb-bits %d victim %d\n",
					tlb_bits, NVICTIM);
				for_each_insn(dump_mem);
				fclose(out);
			} else {
				perror(path);
			}
			free(path);
		}
	}
	out = fopen(outpath, "w");
	if (!out) {
		perror(outpath);
		return;
	}
	fprintf(out, "# insnprof 2 per-instruction\n# windows %d\n# open-at-exit %d\n",
		windows, open_);
	for (int i = 0; i < nincl; i++)
		fprintf(out, "# incl %" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "%s\n",
			incl[i].entry, incl[i].entries, incl[i].insns, incl[i].switched,
			incl[i].active ? " open" : "");
	if (nincl)
		fprintf(out, "# incl-other-vcpu %" PRIu64 "\n", other_vcpu);
	for_each_insn(dump);
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
		} else if (!strncmp(argv[i], "incl=", 5)) {
			char *e = argv[i] + 4;

			do {
				if (nincl == NINCL) {
					fprintf(stderr, "insnprof: at most %d incl= functions\n", NINCL);
					return -1;
				}
				incl[nincl++].entry = strtoull(e + 1, &e, 16);
			} while (*e == ':');
		} else if (!strncmp(argv[i], "switch=", 7)) {
			switch_addr = strtoull(argv[i] + 7, NULL, 16);
		} else if (!strncmp(argv[i], "mem=", 4)) {
			char *end;
			long b = strtol(argv[i] + 4, &end, 10);

			if (end == argv[i] + 4 || *end || b < 1 || b > 20) {
				fprintf(stderr, "insnprof: mem=%s: BITS must be a number from 1 to 20\n",
					argv[i] + 4);
				return -1;
			}
			tlb_bits = b;
			for (int k = 0; k < 2; k++) {
				free(tlb[k].page);
				tlb[k].page = calloc(1u << tlb_bits, sizeof(uint64_t));
				if (!tlb[k].page)
					return -1;
			}
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
