# make verdicts: every claim of the paper the toolkit tests, judged over seeds
# (docs/verdicts.md). Each experiment a fragment registers with
#   VERDICT_EXPS += <program>
#   VCMD_<program> := <its flags; SEED stands for the seed>   (default below)
# runs once per seed into $(VRUNS)/<program>/seed<s>/ (make -j spreads the runs
# over the cores; each run uses one thread, so results do not depend on -j);
# then the verdicts program judges every claim of the claim table (verdict/claims.c).
#   SEEDS=5 (how many), SEED0=1 (the first): seeds SEED0 .. SEED0+SEEDS-1;
#   another block of seeds (SEED0=6) writes $(RES)/verdicts-seed6/.
#   VERDICT_SKIP="exp2_blockwise_gd leave_out": those experiments are not run
#   and their claims are left out of the table (the costliest at paper scale).
# The flags of program $(1)'s run with seed $(2): its VCMD (or the default) with SEED
# replaced, --data text for the Transformer experiments under DATA=text and
# --model llama for those of LLAMA_EXPS under ARCH=llama. Every run list uses
# it: make verdicts, make sensitivity and their MPI task lists.
verdict_flags = $(subst SEED,$(2),$(if $(filter undefined,$(origin VCMD_$(1))),$(VCMD_DEFAULT),$(VCMD_$(1)))) $(if $(filter $(1),$(TT_EXPS)),$(TT_DATA)) $(if $(filter $(1),$(LLAMA_EXPS)),$(TT_ARCH))

# One run: the program's flags with SEED replaced, one BLAS thread.
define verdict_run
$(VRUNS)/$(1)/seed$(2)/run.txt: $(BUILD)/bin/$(1)
	@mkdir -p $$(@D)
	OPENBLAS_NUM_THREADS=1 $$< $$(call verdict_flags,$(1),$(2)) --out $$(@D) --quiet
endef

.PHONY: verdicts verdicts-only results
# Without a -j of the caller's, the runs spread over every core.
verdicts: deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc)) verdicts-only

# A fragment may add figures drawn from the per-seed runs (seed bands) to
# VERDICT_FIGURES; make verdicts renders them into $(FIG)/.
# The run rules are made at the end of the Makefile ($(eval $(verdict_rules))),
# once every fragment has added to VERDICT_EXPS.
# DATA=text judges the Transformer experiments only (the others have no text to run on);
# ARCH=llama those that take the Llama-style model (LLAMA_EXPS) but LLAMA_VERDICT_SKIP
# (an experiment whose claims read statistics named for the tiny GPT).
VERDICT_LEFT_OUT = $(strip $(VERDICT_SKIP) $(if $(filter text,$(DATA)),$(filter-out $(TT_EXPS),$(VERDICT_EXPS))) \
                     $(if $(filter llama,$(ARCH)),$(filter-out $(filter-out $(LLAMA_VERDICT_SKIP),$(LLAMA_EXPS)),$(VERDICT_EXPS))))
VERDICT_RUN_EXPS = $(filter-out $(VERDICT_LEFT_OUT),$(VERDICT_EXPS))
verdict_skip_flag = $(if $(VERDICT_LEFT_OUT),--skip $(subst $(space),$(comma),$(VERDICT_LEFT_OUT)))
# The seed-band figures of the experiments run ($(FIG)/<experiment>_*.png: each is named for its experiment).
VERDICT_RUN_FIGURES = $(filter-out $(foreach e,$(VERDICT_LEFT_OUT),$(FIG)/$(e)_%),$(VERDICT_FIGURES))
define verdict_rules
$(foreach e,$(VERDICT_RUN_EXPS),$(foreach s,$(VERDICT_SEEDS),$(eval $(call verdict_run,$(e),$(s)))))
VERDICT_RUNS := $(foreach e,$(VERDICT_RUN_EXPS),$(foreach s,$(VERDICT_SEEDS),$(VRUNS)/$(e)/seed$(s)/run.txt))
verdicts-only: $$(VERDICT_RUNS) $(BUILD)/bin/verdicts $$(VERDICT_RUN_FIGURES)
	$(BUILD)/bin/verdicts --runs $(VRUNS) --seeds $(subst $(space),$(comma),$(strip $(VERDICT_SEEDS))) --scale $(SCALE) $(verdict_skip_flag) --out $(VOUT) --quiet
	@cat $(VOUT)/summary.md
endef

# The README's headline and docs/results.md, from the default block of verdicts
# (the last make verdicts or make sensitivity); the text and Llama studies beside
# it when results-text/verdicts and results-llama/verdicts exist.
results:
	@./scripts/readme_results.sh $(RES)/verdicts README.md docs/results.md "$(if $(wildcard $(RES)-text/verdicts/verdicts.csv),$(RES)-text/verdicts)" $(if $(wildcard $(RES)-llama/verdicts/verdicts.csv),$(RES)-llama/verdicts)
