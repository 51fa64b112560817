/* Claims on fig6 (the paper's Fig. 6, Sec. 2.3): the tiny Transformer's Hessian blocks, class by
 * class, at 1% of training. */
#include "verdict/claims/claims.h"

#define AFTER_DATA \
    "the off-diagonal excess replaced the old rule with the seed-1 values known"
#define PAPER_SETTING \
    "the paper does not give the training lr to its checkpoint (here AdamW 1e-3, cosine)"
#define COLS_CONTROL \
    "the same excess for each tensor split by its input neurons (columns) instead: a linear layer's Gauss-Newton " \
    "part couples one input neuron's weights through x_j^2, so a column structure is a real competitor that can pass " \
    "(test_hessian makes one: inputs near-orthogonal); a rule that passed both would see blocks in any grouping. The " \
    "permutation null (excess 0 by construction) stays in stats.csv as a calibration row"
#define CONTROL_CHANGED \
    "the control (H_tt randomly permuted, excess 0 by construction: it could never pass) was replaced by the split by " \
    "input neurons after the review (issue 26), with the seed 1-3 values of the new control known (-0.05 to 0.07)"
#define STEP1 \
    {.choice = "checkpoint", \
     .name = "step1", \
     .flags = "--checkpoint 0.001", \
     .why = "the Fig. 6 caption says 'at 1% training step', the Exp 1 text 'after 1 training step': step 1 of 1,000 " \
            "instead of step 10"}

static const claim_family FAMILIES[] = {
    {.experiment = "fig6",
     .paper = "The Hessian of query and key have near-block-diagonal structures. The number of blocks equals the "
              "number of heads",
     .place = "Sec. 2.3, Fig. 6 (a-b), class 1",
     .control_what = COLS_CONTROL,
     .depends = "the tiny Transformer (V 8, C 16, 4 heads), order-2 Markov data, AdamW lr 1e-3, H at step 10 of "
                "1,000 on 256 held-out sequences",
     .after_data = AFTER_DATA "; " CONTROL_CHANGED,
     .paper_setting = PAPER_SETTING,
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4, STEP1},
     .reading = {{.id = "fig6.qk_heads",
                   .claim = "query's and key's Hessian blocks are block-diagonal by heads at 1% of training",
                   .stat = "fig6.qk_heads.min_excess",
                   .stat_what = "smaller of query's and key's off-diagonal excess of the 4-head split inside H_tt "
                                "(0: random, 1: block-diagonal)",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.cols.qk.min_excess"}}},
    {.experiment = "fig6",
     .paper = "The Hessian of attn.proj and MLPs have block-diagonal structures. The number of blocks equals the "
              "number of output neurons",
     .place = "Sec. 2.3, Fig. 6 (d-f), class 2",
     .control_what = COLS_CONTROL,
     .depends = "as fig6.qk_heads; the structure moves during training (block_structure follows it over steps 0-100)",
     .holm = "fig6.neurons",
     .after_data = AFTER_DATA "; " CONTROL_CHANGED,
     .paper_setting = PAPER_SETTING,
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4, STEP1},
     .reading = {{.id = "fig6.neuron_blocks",
                   .claim = "attn.proj, mlp.fc_1 and mlp.proj are block-diagonal by output neurons at 1% of training",
                   .stat = "fig6.neurons.min_excess",
                   .stat_what = "smallest of the three tensors' off-diagonal excess of the output-neuron split "
                                "inside H_tt",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.cols.neurons.min_excess"}}},
    {.experiment = "fig6",
     .paper = "For these two layers, the Hessian sub-block has a near-block-diagonal structure and the number of "
              "blocks equals the number of tokens",
     .place = "Sec. 2.3, Fig. 6 (g-h), class 4",
     .control_what = COLS_CONTROL,
     .depends = "as fig6.qk_heads",
     .after_data = AFTER_DATA "; " CONTROL_CHANGED,
     .paper_setting = PAPER_SETTING,
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4, STEP1},
     .reading = {{.id = "fig6.token_blocks",
                   .claim = "embed's and output's Hessian blocks are block-diagonal by tokens at 1% of training",
                   .stat = "fig6.tokens.min_excess",
                   .stat_what = "smaller of embed's and output's off-diagonal excess of the 8-token split inside H_tt",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.cols.tokens.min_excess"}}},
    {.experiment = "fig6",
     .paper = "The Hessian entries of value are also about 10^6 larger than those of query and key",
     .place = "Sec. 2.3, Fig. 6 (c), class 3",
     .control_what = "the same for key over query (|log10| of key's mean |H_tt entry| over query's): two blocks the "
                     "paper puts in one class; it passes only where key and query differ by 10^5 to 10^7",
     .depends = "as fig6.qk_heads; the ratio falls as training goes on (query/key curvature grows with q.k); make "
                "value-scaling measures how it moves with the checkpoint, lr, context, vocabulary, heads, widths, "
                "data and Hessian batch (docs/tinytransformer_hessian.md)",
     .holm = "fig6.value_magnitude",
     .after_data = "judged on the paper's number (within one decade of 10^6) after the review (issue 26): the first "
                   "versions' 10x, kept as the toolkit's own reading, passed what the paper did not say; the measured "
                   "10^4.2 (seeds 1-5) was known",
     .paper_setting = PAPER_SETTING,
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4, STEP1},
     .reading = {{.id = "fig6.value_about_1e6",
                   .claim = "value's mean |Hessian entry| is within one decade of 10^6 times the larger of query's "
                            "and key's",
                   .stat = "fig6.value.decades_from_paper",
                   .stat_what = "|log10(value's mean |H_tt entry| over the larger of query's and key's) - 6|, decades "
                                "from the paper's 10^6 ('about' = below 1)",
                   .side = CLAIM_BELOW,
                   .threshold = 1,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.control.key_query.decades_from_paper",
                   .paper_value = {.text = "about 10^6 larger: 0 decades from 10^6", .numeric = 1, .lo = 0, .hi = 0}},
                  {.id = "fig6.value_larger",
                   .claim = "(the toolkit's weaker reading) value's Hessian entries are at least 10x larger than "
                            "query's and key's (mean absolute entry)",
                   .stat = "fig6.value.log10_ratio",
                   .stat_what = "log10 of value's mean |H_tt entry| over the larger of query's and key's (1 = ten "
                                "times)",
                   .side = CLAIM_ABOVE,
                   .threshold = 1,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.control.key_query.log10_ratio",
                   .hypothesis = 1,
                   .control_what = "|log10| of key's mean |H_tt entry| over query's: two blocks of one class, whose "
                                   "ratio must not look 'much larger' either way",
                   .paper_value = {.text = "about 10^6 larger (a log10 ratio of 6)", .numeric = 1, .lo = 6, .hi = 6}}}},
    {.experiment = "fig6",
     .paper = "This Hessian structure is significantly different from that of query and key, although they all "
              "consist of four heads",
     .place = "Sec. 2.3, Fig. 6 (c), class 3",
     .control_what = "the same gap between key and query (|key's head excess - query's|): two blocks of one class, "
                     "which the rule must not find significantly different; it passes when they differ by 0.25",
     .depends = "as fig6.qk_heads; 'significantly different' read as: value's off-diagonal excess of the 4-head "
                "split is at least 0.25 (a quarter of the way from random to block-diagonal) below the smaller of "
                "query's and key's",
     .after_data = "added after the review (issue 26) with seeds 1-3's values known (0.48 to 0.65)",
     .paper_setting = PAPER_SETTING,
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4, STEP1},
     .reading = {{.id = "fig6.value_unlike_qk",
                   .claim = "value's head structure lies at least 0.25 of excess below query's and key's",
                   .stat = "fig6.value.qk_minus_value_heads",
                   .stat_what = "the smaller of query's and key's off-diagonal excess of the 4-head split minus "
                                "value's",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.25,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.control.key_query.heads_gap"}}},
    {.experiment = "fig6",
     .paper = "It seems to have the hint of 16 diagonal blocks (16 is the number of output neurons), but the pattern "
              "is less obvious",
     .place = "Sec. 2.3, Fig. 6 (c), class 3",
     .control_what = COLS_CONTROL,
     .depends = "as fig6.qk_heads; 'a hint' read as an off-diagonal excess of value's 16 output-neuron blocks of at "
                "least 0.1 (a tenth of the way from random to block-diagonal); 'less obvious' is not tested",
     .after_data = "added after the review (issue 26) with seeds 1-3's values known (0.36 to 0.48; the control 0.07 "
                   "to 0.09)",
     .paper_setting = PAPER_SETTING,
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4, STEP1},
     .reading = {{.id = "fig6.value_neuron_hint",
                   .claim = "value's Hessian shows its 16 output-neuron blocks at an excess of at least 0.1",
                   .stat = "fig6.value.rows_excess",
                   .stat_what = "off-diagonal excess of value's output-neuron split inside H_tt",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.1,
                   .kind = RULE_INTERVAL,
                   .control = "fig6.value.cols_excess"}}},
};
const claim_file claims_fig6 = CLAIM_FILE(FAMILIES);
