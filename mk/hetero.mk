# Extension: block heterogeneity of the Hessian (hetero). The exact spectrum of
# every Algorithm 3 block of the tiny Transformer (fig6 setup) and of the MLP
# (partition_check's) at initialisation, 1% and the end of training: eigenvalue
# densities per block type, log10 |lambda|max per block against random blocks.
TT_EXPS += hetero
LLAMA_EXPS += hetero
HETERO_PNGS := $(FIG)/hetero_spectra.png $(FIG)/hetero_lmax.png
$(RES)/hetero/run.txt: $(BUILD)/bin/hetero
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/hetero/claims.txt: $(RES)/hetero/run.txt
$(FIG)/hetero_spectra.png: $(RES)/hetero/run.txt plots/hetero_spectra.gp
	$(call render,plots/hetero_spectra.gp,res='$(RES)/hetero')
$(FIG)/hetero_lmax.png: $(RES)/hetero/run.txt plots/hetero_lmax.gp
	$(call render,plots/hetero_lmax.gp,res='$(RES)/hetero')
.PHONY: hetero
hetero: $(HETERO_PNGS) $(RES)/hetero/claims.txt
FIGURES += $(HETERO_PNGS)
CLAIMS += $(RES)/hetero/claims.txt
# make verdicts: claims hetero.tt_vs_mlp and hetero.beyond_random; their statistics per seed.
VERDICT_EXPS += hetero
VCMD_hetero := --scale $(SCALE) --seed SEED --data-seed SEED
$(FIG)/hetero_seeds.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/hetero/seed$(s)/run.txt) plots/hetero_seeds.gp
	$(call render,plots/hetero_seeds.gp,runs='$(VRUNS)/hetero'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/hetero_seeds.png
