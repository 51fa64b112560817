# Extension: coarse partitions (coarse). Adam-mini with Algorithm 3, Algorithm 2,
# one block, merged query/key heads and a random layout of Algorithm 3's block
# sizes, each at its searched lr and 2x, 4x it (docs/coarse.md). Quick: 2 layers;
# paper: 4 layers (the 2-layer paper run: coarse --scale paper --layers 2).
TT_EXPS += coarse
LLAMA_EXPS += coarse
COARSE_PNGS := $(FIG)/coarse.png
$(RES)/coarse/run.txt: $(BUILD)/bin/coarse
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/coarse/claims.txt: $(RES)/coarse/run.txt
$(FIG)/coarse.png: $(RES)/coarse/run.txt plots/coarse.gp
	$(call render,plots/coarse.gp,res='$(RES)/coarse')
.PHONY: coarse
coarse: $(COARSE_PNGS) $(RES)/coarse/claims.txt
FIGURES += $(COARSE_PNGS)
CLAIMS += $(RES)/coarse/claims.txt
# make verdicts: claims coarse.whole_hurts and coarse.alg2_hurts, one thread per run.
VERDICT_EXPS += coarse
VCMD_coarse := --scale $(SCALE) --seed SEED --data-seed SEED --threads 1
$(FIG)/coarse_seeds.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/coarse/seed$(s)/run.txt) plots/coarse_seeds.gp
	$(call render,plots/coarse_seeds.gp,runs='$(VRUNS)/coarse'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/coarse_seeds.png
