/* Claims on exp2_blockwise_gd (App. D.1, Exp 2): blockwise GD with searched per-block lrs against
 * AdamW; statistics as train_compare.c's note says. */
#include "verdict/claims/claims.h"

#define PLACE \
    "App. D.1 (More Results for Motivation), Exp 2, Fig. (blockwise GD on a 1-layer Transformer)"
#define AFTER_DATA \
    "the heavy-ball first grids were centred after a seed-1 exploration; the coordinate search was cut to one " \
    "pass over 12 layers before any run of it"
#define PASSES2 \
    {.choice = "coordinate search", \
     .name = "passes2", \
     .flags = "--passes 2", \
     .why = "the paper grid-searches one lr per block without saying how; two coordinate passes instead of one"}

static const claim_family FAMILIES[] = {
    {.experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient ... block-wise GD outperforms AdamW",
     .place = PLACE,
     .control_what = "GD with one searched lr for every parameter: one lr per block is claimed to be what makes GD "
                     "sufficient, so the rule must reject one lr for all",
     .depends = "coordinate search (quick: 1 pass over 12 layers, factors x4 extended to x64) from the Hessian rule; "
                "300 steps; momentum and weight decay differ (see the next two claims)",
     .holm = "exp2_blockwise_gd",
     .after_data = AFTER_DATA,
     .alt = {ALT_LR_GRID9, PASSES2},
     .reading = {{.id = "exp2_blockwise_gd.blockgd_vs_adamw",
                   .claim = "blockwise GD with searched per-block lrs is not worse than AdamW (excess < 2% of its "
                            "progress)",
                   .stat = "exp2_blockwise_gd.blockgd_excess",
                   .stat_what = "(L_blockGD - L_AdamW)/(L_0 - L_AdamW), held-out; the original comparison (no "
                                "momentum vs beta1 0.9)",
                   .side = CLAIM_BELOW,
                   .threshold = 0.02,
                   .kind = RULE_INTERVAL,
                   .control = "exp2_blockwise_gd.control.gd_excess"}}},
    {.experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient",
     .place = PLACE,
     .holm = "exp2_blockwise_gd",
     .after_data = AFTER_DATA,
     .alt = {ALT_LR_GRID9, PASSES2},
     .reading = {{.id = "exp2_blockwise_gd.heavy_ball_vs_adamw",
                   .claim = "blockwise heavy ball (AdamW's beta1 = 0.9 momentum, searched per-block lrs) is not "
                            "worse than AdamW",
                   .stat = "exp2_blockwise_gd.blockhb_excess",
                   .stat_what = "(L_blockHB - L_AdamW)/(L_0 - L_AdamW), held-out",
                   .side = CLAIM_BELOW,
                   .threshold = 0.02,
                   .kind = RULE_INTERVAL,
                   .control = "exp2_blockwise_gd.control.heavy_ball_excess",
                   .control_what = "heavy ball with one searched lr for every parameter (momentum SGD): the same "
                                   "momentum without per-block lrs must be rejected",
                   .depends = "same search as blockwise GD; AdamW keeps weight decay 0.1, heavy ball has none"},
                  {.id = "exp2_blockwise_gd.blockgd_vs_adam_b1_0",
                   .claim = "blockwise GD with searched per-block lrs is not worse than Adam with beta1 = 0 (no "
                            "weight decay)",
                   .stat = "exp2_blockwise_gd.blockgd_excess_over_adam_b1_0",
                   .stat_what = "(L_blockGD - L_Adam(beta1=0))/(L_0 - L_Adam(beta1=0)), held-out",
                   .side = CLAIM_BELOW,
                   .threshold = 0.02,
                   .kind = RULE_INTERVAL,
                   .control = "exp2_blockwise_gd.control.gd_excess_over_adam_b1_0",
                   .control_what = "GD with one searched lr for every parameter against the same Adam",
                   .depends = "beta2 0.999 and eps 1e-8 for Adam; the blockwise GD of the first claim"}}},
    {.experiment = "exp2_blockwise_gd",
     .paper = "we conduct the \"block-wise GD\" and we grid-search the learning rate for each block",
     .place = PLACE,
     .control_what = "full-batch GD with one searched lr for every parameter",
     .depends = "quick: 64 sequences (one batch), 300 full-batch steps; its own searches of every lr",
     .holm = "exp2_blockwise_gd",
     .after_data = AFTER_DATA,
     .alt = {ALT_LR_GRID9, PASSES2},
     .reading = {{.id = "exp2_blockwise_gd.full_batch",
                   .claim = "in full batch on a fixed set of sequences, searched blockwise GD reaches AdamW's "
                            "training loss within 2% of AdamW's progress",
                   .stat = "exp2_blockwise_gd.full_batch_blockgd_excess",
                   .stat_what = "(F_blockGD - F_AdamW)/(F_0 - F_AdamW), F the loss on the fixed training set (the "
                                "objective)",
                   .side = CLAIM_BELOW,
                   .threshold = 0.02,
                   .kind = RULE_INTERVAL,
                   .control = "exp2_blockwise_gd.control.full_batch_gd_excess"}}},
};
const claim_file claims_exp2_blockwise_gd = CLAIM_FILE(FAMILIES);
