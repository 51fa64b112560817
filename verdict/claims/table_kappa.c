/* Claims on table_kappa: the kappa table of the appendix's Exp 1, one primary reading (the first)
 * and seven others (D recipe x H or G x checkpoint). */
#include "verdict/claims/claims.h"

#define PLACE "App. D.1 (More Results for Motivation), Exp 1, Table 3 (kappa(H) vs kappa(D_Adam H))"
#define DIAGONAL_CONTROL \
    "the same share on each block's diagonal part diag(H_b) (tau = 1, where the paper says D_Adam works), D from " \
    "the same recipe: it can pass (with the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|), and a rule that passed " \
    "both would not be about density"

static const claim_family FAMILIES[] = {
    {.experiment = "table_kappa",
     .paper = "We take some small dense blocks in the Hessian of 1-layer Transformer and denoted as H. We compare "
              "kappa(H) and kappa(D_Adam H) as in the paper. We find Adam is not effective in reducing the kappa of "
              "these blocks, and many lrs in Adam can be redundant",
     .place = PLACE,
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the old "
                     "rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = "the paper's model (V 8, C 16, 4 heads, M 32, T 8, biases), AdamW lr 1e-3 cosine, 1,000 steps of 64 "
                "sequences of the order-2 Markov source; H and G exact on 256 fixed sequences; kappa = "
                "|lambda|max/|lambda|min on the complement of the derived null directions (key heads: 1/g; layer-0 "
                "query heads: w orthogonal to the LayerNorm outputs after position 0) and of eigenvalues |lambda| <= "
                "n eps |lambda|max; measurable when kappa <= 1e12; 'most' = more than half of the measurable blocks",
     .holm = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; the "
                   "diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
                   "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
                   "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
                      "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4},
     .reading = {{.id = "table_kappa.fig4_H_1pct",
                   .claim = "as the table (kappa(D_Adam H) > kappa(H) on all six blocks, by 1.7x to 3.7x): on most "
                            "measurable Algorithm 3 blocks of query, key, value, attn.proj, mlp.fc_1 and mlp.proj, "
                            "kappa(D H_b) > kappa(H_b) on the complement of the block's null space, D by the paper's "
                            "Fig. 4 recipe, at 1% of training",
                   .stat = "table_kappa.share_up.fig4.H.1pct",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D H_b)/kappa(H_b) > 1, D from the paper's Fig. 4 recipe (D = "
                                "diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 draws), at 1% of training "
                                "(step 10 of 1,000; the Fig. 6 caption's \"at 1% training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.fig4.H.1pct"},
                  {.id = "table_kappa.adam_H_1pct",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on H_b, at 1% of "
                            "training",
                   .stat = "table_kappa.share_up.adam.H.1pct",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D H_b)/kappa(H_b) > 1, D = diag(1/(sqrt(v-hat) + eps)) from "
                                "AdamW's own v-hat at the checkpoint, at 1% of training (step 10 of 1,000; the Fig. "
                                "6 caption's \"at 1% training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.adam.H.1pct"},
                  {.id = "table_kappa.fig4_H_step1",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from the paper's Fig. 4 recipe, on "
                            "H_b, after 1 training step",
                   .stat = "table_kappa.share_up.fig4.H.step1",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D H_b)/kappa(H_b) > 1, D from the paper's Fig. 4 recipe (D = "
                                "diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 draws), after 1 training step "
                                "(the text's \"after 1 training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.fig4.H.step1"},
                  {.id = "table_kappa.adam_H_step1",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on H_b, after 1 "
                            "training step",
                   .stat = "table_kappa.share_up.adam.H.step1",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D H_b)/kappa(H_b) > 1, D = diag(1/(sqrt(v-hat) + eps)) from "
                                "AdamW's own v-hat at the checkpoint, after 1 training step (the text's \"after 1 "
                                "training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.adam.H.step1"},
                  {.id = "table_kappa.fig4_G_1pct",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from the paper's Fig. 4 recipe, on "
                            "the Gauss-Newton part G_b, at 1% of training",
                   .stat = "table_kappa.share_up.fig4.G.1pct",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D G_b)/kappa(G_b) > 1, D from the paper's Fig. 4 recipe (D = "
                                "diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 draws), at 1% of training "
                                "(step 10 of 1,000; the Fig. 6 caption's \"at 1% training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.fig4.G.1pct"},
                  {.id = "table_kappa.adam_G_1pct",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on the "
                            "Gauss-Newton part G_b, at 1% of training",
                   .stat = "table_kappa.share_up.adam.G.1pct",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D G_b)/kappa(G_b) > 1, D = diag(1/(sqrt(v-hat) + eps)) from "
                                "AdamW's own v-hat at the checkpoint, at 1% of training (step 10 of 1,000; the Fig. "
                                "6 caption's \"at 1% training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.adam.G.1pct"},
                  {.id = "table_kappa.fig4_G_step1",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from the paper's Fig. 4 recipe, on "
                            "the Gauss-Newton part G_b, after 1 training step",
                   .stat = "table_kappa.share_up.fig4.G.step1",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D G_b)/kappa(G_b) > 1, D from the paper's Fig. 4 recipe (D = "
                                "diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 draws), after 1 training step "
                                "(the text's \"after 1 training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.fig4.G.step1"},
                  {.id = "table_kappa.adam_G_step1",
                   .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on the "
                            "Gauss-Newton part G_b, after 1 training step",
                   .stat = "table_kappa.share_up.adam.G.step1",
                   .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query "
                                "heads, 4 key heads, 16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output "
                                "neurons) with kappa(D G_b)/kappa(G_b) > 1, D = diag(1/(sqrt(v-hat) + eps)) from "
                                "AdamW's own v-hat at the checkpoint, after 1 training step (the text's \"after 1 "
                                "training step\")",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.adam.G.step1"}}},
    {.experiment = "table_kappa",
     .paper = "We take some small dense blocks in the Hessian of 1-layer Transformer and denoted as H. We compare "
              "kappa(H) and kappa(D_Adam H) as in the paper. We find Adam is not effective in reducing the kappa of "
              "these blocks",
     .place = PLACE,
     .control_what = DIAGONAL_CONTROL,
     .depends = "as table_kappa.fig4_H_1pct, in the paper's regime: kappa and kappa(D H_b) on the part of each "
                "block's spectrum within two decades of |lambda|max (eigenvalues |lambda| <= 1e-2 |lambda|max set "
                "aside as null), so kappa <= 100, where the paper's table lies (22-166); ours elsewhere are "
                "1e5-1e10",
     .holm = "table_kappa_regime",
     .after_data = "declared after the review (issue 26) showed the table judged in a regime the paper never was; "
                   "the cut at two decades was chosen knowing the paper's 22-166 and seed 1's median kappa there "
                   "(88)",
     .paper_setting = "the paper's kappa definition (eigenvalues kept, damping, checkpoint) is not given; this "
                      "reading is the toolkit's way into its range, not its method",
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4},
     .reading = {{.id = "table_kappa.regime_fig4_1pct",
                   .claim = "in the paper's regime (spectrum within two decades of |lambda|max), kappa(D H_b) > "
                            "kappa(H_b) on most blocks of the table's six tensors, D by the Fig. 4 recipe, at 1%",
                   .stat = "table_kappa.top.share_up.fig4.H.1pct",
                   .stat_what = "share of the blocks of the six tensors with kappa(D H_b)/kappa(H_b) > 1 on the part "
                                "of H_b's spectrum within two decades of |lambda|max",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.fig4.H.1pct"},
                  {.id = "table_kappa.regime_adam_1pct",
                   .claim = "the same with D from AdamW's v-hat",
                   .stat = "table_kappa.top.share_up.adam.H.1pct",
                   .stat_what = "the same share with D = diag(1/(sqrt(v-hat) + eps))",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "table_kappa.control.share_up.adam.H.1pct"}}},
    {.experiment = "table_kappa",
     .paper = "1st head in Query: kappa(H) 103.80; 1st head in Key 103.46; 1st head in Value 165.66; 1st neuron in "
              "attn.proj 39.92; 1st neuron in MLP_fc1 22.04; 1st neuron in MLP_c_proj 63.85",
     .place = PLACE,
     .depends = "the paper's six blocks at 1% of training (step 10), kappa(H_b) on the complement of the block's "
                "null space (the derived null directions and |lambda| <= n eps |lambda|max); 'the paper's range' "
                "read as: the median of the six within one decade of 22-166 (log10 kappa below 3.22). No control: "
                "a number of the paper's set beside ours",
     .after_data = "added after the review (issue 26) with our numbers known (1e5-1e10)",
     .paper_setting = "the paper's kappa definition and checkpoint are not given",
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4},
     .reading = {{.id = "table_kappa.kappa_magnitude",
                   .claim = "the median kappa(H_b) of the paper's six blocks lies within one decade of the paper's "
                            "22-166",
                   .stat = "table_kappa.log10_median_kappa_paper_blocks.1pct",
                   .stat_what = "log10 of the median over the paper's six blocks (first head of query, key, value; "
                                "first neuron of attn.proj, mlp.fc_1, mlp.proj) of kappa(H_b), deflated",
                   .side = CLAIM_BELOW,
                   .threshold = 3.2201,
                   .kind = RULE_INTERVAL,
                   .paper_value = {.text = "22-166", .numeric = 1, .lo = 1.3424, .hi = 2.2201}}}},
};
const claim_file claims_table_kappa = CLAIM_FILE(FAMILIES);
