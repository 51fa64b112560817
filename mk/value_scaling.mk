# How value's Hessian entries compare with query's and key's as the setting moves toward or
# away from the paper's (issue: the paper says "about 10^6 larger"; fig6 measures ~10^4 at
# the paper's sizes): one make sweep of fig6 per factor the paper leaves open or states
# (checkpoint, training lr, context, vocabulary, heads, width, MLP width, data, Hessian
# batch), 3 seeds each, and one figure of all of them beside the paper's 10^6.
#   make value-scaling   (~200 fig6 runs; about 25 min on 2 cores)
VALUE_SCALING := checkpoint lr T V heads C M data hess-batch
VS_checkpoint := --checkpoint 0.001 0.003 0.01 0.03 0.1 0.3 1
VS_lr := --lr 0.0003 0.001 0.003 0.01
VS_T := --T 4 8 16 32
VS_V := --V 2 4 8 16 32
VS_heads := --heads 1 2 4 8 16
VS_C := --C 8 16 32
VS_M := --M 16 32 64 128
VS_data := --data markov text
VS_hess-batch := --hess-batch 64 256 1024
VALUE_STAT := fig6.value.log10_ratio
.PHONY: value-scaling
value-scaling: deps
	@$(foreach s,$(VALUE_SCALING),$(MAKE) --no-print-directory sweep-only PROG=fig6 SEEDS=3 SWEEP_NAME=value-$(s) \
	  VARY='$(VS_$(s))' STAT=$(VALUE_STAT) &&) true
	@mkdir -p $(FIG)
	gnuplot -e "res='$(RES)/sweeps'; out='$(FIG)/value_scaling.png.tmp'" plots/value_scaling.gp && \
	  mv $(FIG)/value_scaling.png.tmp $(FIG)/value_scaling.png && echo "rendered $(FIG)/value_scaling.png"
