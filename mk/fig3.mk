# Paper Fig. 3: the three-block random quadratic; GD, blockwise GD, Adam (beta2 -> 1), Adam-mini.
# One scale only: the paper's own problem, with the controls of its claims, runs in about a second.
NON_TT_EXPS += fig3
$(RES)/fig3/run.txt: $(BUILD)/bin/fig3
	$< --out $(@D) --quiet
$(RES)/fig3/claims.txt: $(RES)/fig3/run.txt ;
$(FIG)/fig3a_hessian.png: $(RES)/fig3/run.txt plots/fig3_hessian.gp
	$(call render,plots/fig3_hessian.gp,res='$(RES)/fig3'; mat='H')
$(FIG)/fig3b_loss.png: $(RES)/fig3/run.txt plots/fig3_loss.gp
	$(call render,plots/fig3_loss.gp,res='$(RES)/fig3'; problem='full')
$(FIG)/fig3c_block_hessian.png: $(RES)/fig3/run.txt plots/fig3_hessian.gp
	$(call render,plots/fig3_hessian.gp,res='$(RES)/fig3'; mat='H1')
$(FIG)/fig3d_block_loss.png: $(RES)/fig3/run.txt plots/fig3_loss.gp
	$(call render,plots/fig3_loss.gp,res='$(RES)/fig3'; problem='h1')
$(FIG)/fig3e_controls.png: $(RES)/fig3/run.txt plots/fig3_controls.gp
	$(call render,plots/fig3_controls.gp,res='$(RES)/fig3')
FIGURES += $(FIG)/fig3a_hessian.png $(FIG)/fig3b_loss.png $(FIG)/fig3c_block_hessian.png $(FIG)/fig3d_block_loss.png \
           $(FIG)/fig3e_controls.png
CLAIMS += $(RES)/fig3/claims.txt
# make verdicts: one run per seed (matrices, w0 and the random partition from the seed).
VERDICT_EXPS += fig3
VCMD_fig3 := --seed SEED
# Each claim's gap and its control's, one point per seed.
$(FIG)/fig3_gaps.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/fig3/seed$(s)/run.txt) plots/fig3_gaps.gp
	$(call render,plots/fig3_gaps.gp,runs='$(VRUNS)/fig3'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/fig3_gaps.png
