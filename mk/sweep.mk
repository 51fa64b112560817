# make sweep: any program over a grid of flag values and seeds (tools/sweep.c; docs/running.md).
#   make sweep PROG=fig6 VARY='--C 16 32 64' SEEDS=3 STAT=fig6.value.log10_ratio
#   VARY='--C 16 32; --heads 2 4' crosses the flags; FLAGS='--steps 200' adds fixed flags;
#   SWEEP_NAME names the folder (default: the program and the varied flags).
# Runs into $(RES)/sweeps/<name>/runs/, one thread each, over every core (or with
# make sweep-mpi, over MPI ranks through run_tasks); writes sweep.csv (every statistic of
# every run), and with STAT band.csv and $(FIG)/sweep_<name>.png (the statistic against
# the first varied flag, mean and the band over seeds). Each run gets the program's
# verdict flags (VCMD_<prog>, with the seed) first, so it is the run make verdicts makes
# at that grid point. The values reach a shell: quotes are refused here, and the
# sweep program accepts only plain words.
SWEEP_AXES = $(patsubst --%,%,$(filter --%,$(subst ;, ,$(VARY))))
SWEEP_NAME ?= $(PROG)$(subst $(space),,$(foreach f,$(SWEEP_AXES),-$(f)))
SWEEP_OUT = $(RES)/sweeps/$(SWEEP_NAME)
SWEEP_BASE = $(if $(filter $(PROG),$(VERDICT_EXPS)),$(call verdict_flags,$(PROG),SEED),--seed SEED)
SWEEP_TASKS = $(SWEEP_OUT)/tasks.txt
sweep_args = --prog $(PROG) --base '$(SWEEP_BASE)' --flags '$(FLAGS)' --vary '$(VARY)' --seeds $(SEEDS) \
             --seed0 $(SEED0) --stat '$(STAT)' --out $(SWEEP_OUT)
sweep_check = $(if $(PROG),,$(error make sweep needs PROG=<program> and VARY='--flag v1 v2 ...'))$(if \
  $(findstring ',$(PROG)$(VARY)$(FLAGS)$(STAT)$(SWEEP_NAME)),$(error make sweep: no quotes in PROG, VARY, FLAGS, STAT, SWEEP_NAME))
define sweep_render
$(if $(STAT),@mkdir -p $(FIG) && gnuplot -e "band='$(SWEEP_OUT)/band.csv'; out='$(FIG)/sweep_$(SWEEP_NAME).png.tmp'" \
  plots/sweep.gp && mv $(FIG)/sweep_$(SWEEP_NAME).png.tmp $(FIG)/sweep_$(SWEEP_NAME).png && echo "rendered $(FIG)/sweep_$(SWEEP_NAME).png")
endef

.PHONY: sweep sweep-only sweep-mpi
sweep: deps
	@$(MAKE) --no-print-directory sweep-only
sweep-only: $(BUILD)/bin/sweep $(BUILD)/bin/$(PROG)
	$(sweep_check)$(BUILD)/bin/sweep $(sweep_args)
	$(sweep_render)
# The same over MPI ranks: the missing runs as a task list, run_tasks on it, then the tables.
sweep-mpi: deps
	@$(MAKE) --no-print-directory MPI=0 build/bin/sweep build/bin/$(PROG)
	@$(MAKE) --no-print-directory MPI=1 build-mpi/bin/run_tasks
	$(sweep_check)build/bin/sweep $(sweep_args) --tasks $(SWEEP_TASKS)
	@if [ -s $(SWEEP_TASKS) ]; then $(MPIRUN) build-mpi/bin/run_tasks --quiet $(SWEEP_TASKS); fi
	build/bin/sweep $(sweep_args) --collect-only
	$(sweep_render)
