# Paper Fig. 3: the three-block random quadratic; GD, blockwise GD, Adam (beta2 -> 1), Adam-mini.
# One scale only: the paper's own problem runs in about a second.
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
FIGURES += $(FIG)/fig3a_hessian.png $(FIG)/fig3b_loss.png $(FIG)/fig3c_block_hessian.png $(FIG)/fig3d_block_loss.png
CLAIMS += $(RES)/fig3/claims.txt
