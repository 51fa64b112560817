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
$(FIG)/fig4a_r_vs_tau_readings.png: $(RES)/fig4/run.txt plots/fig4_r_vs_tau_readings.gp
	$(call render,plots/fig4_r_vs_tau_readings.gp,res='$(RES)/fig4'; panel='a')
$(FIG)/fig4b_r_vs_tau_readings.png: $(RES)/fig4/run.txt plots/fig4_r_vs_tau_readings.gp
	$(call render,plots/fig4_r_vs_tau_readings.gp,res='$(RES)/fig4'; panel='b')
FIGURES += $(FIG)/fig4a_r_vs_tau.png $(FIG)/fig4b_r_vs_tau.png $(FIG)/fig4a_phase.png $(FIG)/fig4b_phase.png \
           $(FIG)/fig4a_r_vs_tau_readings.png $(FIG)/fig4b_r_vs_tau_readings.png
CLAIMS += $(RES)/fig4/claims.txt
# make verdicts: one run per seed (theta and x draws from the seed); one worker thread per run.
VERDICT_EXPS += fig4
VCMD_fig4 := --scale $(SCALE) --seed SEED --threads 1
# Every curve's Spearman rho in the four readings, one point per seed, and the shuffled-tau control.
$(FIG)/fig4_rho.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/fig4/seed$(s)/run.txt) plots/fig4_rho.gp
	$(call render,plots/fig4_rho.gp,runs='$(VRUNS)/fig4'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/fig4_rho.png
