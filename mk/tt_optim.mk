# Optimizer experiments on the tiny Transformer (ARCH=llama: the Llama-style model).
TT_EXPS += train_compare exp2_blockwise_gd leave_out ablation_vstat trajectory
LLAMA_EXPS += train_compare exp2_blockwise_gd leave_out ablation_vstat trajectory
TT_OPTIM_SCALE := --scale $(SCALE) $(TT_DATA) $(TT_ARCH)

$(RES)/train_compare/run.txt: $(BUILD)/bin/train_compare
	$< $(TT_OPTIM_SCALE) --out $(@D) --quiet
$(RES)/train_compare/claims.txt: $(RES)/train_compare/run.txt
$(FIG)/train_compare.png: $(RES)/train_compare/run.txt plots/tt_curves.gp
	$(call render,plots/tt_curves.gp,file='$(RES)/train_compare/eval.csv'; ref='$(RES)/train_compare/reference.csv'; c0=2; c1=7; ttl='$(TT_TITLE): held-out loss above the entropy floor (best lr of each method)'; ylab='held-out loss - entropy floor')

$(RES)/ablation_vstat/run.txt: $(BUILD)/bin/ablation_vstat
	$< $(TT_OPTIM_SCALE) --out $(@D) --quiet
$(RES)/ablation_vstat/claims.txt: $(RES)/ablation_vstat/run.txt
$(FIG)/ablation_vstat.png: $(RES)/ablation_vstat/run.txt plots/tt_curves.gp
	$(call render,plots/tt_curves.gp,file='$(RES)/ablation_vstat/eval.csv'; logy=1; c0=2; c1=6; ttl='Adam-mini block statistic of g_b^2 (best lr each)'; ylab='held-out loss')

$(RES)/trajectory/run.txt: $(BUILD)/bin/trajectory
	$< $(TT_OPTIM_SCALE) --out $(@D) --quiet
$(RES)/trajectory/claims.txt: $(RES)/trajectory/run.txt
$(FIG)/trajectory.png: $(RES)/trajectory/run.txt plots/tt_curves.gp
	$(call render,plots/tt_curves.gp,file='$(RES)/trajectory/distance.csv'; c0=2; c1=6; ttl='Distance to the AdamW weights (every optimizer at peak lr 1e-3; 1 = unrelated directions)'; ylab='|w - w_A| / sqrt(|w - w_0|^2 + |w_A - w_0|^2)')

FIGURES += $(FIG)/train_compare.png $(FIG)/ablation_vstat.png $(FIG)/trajectory.png
CLAIMS += $(RES)/train_compare/claims.txt $(RES)/ablation_vstat/claims.txt $(RES)/trajectory/claims.txt

$(RES)/exp2_blockwise_gd/run.txt: $(BUILD)/bin/exp2_blockwise_gd
	$< $(TT_OPTIM_SCALE) --out $(@D) --quiet
$(RES)/exp2_blockwise_gd/claims.txt: $(RES)/exp2_blockwise_gd/run.txt
$(FIG)/exp2_blockwise_gd.png: $(RES)/exp2_blockwise_gd/run.txt plots/tt_curves.gp
	$(call render,plots/tt_curves.gp,file='$(RES)/exp2_blockwise_gd/eval.csv'; ref='$(RES)/exp2_blockwise_gd/reference.csv'; c0=2; c1=8; ttl='One searched lr per block vs Adam (paper Exp 2)'; ylab='held-out loss - entropy floor')

$(RES)/leave_out/run.txt: $(BUILD)/bin/leave_out
	$< $(TT_OPTIM_SCALE) --out $(@D) --quiet
$(RES)/leave_out/claims.txt: $(RES)/leave_out/run.txt
$(FIG)/leave_out_curves.png: $(RES)/leave_out/run.txt plots/tt_curves.gp
	$(call render,plots/tt_curves.gp,file='$(RES)/leave_out/eval.csv'; ref='$(RES)/leave_out/reference.csv'; c0=2; c1=5; ttl='Adam leave-x-out (paper Fig. 5): best searched lrs vs Adam'; ylab='held-out loss - entropy floor')
$(FIG)/leave_out_gap.png: $(RES)/leave_out/run.txt plots/leave_out_gap.gp
	$(call render,plots/leave_out_gap.gp,res='$(RES)/leave_out')

FIGURES += $(FIG)/exp2_blockwise_gd.png $(FIG)/leave_out_curves.png $(FIG)/leave_out_gap.png
CLAIMS += $(RES)/exp2_blockwise_gd/claims.txt $(RES)/leave_out/claims.txt

# make verdicts: each program once per seed, one thread (docs/verdicts.md, docs/optimizers.md).
TT_OPTIM_VCMD := --scale $(SCALE) --seed SEED --data-seed SEED --threads 1
VERDICT_EXPS += train_compare exp2_blockwise_gd leave_out ablation_vstat trajectory
VCMD_train_compare := $(TT_OPTIM_VCMD)
VCMD_exp2_blockwise_gd := $(TT_OPTIM_VCMD)
VCMD_leave_out := $(TT_OPTIM_VCMD)
VCMD_ablation_vstat := $(TT_OPTIM_VCMD)
VCMD_trajectory := $(TT_OPTIM_VCMD)
