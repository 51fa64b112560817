# make sensitivity: every claim under the alternative readings it declares
# (verdict/claims/: the open choices the paper leaves, each with 1-3
# alternatives, fixed before any run), over the seeds of make verdicts.
# An alternative that reads another statistic of the main runs needs no run;
# one that changes the experiment's flags is run once per seed into
# $(SRUNS)/<program>/<alternative>/seed<s>/ with the main run's flags plus its
# own. The list of those runs comes from the claim table itself
# (verdicts --plan -> $(SPLAN)), so the table is the one place they are declared.
# Then the judge writes $(VOUT)/ with, per claim, its verdict under every
# alternative and ROBUST / FRAGILE (docs/verdicts.md).
#   make sensitivity [SEEDS=5 SEED0=1 SCALE=quick VERDICT_SKIP=...]
#   make sensitivity-mpi NP=4 [MPIRUN=srun]   the same runs spread over MPI ranks
SRUNS := $(RES)/sensitivity-runs
SPLAN := $(SRUNS)/plan.mk
STASKS := $(RES)/sensitivity-tasks.txt

# The plan is read only when a sensitivity goal is asked for (it needs the judge built).
ifneq ($(filter sensitivity sensitivity-only sensitivity-tasks sensitivity-mpi,$(MAKECMDGOALS)),)
-include $(SPLAN)
endif

# "experiment name flags..." lines -> SENS_ALTS += experiment/name, SFLAGS_experiment/name := flags
$(SPLAN): $(BUILD)/bin/verdicts
	@mkdir -p $(@D)
	@$< --plan | awk '{ e = $$1; a = $$2; $$1 = $$2 = ""; sub(/^ +/, ""); \
	  printf "SENS_ALTS += %s/%s\nSFLAGS_%s/%s := %s\n", e, a, e, a, $$0 }' >$@.tmp && mv $@.tmp $@

# One run of alternative $(1) = program/name with seed $(2): the main run's flags, then its own.
define sensitivity_run
$(SRUNS)/$(1)/seed$(2)/run.txt: $(BUILD)/bin/$(firstword $(subst /, ,$(1)))
	@mkdir -p $$(@D)
	OPENBLAS_NUM_THREADS=1 $$< $(call verdict_flags,$(firstword $(subst /, ,$(1))),$(2)) $(SFLAGS_$(1)) --out $$(@D) --quiet
endef

SENS_RUN_ALTS = $(filter-out $(addsuffix /%,$(VERDICT_LEFT_OUT)),$(SENS_ALTS))
# Made at the end of the Makefile ($(eval $(sensitivity_rules))), after make verdicts' rules.
define sensitivity_rules
$(foreach a,$(SENS_RUN_ALTS),$(foreach s,$(VERDICT_SEEDS),$(eval $(call sensitivity_run,$(a),$(s)))))
SENS_RUNS := $(foreach a,$(SENS_RUN_ALTS),$(foreach s,$(VERDICT_SEEDS),$(SRUNS)/$(a)/seed$(s)/run.txt))
sensitivity-only: $$(VERDICT_RUNS) $$(SENS_RUNS) $(BUILD)/bin/verdicts $$(VERDICT_RUN_FIGURES)
	$(BUILD)/bin/verdicts --runs $(VRUNS) --sensitivity $(SRUNS) --seeds $(subst $(space),$(comma),$(strip $(VERDICT_SEEDS))) --scale $(SCALE) $(verdict_skip_flag) --out $(VOUT) --quiet
	@cat $(VOUT)/summary.md
endef

.PHONY: sensitivity sensitivity-only sensitivity-tasks sensitivity-mpi
# Without a -j of the caller's, the runs spread over every core.
sensitivity: deps
	@$(MAKE) --no-print-directory $(BUILD)/bin/verdicts
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc)) sensitivity-only

# The same runs as shell commands for run_tasks (missing or older than their program).
sensitivity-tasks:
	@$(MAKE) --no-print-directory MPI=0 $(addprefix build/bin/,$(VERDICT_EXPS))
	@mkdir -p $(RES)
	@{ $(foreach a,$(SENS_RUN_ALTS),$(foreach s,$(VERDICT_SEEDS),\
	  if [ build/bin/$(firstword $(subst /, ,$(a))) -nt $(SRUNS)/$(a)/seed$(s)/run.txt ]; then \
	    echo 'mkdir -p $(SRUNS)/$(a)/seed$(s) && OPENBLAS_NUM_THREADS=1 build/bin/$(firstword $(subst /, ,$(a))) $(call verdict_flags,$(firstword $(subst /, ,$(a))),$(s)) $(SFLAGS_$(a)) --out $(SRUNS)/$(a)/seed$(s) --quiet'; \
	  fi;)) } >$(STASKS).tmp && mv $(STASKS).tmp $(STASKS)
	@echo "sensitivity-tasks: $$(wc -l <$(STASKS)) runs to do in $(STASKS)"

sensitivity-mpi: deps
	@$(MAKE) --no-print-directory MPI=0 verdict-tasks sensitivity-tasks
	@$(MAKE) --no-print-directory MPI=1 build-mpi/bin/run_tasks
	@cat $(VTASKS) $(STASKS) >$(STASKS).all
	@if [ -s $(STASKS).all ]; then $(MPIRUN) build-mpi/bin/run_tasks --quiet $(STASKS).all; fi
	@$(MAKE) --no-print-directory MPI=0 sensitivity-only
