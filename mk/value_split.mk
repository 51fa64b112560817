# Extension: value split by output neuron vs value as one block (value_split),
# short and long runs, each with its own lr search (docs/value_split.md).
TT_EXPS += value_split
LLAMA_EXPS += value_split
VALUE_SPLIT_PNGS := $(FIG)/value_split.png
$(RES)/value_split/run.txt: $(BUILD)/bin/value_split
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/value_split/claims.txt: $(RES)/value_split/run.txt
$(FIG)/value_split.png: $(RES)/value_split/run.txt plots/value_split.gp
	$(call render,plots/value_split.gp,res='$(RES)/value_split')
.PHONY: value_split
value_split: $(VALUE_SPLIT_PNGS) $(RES)/value_split/claims.txt
FIGURES += $(VALUE_SPLIT_PNGS)
CLAIMS += $(RES)/value_split/claims.txt
# make verdicts: claims value_split.whole_better_short and value_split.neuron_fine_long.
VERDICT_EXPS += value_split
VCMD_value_split := --scale $(SCALE) --seed SEED --data-seed SEED --threads 1
$(FIG)/value_split_seeds.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/value_split/seed$(s)/run.txt) plots/value_split_seeds.gp
	$(call render,plots/value_split_seeds.gp,runs='$(VRUNS)/value_split'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/value_split_seeds.png
