/* Claims on hetero: block heterogeneity of the Transformer's Hessian against the MLP's. */
#include "verdict/claims/claims.h"

static const claim_family FAMILIES[] = {
    {.experiment = "hetero",
     .paper = "these models often exhibit Hessian-block heterogeneity, i.e., the Hessian of different parameter "
              "blocks have dramatically different eigenvalue distributions ... for CNNs, the eigenvalue "
              "distributions are similar among blocks",
     .place = "Sec. 2.1; App. E.2 (Preliminary results in zhang2024transformers, their Fig. 3)",
     .holm = "hetero",
     .alt = {ALT_CKPT_LR_1E2,
             {.choice = "the MLP's input size",
              .name = "mlp_pool2",
              .flags = "--mlp-pool 2",
              .why = "the MLP's input pooling (4x4 here) sets its block sizes; 2x2 is as defensible"}},
     .reading = {{.id = "hetero.tt_vs_mlp",
                   .claim = "the tiny Transformer's Algorithm 3 blocks are more heterogeneous than the MLP's (one "
                            "block per neuron) at initialisation, 1% and the end of training",
                   .stat = "hetero.diff.min",
                   .stat_what = "smallest over the three points of S_tt - S_mlp, S = sd over a model's Algorithm 3 "
                                "blocks of log10 |lambda|max(H_bb), decades (scale-free; blocks without curvature "
                                "beyond round-off left out)",
                   .side = CLAIM_ABOVE,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "hetero.control.diff.min",
                   .control_what = "the same difference with each model's blocks laid on random permutations of the "
                                   "same parameters (same sizes and counts, same H; S averaged over 20 draws): which "
                                   "parameters form a block is lost, so a difference that remains comes from the "
                                   "coordinates and the block sizes, not from block heterogeneity, and the rule must "
                                   "reject it",
                   .depends = "the fig6 Transformer (AdamW lr 1e-3, 1,000 steps, H on 256 held-out sequences) "
                              "against partition_check's MLP (49-8-10 tanh, Fashion-MNIST pooled 4x4, Adam lr 1e-3, "
                              "H on 1,000 test images): 116 blocks of 16-128 against 19 of 8-50, 11 block types "
                              "against 3"},
                  {.id = "hetero.beyond_random",
                   .claim = "the same made fair for block sizes and counts: the Transformer's blocks are more "
                            "heterogeneous than random blocks of the same sizes on its H by more than the MLP's are, "
                            "at all three points",
                   .stat = "hetero.beyond_random.min",
                   .stat_what = "smallest over the three points of log2(S_tt/S_tt,rand) - log2(S_mlp/S_mlp,rand), "
                                "S_rand the mean S of 20 random-permutation partitions with the same block sizes on "
                                "the same H",
                   .side = CLAIM_ABOVE,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "hetero.control.beyond_random.min",
                   .control_what = "the same with one more random-permutation partition in place of Algorithm 3's, "
                                   "for both models: no block structure at all, so the rule must not pass on the "
                                   "estimator's noise or bias (the coordinates and sizes are already divided out by "
                                   "S_rand)",
                   .depends = "as hetero.tt_vs_mlp; added after seeing seed 1 (docs/verdicts.md)",
                   .after_data = "added after seeing seed 1, where the first claim's control passed"}}},
};
const claim_file claims_hetero = CLAIM_FILE(FAMILIES);
