# Extension: why mean(v) works (vspread). The spread of AdamW's v-hat inside
# rows, columns, heads and random groups along the fig6 training, and
# Adam-mini's per-block learning rate against Adam's per block type.
TT_EXPS += vspread
LLAMA_EXPS += vspread
VSPREAD_PNGS := $(FIG)/vspread_spread.png $(FIG)/vspread_lr.png
$(RES)/vspread/run.txt: $(BUILD)/bin/vspread
	$< --scale $(SCALE) $(TT_DATA) $(TT_ARCH) --out $(@D) --quiet
$(RES)/vspread/claims.txt: $(RES)/vspread/run.txt
$(FIG)/vspread_spread.png: $(RES)/vspread/run.txt plots/vspread_spread.gp
	$(call render,plots/vspread_spread.gp,res='$(RES)/vspread')
$(FIG)/vspread_lr.png: $(RES)/vspread/run.txt plots/vspread_lr.gp
	$(call render,plots/vspread_lr.gp,res='$(RES)/vspread')
.PHONY: vspread
vspread: $(VSPREAD_PNGS) $(RES)/vspread/claims.txt
FIGURES += $(VSPREAD_PNGS)
CLAIMS += $(RES)/vspread/claims.txt
# make verdicts: the four vspread claims; their statistics per seed.
VERDICT_EXPS += vspread
VCMD_vspread := --scale $(SCALE) --seed SEED --data-seed SEED
$(FIG)/vspread_seeds.png: $(foreach s,$(VERDICT_SEEDS),$(VRUNS)/vspread/seed$(s)/run.txt) plots/vspread_seeds.gp
	$(call render,plots/vspread_seeds.gp,runs='$(VRUNS)/vspread'; seeds='$(VERDICT_SEEDS)')
VERDICT_FIGURES += $(FIG)/vspread_seeds.png
