# Paper Fig. 4: r = kappa(D_Adam H)/kappa(H) against tau for rotated random PD matrices.
# Quick scale by default; SCALE=paper runs the paper's 40 theta x 100 x x 51 R.
NON_TT_EXPS += fig4
$(RES)/fig4/run.txt: $(BUILD)/bin/fig4
	$< --scale $(SCALE) --out $(@D) --quiet
$(RES)/fig4/claims.txt: $(RES)/fig4/run.txt ;
# Panel a (kappa = 500, several d) and b (d = 50, several kappa), each drawn by three
# scripts: fig4<panel>_<plot>.png from plots/fig4_<plot>.gp.
FIG4_PLOTS := r_vs_tau phase r_vs_tau_readings r_vs_tau_R
define fig4_panel
$(FIG4_PLOTS:%=$(FIG)/fig4$(1)_%.png): $(FIG)/fig4$(1)_%.png: $(RES)/fig4/run.txt plots/fig4_%.gp
	$$(call render,plots/fig4_$$*.gp,res='$(RES)/fig4'; panel='$(1)')
FIGURES += $(FIG4_PLOTS:%=$(FIG)/fig4$(1)_%.png)
endef
$(foreach p,a b,$(eval $(call fig4_panel,$(p))))
CLAIMS += $(RES)/fig4/claims.txt
# make verdicts: one run per seed (theta and x draws from the seed); one worker thread per run.
VERDICT_EXPS += fig4
VCMD_fig4 := --scale $(SCALE) --seed SEED --threads 1
# Every curve's Spearman rho in the four readings, one point per seed, and the shuffled-tau control.
$(FIG)/fig4_rho.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/fig4/seed$(s)/run.txt) plots/fig4_rho.gp
	$(call render,plots/fig4_rho.gp,runs='$(VRUNS)/fig4'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/fig4_rho.png
