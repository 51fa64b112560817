/* Claims on vspread (App. C, 'Why using average v'): v-hat inside the blocks, and why its mean
 * can stand for it. */
#include "verdict/claims/claims.h"

#define PLACE \
    "App. C (More Discussions), 'Why using average v as learning rates'"
#define LATE \
    {.choice = "checkpoints", \
     .name = "late", \
     .flags = "--checkpoints 0.01,0.1,0.5,1", \
     .why = "'along training' need not include step 1, where v-hat is one gradient's square: checkpoints at 1%, 10%, " \
            "50% and 100%"}

static const claim_family FAMILIES[] = {
    {.experiment = "vspread",
     .paper = "G usually has similar entries within a row (which associates with the same output neuron), and its "
              "mean value can be a good representative of the whole row",
     .place = PLACE,
     .control_what = "the same with random groups of the row sizes laid on each tensor's entries in place of its "
                     "rows: no group is an output neuron, so the rule must reject it",
     .depends = "the fig6 training (tiny Transformer, AdamW lr 1e-3 cosine, 1,000 steps of 64 sequences); step 1 is "
                "v-hat = g^2 of one batch",
     .holm = "vspread",
     .alt = {LATE, ALT_CKPT_LR_1E2},
     .reading = {{.id = "vspread.rows_vs_tensor",
                   .claim = "along AdamW training, v-hat is more homogeneous within output-neuron rows than within "
                            "random groups of the same sizes in the same tensor, at every checkpoint",
                   .stat = "vspread.rows_vs_tensor.worst",
                   .stat_what = "largest over steps 1, 10, 100, 500, 1000 of the mean over value, attn.proj, "
                                "mlp.fc_1, mlp.proj and lm_head of log2(W_rows/sd): W_rows the pooled within-row sd "
                                "of log10(sqrt(v-hat) + eps), sd the tensor's (the exact mean for random groups); 0: "
                                "rows no better than random, -inf: rows constant",
                   .side = CLAIM_BELOW,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "vspread.control.rows_vs_tensor.worst"}}},
    {.experiment = "vspread",
     .paper = "For all entries in the i-th row of G, they all share the same BP error term e_i ... Therefore, G "
              "usually has similar entries within a row (which associates with the same output neuron)",
     .place = PLACE,
     .control_what = "random groups of the row sizes against random groups of the column sizes on the same entries: "
                     "the same sizes and counts without rows or columns, which the rule must reject",
     .depends = "as vspread.rows_vs_tensor; the tensors' inputs (LayerNorm outputs for value, fc_1 and lm_head; "
                "attention and GELU outputs for attn.proj and mlp.proj)",
     .holm = "vspread",
     .alt = {LATE, ALT_CKPT_LR_1E2},
     .reading = {{.id = "vspread.rows_vs_cols",
                   .claim = "v-hat is more homogeneous within output-neuron rows than within input-neuron columns of "
                            "the same tensors, at every checkpoint (G = e z^T makes columns share z_j as rows share "
                            "e_i)",
                   .stat = "vspread.rows_vs_cols.worst",
                   .stat_what = "largest over the five checkpoints of the mean over the five output-neuron tensors "
                                "of log2(W_rows/W_cols), W the pooled within-group sd of log10(sqrt(v-hat) + eps)",
                   .side = CLAIM_BELOW,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "vspread.control.rows_vs_cols.worst"}}},
    {.experiment = "vspread",
     .paper = "For all entries in the i-th row of G, they all share the same BP error term e_i ... By Principle 1, "
              "query and key should be further partitioned by heads",
     .place = PLACE,
     .control_what = "random groups of the head size against random groups of the row size on the same entries: "
                     "larger random groups are not less homogeneous (the pooled variance has the same mean), so the "
                     "rule must reject it",
     .depends = "as vspread.rows_vs_tensor; 4 heads of 4 rows",
     .holm = "vspread",
     .alt = {LATE, ALT_CKPT_LR_1E2},
     .reading = {{.id = "vspread.heads_vs_rows",
                   .claim = "the BP argument's prediction: v-hat is less homogeneous within a query/key head "
                            "(Algorithm 3's block, several rows) than within its rows, at every checkpoint",
                   .stat = "vspread.heads_vs_rows.worst",
                   .stat_what = "smallest over the five checkpoints of the mean over query and key of "
                                "log2(W_heads/W_rows)",
                   .side = CLAIM_ABOVE,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "vspread.control.heads_vs_rows.worst"}}},
    {.experiment = "vspread",
     .paper = "the average of v is a good representative for the whole v in the block, and can help Adam-mini keep "
              "close to Adam",
     .place = PLACE,
     .control_what = "the same share for random groups of Algorithm 3's block sizes over the same coordinates "
                     "(mixing tensors): a mean over parameters that share nothing, which the rule must reject if it "
                     "tests the blocks and not the overall spread of v-hat",
     .depends = "as vspread.rows_vs_tensor; factor 2 and 'most' (> 1/2) fixed before the runs",
     .holm = "vspread",
     .alt = {LATE, ALT_CKPT_LR_1E2},
     .reading = {{.id = "vspread.lr_close",
                   .claim = "along AdamW training, Adam-mini's per-block lr 1/(sqrt(mean v-hat_b) + eps) is within a "
                            "factor 2 of Adam's 1/(sqrt(v-hat_i) + eps) for most coordinates, at every checkpoint",
                   .stat = "vspread.lr_within2.worst",
                   .stat_what = "smallest over the five checkpoints of the share of the coordinates in Algorithm 3's "
                                "blocks that share one v (all but biases, where Adam-mini keeps Adam's) with |log2 "
                                "ratio| <= 1",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "vspread.control.lr_within2.worst"}}},
};
const claim_file claims_vspread = CLAIM_FILE(FAMILIES);
