# Paper Fig. 2: the exact Hessian of the 8-neuron MLP at 0, 50% and
# 100% of Adam training, as |H| heatmaps, with the block-diagonal claim.
NON_TT_EXPS += fig2
FIG2_PNGS := $(FIG)/fig2_init.png $(FIG)/fig2_mid.png $(FIG)/fig2_end.png
$(RES)/fig2/run.txt: $(BUILD)/bin/fig2
	$< --scale $(SCALE) --out $(@D) --quiet
$(RES)/fig2/claims.txt: $(RES)/fig2/run.txt
$(FIG2_PNGS): $(FIG)/fig2_%.png: $(RES)/fig2/run.txt plots/fig2.gp
	$(call render,plots/fig2.gp,res='$(RES)/fig2'; tag='$*')
FIGURES += $(FIG2_PNGS)
CLAIMS += $(RES)/fig2/claims.txt
# make verdicts: claims fig2.neuron_blocks and fig2.whole_blocks (the Hessians are not kept)
VERDICT_EXPS += fig2
VCMD_fig2 := --scale $(SCALE) --seed SEED --data-seed SEED --save-h 0
