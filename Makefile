# Adam-mini motivation toolkit — the only entry point a user needs.
#   make            build every program into build/
#   make figures    run every experiment at quick scale over the cores, render figures/ (main job)
#   make test       install missing dependencies, build, run all tests
#   make test SAN=1 the same under AddressSanitizer + UBSan (separate build folder)
#   make MPI=1      the same programs built with mpicc into build-mpi/ (OpenMPI,
#                   ScaLAPACK); make test MPI=1 runs the MPI tests (docs/cluster.md)
#   make bench      benchmarks (ratios against same-run baselines)
#   make verdicts   every claim of the paper judged over seeds (docs/verdicts.md)
#   make sensitivity  the same, and every claim under its declared alternatives
#   make results    docs/results.md and the README headline from the last verdicts
#   make claims     print every results/*/claims.txt
#   make deps       install missing Debian packages (needs root, or prints the sudo line)
#   make clean      builds and quick results; make distclean also the paper-scale ones
#   SCALE=paper     paper-scale counts (results-paper/, figures-paper/)
#   DATA=text       the Transformer experiments on English text (results-text/, figures-text/)
#   ARCH=llama      those that take any Transformer on the Llama-style model (results-llama/, figures-llama/)

SHELL := /bin/bash
# The compiler: gcc, unless CC is given on the command line or in the environment
# (make CC=clang); make's own default (cc) does not count as given.
ifeq ($(origin CC),default)
  CC := gcc
endif
SCALE ?= quick
SAN ?= 0
MPI ?= 0

ifeq ($(SAN),1)
  BUILD := build-san
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
  BUILD := build
  SANFLAGS :=
endif

# MPI=1: every program compiled with mpicc and -DTK_MPI into its own folder
# (core/dist.c then runs on MPI; ScaLAPACK for the full spectrum). The default
# build never needs MPI.
ifeq ($(MPI),1)
  MPICC ?= mpicc
  CC := $(MPICC)
  BUILD := $(BUILD:build%=build-mpi%)
  MPI_CFLAGS := -DTK_MPI
  MPI_LIBS := -lscalapack-openmpi
else ifneq ($(MPI),0)
  $(error MPI must be 0 or 1, got '$(MPI)')
endif

ifeq ($(SCALE),paper)
  RES := results-paper
  FIG := figures-paper
else ifeq ($(SCALE),quick)
  RES := results
  FIG := figures
else
  $(error SCALE must be quick or paper, got '$(SCALE)')
endif

# DATA=text: every Transformer experiment on English text (--data text: Debian's
# fortunes, char-level; docs/real_text.md) into its own folders results-text/ and
# figures-text/ (results-paper-text/ ... at paper scale); the experiments without
# a Transformer are not run again. Each fragment registers its experiments in
# TT_EXPS (they take --data text) or NON_TT_EXPS (the others).
DATA ?= markov
TT_EXPS :=
NON_TT_EXPS :=
ifeq ($(DATA),text)
  RES := $(RES)-text
  FIG := $(FIG)-text
  TT_DATA := --data text
else ifneq ($(DATA),markov)
  $(error DATA must be markov or text, got '$(DATA)')
endif

# ARCH=llama: the Transformer experiments that take any Transformer (each
# fragment registers them in LLAMA_EXPS) on the Llama-style model (--model
# llama; docs/llama.md) into their own folders results-llama/ and
# figures-llama/ (with DATA=text: results-text-llama/ ...).
ARCH ?= tt
LLAMA_EXPS :=
LLAMA_VERDICT_SKIP :=
ifeq ($(ARCH),llama)
  RES := $(RES)-llama
  FIG := $(FIG)-llama
  TT_ARCH := --model llama
  TT_KIND := llama
  TT_TITLE := Llama-style model
else ifeq ($(ARCH),tt)
  TT_KIND := tt
  TT_TITLE := Tiny Transformer
else
  $(error ARCH must be tt or llama, got '$(ARCH)')
endif

# Debian packages the toolkit needs: the libraries it compiles against, and what
# the figures and tests need besides (make deps installs the missing ones).
DEB_LIBS := libopenblas-dev liblapacke-dev libgsl-dev zlib1g-dev libcjson-dev pkg-config
DEB_PACKAGES := $(DEB_LIBS) gnuplot-nox dataset-fashion-mnist fortunes
# MPI=1 adds Debian's OpenMPI (compiler wrapper, mpirun) and ScaLAPACK for it.
DEB_MPI := libopenmpi-dev openmpi-bin libscalapack-openmpi-dev
ifeq ($(MPI),1)
  DEB_LIBS += $(DEB_MPI)
  DEB_PACKAGES += $(DEB_MPI)
endif

# Libraries through pkg-config where they have .pc files. GSL's .pc names its
# own reference CBLAS; we link OpenBLAS's instead.
PKGS := openblas lapacke gsl zlib libcjson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(filter-out -lgslcblas,$(shell pkg-config --libs $(PKGS) 2>/dev/null))

# CFLAGS and LDFLAGS are the user's (make CFLAGS=-O3 replaces only them); the
# flags the build needs are kept apart so that they cannot be lost.
CFLAGS ?= -O2 -g
# gcc's -O2 vectorises only the cheapest loops; its dynamic cost model lets the
# optimizers' restrict-qualified block loops vectorise too. A compiler without
# the flag (clang) is not given it.
VECT_FLAG := $(shell $(CC) -fvect-cost-model=dynamic -Werror -E -x c /dev/null >/dev/null 2>&1 && echo -fvect-cost-model=dynamic)
TK_CFLAGS = -fno-math-errno $(VECT_FLAG) -std=c11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -I. -I$(BUILD)/gen \
            $(PKG_CFLAGS) $(SANFLAGS) $(MPI_CFLAGS)
TK_LDFLAGS = $(SANFLAGS)
LDLIBS = $(MPI_LIBS) $(PKG_LIBS) -lm

LIBDIRS := core hessian optim quad mlp tinytransformer verdict verdict/claims harness
LIBSRC := $(wildcard $(addsuffix /*.c,$(LIBDIRS)))
LIBOBJ := $(LIBSRC:%.c=$(BUILD)/%.o)
LIB := $(BUILD)/libtoolkit.a

# experiments/: one program per figure, table or claim of the paper; tools/: the
# general programs (the verdict judge, the task farm, heatmap, Hessian analysis).
# <program>_util.c beside a program holds the helpers only it (and its tests)
# use: not a program itself; every program and test links the archive of them.
UTIL_SRC := $(wildcard experiments/*_util.c tools/*_util.c)
UTILOBJ := $(UTIL_SRC:%.c=$(BUILD)/%.o)
UTILLIB := $(BUILD)/libprograms.a
EXP_PROGS := $(patsubst experiments/%.c,$(BUILD)/bin/%,$(filter-out %_util.c,$(wildcard experiments/*.c)))
TOOL_PROGS := $(patsubst tools/%.c,$(BUILD)/bin/%,$(filter-out %_util.c,$(wildcard tools/*.c)))
PROG_SRC := $(wildcard experiments/*.c tools/*.c)
PROGS := $(EXP_PROGS) $(TOOL_PROGS)
TEST_SRC := $(wildcard tests/test_*.c)
TESTS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
FIXTURES := $(BUILD)/tests/fixtures.o
BENCH_SRC := $(wildcard bench/*.c)
BENCHES := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps test bench figures claims gallery clean distclean
.SECONDARY:
.DEFAULT_GOAL := all

all: $(PROGS) $(TESTS) $(BENCHES)

$(BUILD)/%.o: %.c | libs-checked
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TK_CFLAGS) $(CFLAGS) -c $< -o $@

# The toolkit's commit, baked into every program (run.txt's "git commit"): this
# checkout's HEAD when it was built, "-dirty" with changes to tracked files,
# "unknown" outside git. Checked on every make; the header is rewritten (and
# core/run.o rebuilt) only when the commit or the dirty flag changed.
COMMIT_H := $(BUILD)/gen/toolkit_commit.h
.PHONY: commit-check
commit-check:
$(COMMIT_H): commit-check
	@mkdir -p $(@D)
	@c=$$(git rev-parse --short=12 HEAD 2>/dev/null) || c=unknown; \
	  if [ "$$c" != unknown ] && [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then c=$$c-dirty; fi; \
	  printf '#define TOOLKIT_COMMIT "%s"\n' "$$c" >$@.tmp; \
	  if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/core/run.o: $(COMMIT_H)

$(LIB): $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $^
$(UTILLIB): $(UTILOBJ)
	@rm -f $@
	ar rcs $@ $^

# Programs, tests and benchmarks: one .c file each, linked against the library.
$(EXP_PROGS): $(BUILD)/bin/%: $(BUILD)/experiments/%.o $(UTILLIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TK_LDFLAGS) $(LDFLAGS) $< $(UTILLIB) $(LIB) $(LDLIBS) -o $@
$(TOOL_PROGS): $(BUILD)/bin/%: $(BUILD)/tools/%.o $(UTILLIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TK_LDFLAGS) $(LDFLAGS) $< $(UTILLIB) $(LIB) $(LDLIBS) -o $@
# tests/fixtures.c: the small random models the tests and the benchmarks share.
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(FIXTURES) $(UTILLIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TK_LDFLAGS) $(LDFLAGS) $< $(FIXTURES) $(UTILLIB) $(LIB) $(LDLIBS) -o $@
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(FIXTURES) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(TK_LDFLAGS) $(LDFLAGS) $< $(FIXTURES) $(LIB) $(LDLIBS) -o $@

# ---- dependencies ---------------------------------------------------------
# Building needs only the libraries: when pkg-config finds them, nothing is
# checked or installed (no dpkg, no apt); otherwise libs-checked installs them
# on Debian (scripts/deps.sh). make test and make figures also need gnuplot and
# the data set: they run deps first, which installs only what is missing.
HAVE_LIBS := $(shell pkg-config --exists $(PKGS) $(if $(filter 1,$(MPI)),ompi-c scalapack-openmpi) 2>/dev/null && echo yes)
.PHONY: libs-checked
libs-checked:
ifneq ($(HAVE_LIBS),yes)
	@./scripts/deps.sh $(DEB_LIBS)
endif
deps:
	@./scripts/deps.sh $(DEB_PACKAGES)

# ---- tests ------------------------------------------------------------------
test: deps
ifeq ($(MPI),1)
	@$(MAKE) --no-print-directory MPI=1 $(TESTS) $(PROGS)
	@BUILD=$(BUILD) CLI_SCRIPTS="$(wildcard tests/mpi_*.sh)" ./tests/run.sh
else
	@$(MAKE) --no-print-directory $(TESTS) $(PROGS)
	@BUILD=$(BUILD) ./tests/run.sh $(TESTS)
endif

# ---- benchmarks -------------------------------------------------------------
# bench_hdist's part C, a streamed analysis at P = 108,800 (~1-5 minutes on 2 cores, by load),
# runs unless BENCH_HDIST_FLAGS= is given empty. bench_hvp and bench/torch_hvp.py (the
# Hessian-vector products against PyTorch, when Debian's python3-torch is installed: make
# test-torch installs it) take BENCH_HVP_FLAGS=--big for P ~ 1e6 (several minutes more).
BENCH_HDIST_FLAGS ?= --big
BENCH_HVP_FLAGS ?=
bench: $(BENCHES) $(PROGS)
	@for b in $(BENCHES); do echo "== $$b"; \
	  case $$b in */bench_hdist) $$b $(BENCH_HDIST_FLAGS) || exit 1;; \
	    */bench_hvp) OPENBLAS_NUM_THREADS=1 $$b $(BENCH_HVP_FLAGS) || exit 1;; *) $$b || exit 1;; esac; done
	@echo "== bench/torch_hvp.py"; if $(TORCH_PYTHON) -c 'import torch, numpy' 2>/dev/null; then \
	  $(TORCH_PYTHON) bench/torch_hvp.py $(BUILD) $(BENCH_HVP_FLAGS); \
	  else echo "torch_hvp: PyTorch not installed (Debian's python3-torch; make test-torch installs it): no comparison"; fi

# ---- experiments and figures (each experiment adds a fragment in mk/) -------
# A fragment (the contract: docs/contributing.md) registers its experiment in
# TT_EXPS or NON_TT_EXPS, adds its PNGs to FIGURES and its claims files to
# CLAIMS; a figure's name starts with its experiment's, and so does the folder
# of its results ($(RES)/<exp>*/). Results come from a program writing
# $(RES)/<experiment>/ (run.txt last, so it is the target); a figure is rendered
# by $(call render,script.gp,gnuplot variables), which writes a temporary and
# renames it, like every other output. (No commas inside the variables: $(call)
# splits its arguments at commas.)
FIGURES :=
CLAIMS :=
# make verdicts (mk/verdicts.mk): seeds SEED0 .. SEED0+SEEDS-1, one run per
# registered experiment and seed in $(VRUNS)/<program>/seed<s>/.
SEEDS ?= 5
SEED0 ?= 1
# Whole numbers only: they reach a shell (seq) and the render commands below.
non_digits = $(strip $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1))))))))))))
ifneq ($(call non_digits,x$(SEEDS)x$(SEED0)),xx)
  $(error SEEDS and SEED0 must be whole numbers, got '$(SEEDS)' and '$(SEED0)')
endif
VERDICT_SEEDS := $(shell seq $(SEED0) $$(($(SEED0) + $(SEEDS) - 1)) 2>/dev/null)
VRUNS := $(RES)/verdict-runs
VOUT := $(RES)/verdicts$(if $(filter-out 1,$(SEED0)),-seed$(SEED0))
VCMD_DEFAULT := --scale $(SCALE) --seed SEED --data-seed SEED
VERDICT_EXPS :=
VERDICT_FIGURES :=
# For the fragments: $(subst $(space),$(comma),a b c) is a,b,c.
comma := ,
empty :=
space := $(empty) $(empty)
define render
	@mkdir -p $(@D)
	@gnuplot -e "out='$@.tmp'; $(2)" $(1) || { rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@ && echo "rendered $@"
endef
include $(wildcard mk/*.mk)
# Every figure and claims file belongs to a registered experiment (by its name):
# one no fragment registers would be run again under DATA=text, or left out, in silence.
UNREGISTERED := $(filter-out $(foreach e,$(TT_EXPS) $(NON_TT_EXPS),$(FIG)/$(e)% $(RES)/$(e)%),$(FIGURES) $(CLAIMS))
ifneq ($(UNREGISTERED),)
  $(error $(firstword $(UNREGISTERED)): no experiment of TT_EXPS or NON_TT_EXPS names it (docs/contributing.md))
endif
ifneq ($(filter $(TT_EXPS),$(NON_TT_EXPS)),)
  $(error $(filter $(TT_EXPS),$(NON_TT_EXPS)): registered in both TT_EXPS and NON_TT_EXPS)
endif
ifeq ($(DATA),text) # only the Transformer experiments' figures and claims
  FIGURES := $(filter $(foreach e,$(TT_EXPS),$(FIG)/$(e)%),$(FIGURES))
  CLAIMS := $(filter $(foreach e,$(TT_EXPS),$(RES)/$(e)/%),$(CLAIMS))
endif
ifeq ($(ARCH),llama) # only the experiments that take --model llama
  FIGURES := $(filter $(foreach e,$(LLAMA_EXPS),$(FIG)/$(e)%),$(FIGURES))
  CLAIMS := $(filter $(foreach e,$(LLAMA_EXPS),$(RES)/$(e)/%),$(CLAIMS))
endif
$(eval $(verdict_rules))
$(eval $(sensitivity_rules))

# Without a -j of the caller's, the programs run over every core at once (as
# make verdicts does); each is deterministic, so its files do not depend on -j.
figures: deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc)) figures-only

.PHONY: figures-only
figures-only: $(FIGURES) $(CLAIMS)
	@echo "figures: $(words $(FIGURES)) PNGs in $(FIG)/"

claims: $(CLAIMS)
	@for c in $(CLAIMS); do echo "== $$c"; cat $$c; done

# make print-FIGURES: a variable's value (how the tests read the fragments' lists).
print-%:
	@echo '$($*)'

# Refresh the README gallery (small committed copies of the quick figures, and of
# the per-seed figures of make verdicts where it has run).
gallery: figures
	@mkdir -p docs/img
	@for f in $(FIGURES); do cp $$f docs/img/; done
	@n=0; for f in $(VERDICT_FIGURES); do if [ -f $$f ]; then cp $$f docs/img/; n=$$((n+1)); fi; done; \
	  echo "copied $(words $(FIGURES)) figures and $$n of $(words $(VERDICT_FIGURES)) verdict figures (make verdicts draws them) into docs/img/"

# clean: the builds and the quick results; paper-scale results (hours of compute)
# go only with distclean.
clean:
	rm -rf build build-san build-fuzz build-mpi build-mpi-san results figures results-text figures-text \
	  results-llama figures-llama results-text-llama figures-text-llama
distclean: clean
	rm -rf results-paper figures-paper results-paper-text figures-paper-text \
	  results-paper-llama figures-paper-llama results-paper-text-llama figures-paper-text-llama

-include $(LIBOBJ:.o=.d) $(FIXTURES:.o=.d) $(PROG_SRC:%.c=$(BUILD)/%.d) $(TEST_SRC:%.c=$(BUILD)/%.d) $(BENCH_SRC:%.c=$(BUILD)/%.d)
