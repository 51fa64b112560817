# Extension: the MLP's Hessian "after one step" against the softmax factor
# p(1-p) of Collobert's argument (paper Fig. 2(a), App. "More Discussions"):
# mlp_steps trains fig2's MLP with 100 and 10 classes (cross-entropy and a
# squared-loss twin) and takes H at steps 0, 1, 2, 5, ..., 7,900.
# make mlp_steps: the figure of one seed; make verdicts: its claims over the
# seeds and the figure of every seed.
NON_TT_EXPS += mlp_steps
$(RES)/mlp_steps/run.txt: $(BUILD)/bin/mlp_steps
	$< --scale $(SCALE) --out $(@D) --quiet
$(RES)/mlp_steps/claims.txt: $(RES)/mlp_steps/run.txt
$(FIG)/mlp_steps.png: $(RES)/mlp_steps/run.txt plots/mlp_steps.gp
	$(call render,plots/mlp_steps.gp,runs='$(RES)/mlp_steps'; runs_text='seed 1')
FIGURES += $(FIG)/mlp_steps.png
CLAIMS += $(RES)/mlp_steps/claims.txt
.PHONY: mlp_steps
mlp_steps: $(FIG)/mlp_steps.png

VERDICT_EXPS += mlp_steps
MLP_STEPS_RUNS := $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/mlp_steps/seed$(s))
$(FIG)/mlp_steps_seeds.png: $(MLP_STEPS_RUNS:%=%/run.txt) plots/mlp_steps.gp
	$(call render,plots/mlp_steps.gp,runs='$(MLP_STEPS_RUNS)'; runs_text='$(words $(VERDICT_SEEDS)) seeds ($(firstword $(VERDICT_SEEDS))-$(lastword $(VERDICT_SEEDS)))')
VERDICT_FIGURES += $(FIG)/mlp_steps_seeds.png
