# Synchronous-I/O block series against Linux v6.1.4: fetch, apply, build, test.
#
#   make          install what is missing, fetch the base, apply, build
#   make check    checkpatch, per-patch build, VM tests on the patched kernel
#
# See README.md for every target and input.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

TOP   := $(CURDIR)
BUILD := $(TOP)/build

# The pinned base.
BASE_VERSION := 6.1.4
DEB_VERSION  := 6.1.4-1
BASE_SHA256  := 7afd8b43469411a88e328d40926684ce6b450269d3c0528d212a3ec2665e7566
BASE         ?= v$(BASE_VERSION)
KSRC         ?=
BASE_TARBALL ?=
JOBS         ?= $(shell nproc)

# The project identity, in this one place.  git config user.name and
# user.email override it; so do AUTHOR_NAME= and AUTHOR_EMAIL= on the
# command line.
PROJECT_NAME  := Sync I/O Series Maintainers
PROJECT_EMAIL := syncio-series@example.org
AUTHOR_NAME   ?= $(or $(shell git config user.name 2>/dev/null),$(PROJECT_NAME))
AUTHOR_EMAIL  ?= $(or $(shell git config user.email 2>/dev/null),$(PROJECT_EMAIL))
AUTHOR        := $(AUTHOR_NAME) <$(AUTHOR_EMAIL)>

# Trees: $(TREE) is the quilt work tree (a git repository tagged v6.1.4);
# the others are git worktrees of it.
TREE      := $(BUILD)/linux
BASETREE  := $(BUILD)/linux-base
GITTREE   := $(BUILD)/linux-git

# KCONFIG=test (the default): tinyconfig and kconfig-fragments/[0-9]*.config,
# the kernels every test runs.  KCONFIG=distro: Debian's cloud-amd64
# configuration with the fragments in kconfig-fragments/distro/, for
# benchmarks (make bench, insn-profile, bisect-bench) as distributions
# build the kernel; its kernels live in build/obj/distro-*.
KCONFIG   ?= test
ifeq ($(KCONFIG),test)
OBJ       := $(BUILD)/obj/series
BASEOBJ   := $(BUILD)/obj/base
FRAGMENTS := $(sort $(wildcard $(TOP)/kconfig-fragments/[0-9]*.config))
BASECONFIG :=
else ifeq ($(KCONFIG),distro)
OBJ       := $(BUILD)/obj/distro-series
BASEOBJ   := $(BUILD)/obj/distro-base
FRAGMENTS := $(sort $(wildcard $(TOP)/kconfig-fragments/distro/*.config))
BASECONFIG := $(BUILD)/distro/config
else
$(error KCONFIG=$(KCONFIG): use KCONFIG=test or KCONFIG=distro)
endif
KERNEL    ?= $(OBJ)/arch/x86/boot/bzImage
BASE_KERNEL := $(BASEOBJ)/arch/x86/boot/bzImage
VARIANTS  := modules noswap nodma nopmem
# make check builds these at the last patch; make check-full all of
# VARIANTS (variant-noswap recompiles nearly every object: about 14 minutes
# on a cold machine, which CI's time limit cannot afford).
CHECK_VARIANTS := modules nodma nopmem

export A B BENCH ROUNDS SAVE_KERNELS ICOUNT SMP DEVS INJECT
export TOP BUILD TREE BASETREE GITTREE OBJ BASEOBJ BASE_VERSION DEB_VERSION \
	BASE_SHA256 BASE KSRC BASE_TARBALL JOBS FRAGMENTS VARIANTS CHECK_VARIANTS AUTHOR \
	KCONFIG BASECONFIG \
	AUTHOR_NAME AUTHOR_EMAIL
export QUILT_PATCHES := patches
export QUILT_SERIES  := series

.PHONY: all deps base apply unapply git-tree export kernel base-kernel \
	bisect-build checkpatch sparse check check-full test test-inject test-inject-build test-base test-debug \
	stable-kernel mainline-check variants check-variants-rest initramfs bisect-test bench bisect-bench insn-profile layout-pad mail send mail-selftest rebase-check clean distclean help

all: deps base apply kernel
	@echo "bzImage: $(KERNEL)"

help:
	@sed -n '/^## Targets/,/^## /p' README.md

deps:
	@$(TOP)/scripts/deps.sh

base:
	@$(TOP)/scripts/fetch-base.sh

apply: base
	@$(TOP)/scripts/quilt.sh apply

unapply: base
	@$(TOP)/scripts/quilt.sh unapply

git-tree: base
	@$(TOP)/scripts/git-tree.sh

export:
	@$(TOP)/scripts/export-patches.sh

kernel: apply
	@$(if $(BASECONFIG),$(TOP)/scripts/distro-config.sh)
	@$(TOP)/scripts/build-kernel.sh $(TREE) $(OBJ) $(FRAGMENTS)

base-kernel: base
	@$(TOP)/scripts/base-tree.sh
	@$(if $(BASECONFIG),$(TOP)/scripts/distro-config.sh)
	@$(TOP)/scripts/build-kernel.sh $(BASETREE) $(BASEOBJ) $(FRAGMENTS)

# v6.1.4 with the fixes in stable/ (outside the series) and the series' own
# patches marked for stable (Cc: stable@vger.kernel.org), for 6.1.y users.
stable-kernel: base
	@$(TOP)/scripts/stable-kernel.sh

# mainline/: the mainline (v6.12) forms of the series' fixes that mainline
# needs too; they apply, pass checkpatch and build there.
mainline-check:
	@$(TOP)/scripts/mainline-check.sh

bisect-build: base
	@$(TOP)/scripts/bisect-build.sh

variants: apply
	@$(TOP)/scripts/bisect-build.sh --variants-only

sparse: base
	@$(TOP)/scripts/sparse-w1.sh

checkpatch: base
	@$(TOP)/scripts/checkpatch.sh

initramfs: base
	@$(TOP)/scripts/mkinitramfs.sh

test: initramfs
	@$(TOP)/tests/run.sh $(KERNEL)

test-inject: initramfs
	@$(TOP)/tests/inject.sh $(KERNEL) $(INJECT)

test-inject-build: base
	@$(TOP)/scripts/inject-build.sh

test-base: base-kernel initramfs
	@$(TOP)/tests/run.sh $(BASE_KERNEL)

test-debug: apply initramfs
	@$(TOP)/scripts/build-kernel.sh $(TREE) $(BUILD)/obj/debug $(FRAGMENTS) $(TOP)/kconfig-fragments/debug.config
	@$(TOP)/tests/run.sh $(BUILD)/obj/debug/arch/x86/boot/bzImage

check: deps base
	@$(TOP)/scripts/check.sh

check-full: check check-variants-rest sparse test-base test-inject test-inject-build mail-selftest

# The variants of VARIANTS that make check does not build.
check-variants-rest:
	@$(MAKE) --no-print-directory variants VARIANTS="$(filter-out $(CHECK_VARIANTS),$(VARIANTS))"

# Host-side, no VM, a few minutes: make mail, make send --dry-run, b4 am.
mail-selftest: base
	@$(TOP)/scripts/deps.sh git-email b4
	@$(TOP)/tests/run-host.sh $(TOP)/tests/host-full/mail-selftest.sh

bisect-test: base
	@$(TOP)/scripts/bisect-test.sh

bench: deps base
	@$(TOP)/scripts/bench.sh

bisect-bench: base
	@$(TOP)/scripts/bisect-bench.sh

insn-profile: deps base
	@$(TOP)/scripts/insn-profile.sh

layout-pad: deps base
	@$(TOP)/scripts/layout-pad.sh

mail: base
	@MAIL_VERSION="$(V)" $(TOP)/scripts/mail.sh

send:
	@SEND="$(SEND)" $(TOP)/scripts/send.sh

rebase-check: base
	@TO="$(TO)" REBASE_SRC="$(REBASE_SRC)" REBASE_BUILD="$(REBASE_BUILD)" $(TOP)/scripts/rebase-check.sh

clean:
	rm -rf $(BUILD)/obj $(BUILD)/logs $(BUILD)/initramfs

distclean:
	rm -rf $(BUILD)
