/* Claims on mlp_steps (App. C, after Collobert 2004): the MLP block-diagonal after one step, and
 * the softmax factor p(1-p) behind it. */
#include "verdict/claims/claims.h"

#define PLACE_FIG2A \
    "App. C (More Discussions), analysis after Collobert 2004; Fig. 2(a)"
#define PLACE_APP_C \
    "App. C (More Discussions), analysis after Collobert 2004"
#define AFTER_DATA \
    "written after a pilot seed (101, outside the verdict seeds): the 10-class restriction, the squared-twin " \
    "controls and the softmax-factor claim with its ReLU control"
#define SETTING_100 \
    "the paper: CIFAR-100; here a synthetic set in CIFAR's layout (100 classes)"
#define SETTING_10_100 \
    "the paper: CIFAR-100; here a synthetic set in CIFAR's layout"
#define LR1E_3 \
    {.choice = "learning rate", \
     .name = "lr1e-3", \
     .flags = "--lr 1e-3", \
     .why = "the paper's Adam lr 1e-4 is for CIFAR-100's full-size inputs; on the pooled synthetic set 1e-3 trains " \
            "further in the same steps"}

static const claim_family FAMILIES[] = {
    {.experiment = "mlp_steps",
     .paper = "The authors report that this can happen just after 1 training step, as restated in Figure 2 (a)",
     .place = PLACE_FIG2A,
     .control_what = "the same excess at step 1 with fc1 split by its input neurons (columns): the competing "
                     "grouping of a linear layer's weights, which can pass (test_hessian makes one); the permutation "
                     "null (0 by construction) stays in stats.csv as a calibration row",
     .depends = "fig2's MLP (8 tanh neurons, Adam lr 1e-4 cosine, batch 128) on synthetic 3x32x32 images with 100 "
                "classes pooled 4x4 (CIFAR-100's layout; the real set is absent), H on 500 test images; threshold "
                "0.5 as fig2",
     .holm = "mlp_steps.early",
     .paper_setting = SETTING_100,
     .alt = {LR1E_3, ALT_RELU},
     .reading = {{.id = "mlp_steps.one_step_blocks",
                   .claim = "after 1 training step the hidden layer's Hessian is block-diagonal by hidden neuron "
                            "(100 classes)",
                   .stat = "mlp_steps.c100.step1.hidden_excess",
                   .stat_what = "off-diagonal excess e of the 8 hidden-neuron blocks inside fc1-fc1 at step 1, "
                                "cross-entropy, 100 classes (0: random blocks of the same sizes, 1: block-diagonal; "
                                "diagonal left out)",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "mlp_steps.cols.c100.step1.hidden_excess",
                   .after_data = "the control (a random permutation, 0 by construction) was replaced by the split by "
                                 "input neurons after the review (issue 26), its seed-1 value known (0.002)"}}},
    {.experiment = "mlp_steps",
     .paper = "the term p(x)(1 - p(x)) will quickly shrink to zero. This term will push the Hessian to "
              "near-block-diagonal structure ... this can happen just after 1 training step",
     .place = PLACE_FIG2A,
     .control_what = "the same margin of the blocks laid on a random permutation at steps 0 and 10: no structure "
                     "ever appears there, so the rule must reject it",
     .depends = "as mlp_steps.one_step_blocks; 'the first steps' = 10 (checkpoints 1, 2, 5, 10); at lr 1e-4 ten Adam "
                "steps move each weight by at most about 1e-3",
     .paper_setting = SETTING_100,
     .alt = {LR1E_3, ALT_RELU},
     .reading = {{.id = "mlp_steps.appears_first_steps",
                   .claim = "(the toolkit's hypothesis, not the paper's: the paper never says the structure is absent "
                            "at initialisation, its Fig. 2(b) shows it there) the block-diagonal structure appears "
                            "within the first 10 steps: absent at initialisation (e < 0.5), present at step 10 "
                            "(e >= 0.5) (100 classes)",
                   .hypothesis = 1,
                   .stat = "mlp_steps.c100.appear_margin",
                   .stat_what = "min(e_10 - 0.5, 0.5 - e_0), e the hidden-neuron blocks' excess at steps 10 and 0 "
                                "(cross-entropy, 100 classes): > 0 iff e_0 < 0.5 <= e_10",
                   .side = CLAIM_ABOVE,
                   .threshold = 0,
                   .kind = RULE_INTERVAL,
                   .control = "mlp_steps.control.c100.appear_margin"}}},
    {.experiment = "mlp_steps",
     .paper = "Since the training objective is to maximize p(x), the term p(x)(1 - p(x)) will quickly shrink to zero",
     .place = PLACE_APP_C,
     .control_what = "the same ratio for the squared-loss twin (same initialisation and batches): its outputs are "
                     "fitted to one-hot targets, so their softmax cannot saturate (p_y <= e/(e + 99)) and p(1-p) "
                     "cannot halve; a rule that passed it would not be measuring saturation",
     .depends = "as mlp_steps.one_step_blocks; the data's difficulty (per-pixel noise 1.5, the toolkit's synthetic "
                "set's) and the width (8 neurons for 100 classes) set how far p can saturate",
     .holm = "mlp_steps.softmax",
     .after_data = AFTER_DATA,
     .paper_setting = SETTING_10_100,
     .alt = {LR1E_3},
     .reading = {{.id = "mlp_steps.pq_shrinks",
                   .claim = "the softmax factor p(1-p) at least halves over the paper's 7,900 training steps (100 "
                            "classes)",
                   .stat = "mlp_steps.c100.pq_ratio",
                   .stat_what = "mean over the evaluation batch and the classes of p_c(1 - p_c) (= tr(diag p - "
                                "pp^T)/C, p the softmax of the outputs) at step 7,900 over its value at step 0, "
                                "cross-entropy, 100 classes",
                   .side = CLAIM_BELOW,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "mlp_steps.control.c100.squared.pq_ratio"}}},
    {.experiment = "mlp_steps",
     .paper = "the off-diagonal-block Hessian elements would contain p(x)(1 - p(x)) ... will quickly shrink to zero. "
              "This term will push the Hessian to near-block-diagonal structure",
     .place = PLACE_APP_C,
     .control_what = "the squared-loss twin's off-block mass 1 - e (same initialisation, batches and checkpoints; "
                     "its Hessian has no p(1-p): the output Hessian is the identity) against the same p(1-p) series: "
                     "if it falls along too, the rule is reading training progress, not the softmax factor",
     .depends = "as mlp_steps.one_step_blocks with 10 classes; p(1-p) as the mean over classes (the true class's "
                "p_y(1 - p_y) rises while p_y < 1/2 and is reported, not judged); at 100 classes p(1-p) hardly moves "
                "(mlp_steps.pq_shrinks), so the correlation there is reported only",
     .holm = "mlp_steps.softmax",
     .after_data = AFTER_DATA,
     .paper_setting = SETTING_10_100,
     .alt = {LR1E_3},
     .reading = {{.id = "mlp_steps.offblock_falls_with_pq",
                   .claim = "the hidden neurons' off-block Hessian mass falls with p(1-p) over training (10 classes, "
                            "where p saturates)",
                   .stat = "mlp_steps.c10.rho_offblock_pq",
                   .stat_what = "Spearman rho over the 14 checkpoints (steps 0, 1, 2, 5, ..., 5000, 7900) between "
                                "the off-block mass 1 - e of the hidden-neuron blocks (over its mean for random "
                                "blocks) and p(1-p), cross-entropy, 10 classes",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_INTERVAL,
                   .control = "mlp_steps.control.c10.squared.rho_offblock_pq"}}},
    {.experiment = "mlp_steps",
     .paper = "the off-diagonal-block Hessian elements would contain p(x)(1 - p(x)) ... This term will push the "
              "Hessian to near-block-diagonal structure where each block corresponds to one output neuron",
     .place = PLACE_APP_C,
     .control_what = "the same difference with ReLU at the same weights: sigma'' = 0, so fc1-fc1 of H is all "
                     "Gauss-Newton and every entry, in a block or not, carries the softmax factor; its size cannot "
                     "favour the blocks, and a rule that passed ReLU would be crediting something other than the "
                     "factor",
     .depends = "as mlp_steps.one_step_blocks; tanh (the paper does not name its activation); at initialisation p is "
                "near uniform, so the factor is ~1/C, small because p is spread, not because it saturates",
     .holm = "mlp_steps.softmax",
     .after_data = AFTER_DATA,
     .paper_setting = SETTING_10_100,
     .paper_scale = "seeds 1-3, before the seed streams were hashed: INCONCLUSIVE at paper scale against PASS at "
                    "quick scale",
     .alt = {LR1E_3},
     .reading = {{.id = "mlp_steps.softmax_factor",
                   .claim = "at the same weights, the softmax factor makes the hidden layer's H more block-diagonal "
                            "than the squared loss's (no factor) by at least 0.1 in e (100 classes, at "
                            "initialisation)",
                   .stat = "mlp_steps.c100.softmax_factor_excess",
                   .stat_what = "e(cross-entropy) - e(squared loss) of the hidden-neuron blocks at step 0 (identical "
                                "weights and evaluation batch), tanh, 100 classes; 0.1 = a tenth of random blocks' "
                                "off-block mass",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.1,
                   .kind = RULE_INTERVAL,
                   .control = "mlp_steps.control.c100.relu.softmax_factor_excess"}}},
};
const claim_file claims_mlp_steps = CLAIM_FILE(FAMILIES);
