# Paper Fig. 6: the Hessian of each parameter block of the 1-layer
# Transformer at 1% of training; the kappa(H) vs kappa(D_Adam H) table; the
# Principle-1 partition checker on the Transformer and on the MLP.
FIG6_BLOCKS := query key value attn_proj mlp_fc1 mlp_proj embed output
FIG6_PNGS := $(FIG6_BLOCKS:%=$(FIG)/fig6_%.png)
$(RES)/fig6/run.txt: $(BUILD)/bin/fig6
	$< --scale $(SCALE) --out $(@D) --quiet
$(RES)/fig6/claims.txt: $(RES)/fig6/run.txt
$(FIG6_PNGS): $(FIG)/fig6_%.png: $(RES)/fig6/run.txt plots/fig6.gp
	$(call render,plots/fig6.gp,res='$(RES)/fig6'; blk='$*')

$(RES)/partition_check/run.txt: $(BUILD)/bin/partition_check
	$< --model tt --scale $(SCALE) --out $(@D) --quiet
$(RES)/partition_check_mlp/run.txt: $(BUILD)/bin/partition_check
	$< --model mlp --scale $(SCALE) --out $(@D) --quiet
$(RES)/partition_check/claims.txt: $(RES)/partition_check/run.txt
$(RES)/partition_check_mlp/claims.txt: $(RES)/partition_check_mlp/run.txt

FIGURES += $(FIG6_PNGS)
CLAIMS += $(RES)/fig6/claims.txt \
          $(RES)/partition_check/claims.txt \
          $(RES)/partition_check_mlp/claims.txt
