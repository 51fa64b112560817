/* Claims on ablation_vstat (App. D.2): mean(v) against the other block statistics; statistics as
 * train_compare.c's note says. */
#include "verdict/claims/claims.h"

static const claim_family FAMILIES[] = {
    {.experiment = "ablation_vstat",
     .paper = "all these candidates perform worse than mean(v) in Adam-mini",
     .place = "App. D.2, Ablation studies",
     .control_what = "the same margin for min(g_b^2), the statistic known to be worse (it diverges in the paper's "
                     "figure): a rule that calls it the best is blind",
     .depends = "the statistic acts on the current g_b^2 (Adam-mini keeps no per-coordinate v); 300 steps",
     .paper_setting = "the paper's ablation is on Llama 2-20M pre-training; here the tiny Transformer",
     .alt = {ALT_STEPS(600, 300), ALT_LR_GRID9},
     .reading = {{.id = "ablation_vstat.mean_best",
                   .claim = "mean(g_b^2) beats the best of l2, l1, max and min",
                   .stat = "ablation_vstat.mean_margin",
                   .stat_what = "(min over the others of L_s - L_mean)/(L_0 - L_mean), held-out, each at its best "
                                "searched lr",
                   .side = CLAIM_ABOVE,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "ablation_vstat.control.min_margin"}}},
};
const claim_file claims_ablation_vstat = CLAIM_FILE(FAMILIES);
