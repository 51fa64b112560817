# Paper Fig. 6: the Hessian of each parameter block of the 1-layer
# Transformer at 1% of training; the kappa(H) vs kappa(D_Adam H) table; the
# Principle-1 partition checker on the Transformer and on the MLP; the block
# structure of every tensor through steps 0-100 (block_structure).
TT_EXPS += fig6 partition_check block_structure
LLAMA_EXPS += fig6 partition_check block_structure
# partition_check's claims read partition_check.tt.* and .mlp.*: on the Llama it
# writes partition_check.llama.* (its figure run), judged by no claim.
LLAMA_VERDICT_SKIP += partition_check
FIG6_BLOCKS := query key value attn_proj mlp_fc1 mlp_proj embed output
FIG6_PNGS := $(FIG6_BLOCKS:%=$(FIG)/fig6_%.png)
$(RES)/fig6/run.txt: $(BUILD)/bin/fig6
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/fig6/claims.txt: $(RES)/fig6/run.txt
$(FIG6_PNGS): $(FIG)/fig6_%.png: $(RES)/fig6/run.txt plots/fig6.gp
	$(call render,plots/fig6.gp,res='$(RES)/fig6'; blk='$*')

$(RES)/partition_check/run.txt: $(BUILD)/bin/partition_check
	$< --model $(TT_KIND) --scale $(SCALE) $(TT_DATA) --out $(@D) --quiet
$(RES)/partition_check_mlp/run.txt: $(BUILD)/bin/partition_check
	$< --model mlp --scale $(SCALE) --out $(@D) --quiet
$(RES)/partition_check/claims.txt: $(RES)/partition_check/run.txt
$(RES)/partition_check_mlp/claims.txt: $(RES)/partition_check_mlp/run.txt

# block_structure: one seed here (its seed bands come from make verdicts)
$(RES)/block_structure/run.txt: $(BUILD)/bin/block_structure
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/block_structure/claims.txt: $(RES)/block_structure/run.txt
$(RES)/block_structure/bands.csv: $(RES)/block_structure/run.txt
	$(BUILD)/bin/block_structure --bands-of $(@D) --out $(@D) --quiet
$(FIG)/block_structure.png: $(RES)/block_structure/bands.csv plots/block_structure.gp
	$(call render,plots/block_structure.gp,bands='$<'; runs_text='seed 1'; llama=$(if $(filter llama,$(ARCH)),1,0))

FIGURES += $(FIG6_PNGS) $(FIG)/block_structure.png
CLAIMS += $(RES)/fig6/claims.txt \
          $(RES)/partition_check/claims.txt \
          $(RES)/partition_check_mlp/claims.txt $(RES)/block_structure/claims.txt

# make verdicts: fig6's four claims, Principle 1 on both models (one run: the MLP
# claim's control is the Transformer), block_structure's claim and its seed bands.
VERDICT_EXPS += fig6 partition_check block_structure
VCMD_fig6 := --scale $(SCALE) --seed SEED --data-seed SEED --save-h 0
VCMD_partition_check := --model both --scale $(SCALE) --seed SEED --data-seed SEED --save-h 0
BS_RUNS := $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/block_structure/seed$(s))
$(VOUT)/block_structure/bands.csv: $(BS_RUNS:%=%/run.txt) $(BUILD)/bin/block_structure
	$(BUILD)/bin/block_structure --bands-of $(subst $(space),$(comma),$(strip $(BS_RUNS))) --out $(@D) --quiet
$(FIG)/block_structure_seeds.png: $(VOUT)/block_structure/bands.csv plots/block_structure.gp
	$(call render,plots/block_structure.gp,bands='$<'; runs_text='$(words $(VERDICT_SEEDS)) seeds ($(firstword $(VERDICT_SEEDS))-$(lastword $(VERDICT_SEEDS)))'; llama=$(if $(filter llama,$(ARCH)),1,0))
VERDICT_FIGURES += $(FIG)/block_structure_seeds.png
