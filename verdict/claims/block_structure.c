/* Claims on block_structure: the Transformer's output-neuron blocks over the first 100 steps
 * (corrected with fig6's neuron blocks, Holm family fig6.neurons). */
#include "verdict/claims/claims.h"

static const claim_family FAMILIES[] = {
    {.experiment = "block_structure",
     .paper = "The Hessian of attn.proj and MLPs have block-diagonal structures. The number of blocks equals the "
              "number of output neurons",
     .place = "Sec. 2.3, Fig. 6 (d-f), class 2 (at 1% of training; the text: after 1 step)",
     .control_what = "the same max over steps of the min over the three on each H_tt randomly permuted: it carries "
                     "the same selection over 8 steps, so the rule must not pass it by the selection alone",
     .depends = "the fig6 setup; the steps looked at (8 of the first 100 of 1,000)",
     .holm = "fig6.neurons",
     .paper_setting = "the paper does not give the training lr to its checkpoint",
     .alt = {ALT_CKPT_LR_1E2, ALT_CKPT_LR_3E4},
     .reading = {{.id = "block_structure.neurons_together",
                   .claim = "attn.proj, mlp.fc_1 and mlp.proj are block-diagonal by output neurons together at some "
                            "step in 0-100",
                   .stat = "block_structure.neurons_together.max_min_excess",
                   .stat_what = "largest over steps 0, 1, 2, 5, 10, 20, 50, 100 of the smallest of the three "
                                "tensors' off-diagonal excess of the output-neuron split",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "block_structure.control.neurons_together.max_min_excess"}}},
};
const claim_file claims_block_structure = CLAIM_FILE(FAMILIES);
