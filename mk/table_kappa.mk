# Paper appendix Exp 1, Table "Comparison of kappa(H) and kappa(D_Adam H)": kappa(D M_b)/kappa(M_b)
# on every Algorithm 3 block, for H and its Gauss-Newton part G, with D from the paper's Fig. 4 recipe
# and from AdamW's v-hat, at checkpoints after 1, 2, 5 steps and at 1%, 5%, 10%, 100% of one
# training run (the paper's "after 1 training step" and "at 1% training step" among them). This
# one run replaces the first version's two (table_kappa at 1%, table_kappa_step1 after 1 step).
TT_EXPS += table_kappa
LLAMA_EXPS += table_kappa
$(RES)/table_kappa/run.txt: $(BUILD)/bin/table_kappa
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/table_kappa/claims.txt $(RES)/table_kappa/table.md $(RES)/table_kappa/sweep.csv: $(RES)/table_kappa/run.txt
$(FIG)/table_kappa_sweep.png: $(RES)/table_kappa/run.txt plots/table_kappa_sweep.gp
	$(call render,plots/table_kappa_sweep.gp,dirs='$(RES)/table_kappa'; label='seed 1')
FIGURES += $(FIG)/table_kappa_sweep.png
CLAIMS += $(RES)/table_kappa/claims.txt

# make verdicts: one run per seed (initialisation, batches, data, the control's scaling and
# the Fig. 4 draws from the seed); the sweep with seed bands from those runs.
VERDICT_EXPS += table_kappa
$(FIG)/table_kappa_seeds.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/table_kappa/seed$(s)/run.txt) \
                              plots/table_kappa_sweep.gp
	$(call render,plots/table_kappa_sweep.gp,dirs='$(foreach s,$(VERDICT_SEEDS),$(VRUNS)/table_kappa/seed$(s))'; label='seeds $(VERDICT_SEEDS): mean and range')
VERDICT_FIGURES += $(FIG)/table_kappa_seeds.png
