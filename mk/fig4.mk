# Paper Fig. 4: r = kappa(D_Adam H)/kappa(H) against tau for rotated random PD matrices.
# Quick scale by default; SCALE=paper runs the paper's 40 theta x 100 x x 51 R.
$(RES)/fig4/run.txt: $(BUILD)/bin/fig4
	$< --scale $(SCALE) --out $(@D) --quiet
$(RES)/fig4/claims.txt: $(RES)/fig4/run.txt ;
$(FIG)/fig4a_r_vs_tau.png: $(RES)/fig4/run.txt plots/fig4_r_vs_tau.gp
	$(call render,plots/fig4_r_vs_tau.gp,res='$(RES)/fig4'; panel='a')
$(FIG)/fig4b_r_vs_tau.png: $(RES)/fig4/run.txt plots/fig4_r_vs_tau.gp
	$(call render,plots/fig4_r_vs_tau.gp,res='$(RES)/fig4'; panel='b')
$(FIG)/fig4a_phase.png: $(RES)/fig4/run.txt plots/fig4_phase.gp
	$(call render,plots/fig4_phase.gp,res='$(RES)/fig4'; panel='a')
$(FIG)/fig4b_phase.png: $(RES)/fig4/run.txt plots/fig4_phase.gp
	$(call render,plots/fig4_phase.gp,res='$(RES)/fig4'; panel='b')
FIGURES += $(FIG)/fig4a_r_vs_tau.png $(FIG)/fig4b_r_vs_tau.png $(FIG)/fig4a_phase.png $(FIG)/fig4b_phase.png
CLAIMS += $(RES)/fig4/claims.txt
