/* The table of claims, judged over seeds by tools/verdicts (verdict.h). */
#include "verdict.h"
#include <string.h>

/* ---- the claims ------------------------------------------------------------------------------
 * One table, fixed before the runs: each claim's statistic, threshold, side,
 * kind of test and negative control. Every change after seeing data is listed
 * in docs/verdicts.md with its reason. Sections follow the README's order. */
static const claim_rule RULES[] = {
    /* ---- random quadratics (fig4, fig3) ---- */
    {.id = "fig4.falls_a_median",
     .experiment = "fig4",
     .paper = "for H_b with most dimension d and kappa(H_b), r decreases as tau -> 1. That is, D_Adam is effective "
              "when H_b is close to diagonal, and D_Adam is not so effective when H_b is dense",
     .place = "Sec. 2.1, Fig. 4",
     .claim = "for more than half of the curves r falls as tau -> 1 over the whole R range (kappa by eigenvalues of "
              "D^1/2 H D^1/2, median r)",
     .stat = "fig4.share_falling.a_median",
     .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho between the "
                  "mean tau and the median of r (kappa by the eigenvalues of D^1/2 H D^1/2) over all 51 R is <= -0.5",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "fig4.control.share_falling.a_median",
     .control_what = "the same share with D = diag(1/|z|), z ~ N(0, I) drawn independently of H (seeded): a "
                     "diagonal scaling that knows nothing of H, the natural null for 'D_Adam, made from g = Hx, "
                     "helps as tau -> 1'. It can pass: kappa(DH) grows as H gets dense for any D when kappa(H) is "
                     "large (seed 1: 9 of 11 curves fall with it too), which is what the rule must tell apart "
                     "from D_Adam",
     .depends = "8 theta x 20 x x 51 R per curve at quick scale (40 x 100 x 51 at paper scale); the 11 (d, kappa) "
                "curves, the "
                "(50, 500) one counted in both panels; rho threshold -0.5; the whole R range k/50 (tau is not "
                "monotone in R: R = 0..R* alone was the first version's rule, kept as a reference in stats.csv)",
     .family = "fig4",
     .after_data = "the R range was widened from R <= R* to every R knowing the first version's seed-1 rho over "
        "all R; the four readings became claims after the reviewers reported them; the control (D "
        "from a random z, knowing nothing of H) replaced the tau-shuffle control, which was 0 on "
        "every seed by construction, after a review",
     .alt = {{.choice = "R range",
              .name = "rstar",
              .stat = "fig4.share_falling_rstar.a_median",
              .control = "fig4.control.share_falling_rstar.a_median",
              .why = "'r decreases as tau -> 1' can be read on the branch where tau returns to 1, R <= R* (tau "
                     "falls from 1 to its minimum as R grows), instead of over every R: tau is not monotone in R"},
             {.choice = "draws per matrix",
              .name = "paper_counts",
              .flags = "--thetas 40 --points 100",
              .why = "the paper's own counts: 40 angle draws and 100 points x per matrix (quick scale: 8 and 20)"}}},
    {.id = "fig4.falls_b_median",
     .experiment = "fig4",
     .paper = "for H_b with most dimension d and kappa(H_b), r decreases as tau -> 1. That is, D_Adam is effective "
              "when H_b is close to diagonal, and D_Adam is not so effective when H_b is dense",
     .place = "Sec. 2.1, Fig. 4",
     .claim = "robustness of fig4.falls_a_median: the same with kappa by the singular values of DH",
     .stat = "fig4.share_falling.b_median",
     .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho between the "
                  "mean tau and the median of r (kappa by the singular values of DH) over all 51 R is <= -0.5",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "fig4.control.share_falling.b_median",
     .control_what = "the same share with D = diag(1/|z|), z ~ N(0, I) drawn independently of H (seeded): a "
                     "diagonal scaling that knows nothing of H, the natural null for 'D_Adam, made from g = Hx, "
                     "helps as tau -> 1'. It can pass: kappa(DH) grows as H gets dense for any D when kappa(H) is "
                     "large (seed 1: 9 of 11 curves fall with it too), which is what the rule must tell apart "
                     "from D_Adam",
     .depends = "8 theta x 20 x x 51 R per curve at quick scale (40 x 100 x 51 at paper scale); the 11 (d, kappa) "
                "curves, the "
                "(50, 500) one counted in both panels; rho threshold -0.5; the whole R range k/50 (tau is not "
                "monotone in R: R = 0..R* alone was the first version's rule, kept as a reference in stats.csv)",
     .family = "fig4",
     .after_data = "the R range was widened from R <= R* to every R knowing the first version's seed-1 rho over "
        "all R; the four readings became claims after the reviewers reported them; the control (D "
        "from a random z, knowing nothing of H) replaced the tau-shuffle control, which was 0 on "
        "every seed by construction, after a review",
     .alt = {{.choice = "R range",
              .name = "rstar",
              .stat = "fig4.share_falling_rstar.b_median",
              .control = "fig4.control.share_falling_rstar.b_median",
              .why = "'r decreases as tau -> 1' can be read on the branch where tau returns to 1, R <= R* (tau "
                     "falls from 1 to its minimum as R grows), instead of over every R: tau is not monotone in R"},
             {.choice = "draws per matrix",
              .name = "paper_counts",
              .flags = "--thetas 40 --points 100",
              .why = "the paper's own counts: 40 angle draws and 100 points x per matrix (quick scale: 8 and 20)"}}},
    {.id = "fig4.falls_a_mean",
     .experiment = "fig4",
     .paper = "for H_b with most dimension d and kappa(H_b), r decreases as tau -> 1. That is, D_Adam is effective "
              "when H_b is close to diagonal, and D_Adam is not so effective when H_b is dense",
     .place = "Sec. 2.1, Fig. 4",
     .claim = "robustness of fig4.falls_a_median: the same with the mean of r per R (the paper's averaging)",
     .stat = "fig4.share_falling.a_mean",
     .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho between the "
                  "mean tau and the mean of r (kappa by the eigenvalues of D^1/2 H D^1/2) over all 51 R is <= -0.5",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "fig4.control.share_falling.a_mean",
     .control_what = "the same share with D = diag(1/|z|), z ~ N(0, I) drawn independently of H (seeded): a "
                     "diagonal scaling that knows nothing of H, the natural null for 'D_Adam, made from g = Hx, "
                     "helps as tau -> 1'. It can pass: kappa(DH) grows as H gets dense for any D when kappa(H) is "
                     "large (seed 1: 9 of 11 curves fall with it too), which is what the rule must tell apart "
                     "from D_Adam",
     .depends = "8 theta x 20 x x 51 R per curve at quick scale (40 x 100 x 51 at paper scale); the 11 (d, kappa) "
                "curves, the "
                "(50, 500) one counted in both panels; rho threshold -0.5; the whole R range k/50 (tau is not "
                "monotone in R: R = 0..R* alone was the first version's rule, kept as a reference in stats.csv)",
     .family = "fig4",
     .after_data = "the R range was widened from R <= R* to every R knowing the first version's seed-1 rho over "
        "all R; the four readings became claims after the reviewers reported them; the control (D "
        "from a random z, knowing nothing of H) replaced the tau-shuffle control, which was 0 on "
        "every seed by construction, after a review",
     .alt = {{.choice = "R range",
              .name = "rstar",
              .stat = "fig4.share_falling_rstar.a_mean",
              .control = "fig4.control.share_falling_rstar.a_mean",
              .why = "'r decreases as tau -> 1' can be read on the branch where tau returns to 1, R <= R* (tau "
                     "falls from 1 to its minimum as R grows), instead of over every R: tau is not monotone in R"},
             {.choice = "draws per matrix",
              .name = "paper_counts",
              .flags = "--thetas 40 --points 100",
              .why = "the paper's own counts: 40 angle draws and 100 points x per matrix (quick scale: 8 and 20)"}}},
    {.id = "fig4.falls_b_mean",
     .experiment = "fig4",
     .paper = "for H_b with most dimension d and kappa(H_b), r decreases as tau -> 1. That is, D_Adam is effective "
              "when H_b is close to diagonal, and D_Adam is not so effective when H_b is dense",
     .place = "Sec. 2.1, Fig. 4",
     .claim = "robustness of fig4.falls_a_median: singular values of DH and the mean of r per R",
     .stat = "fig4.share_falling.b_mean",
     .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho between the "
                  "mean tau and the mean of r (kappa by the singular values of DH) over all 51 R is <= -0.5",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "fig4.control.share_falling.b_mean",
     .control_what = "the same share with D = diag(1/|z|), z ~ N(0, I) drawn independently of H (seeded): a "
                     "diagonal scaling that knows nothing of H, the natural null for 'D_Adam, made from g = Hx, "
                     "helps as tau -> 1'. It can pass: kappa(DH) grows as H gets dense for any D when kappa(H) is "
                     "large (seed 1: 9 of 11 curves fall with it too), which is what the rule must tell apart "
                     "from D_Adam",
     .depends = "8 theta x 20 x x 51 R per curve at quick scale (40 x 100 x 51 at paper scale); the 11 (d, kappa) "
                "curves, the "
                "(50, 500) one counted in both panels; rho threshold -0.5; the whole R range k/50 (tau is not "
                "monotone in R: R = 0..R* alone was the first version's rule, kept as a reference in stats.csv)",
     .family = "fig4",
     .after_data = "the R range was widened from R <= R* to every R knowing the first version's seed-1 rho over "
        "all R; the four readings became claims after the reviewers reported them; the control (D "
        "from a random z, knowing nothing of H) replaced the tau-shuffle control, which was 0 on "
        "every seed by construction, after a review",
     .alt = {{.choice = "R range",
              .name = "rstar",
              .stat = "fig4.share_falling_rstar.b_mean",
              .control = "fig4.control.share_falling_rstar.b_mean",
              .why = "'r decreases as tau -> 1' can be read on the branch where tau returns to 1, R <= R* (tau "
                     "falls from 1 to its minimum as R grows), instead of over every R: tau is not monotone in R"},
             {.choice = "draws per matrix",
              .name = "paper_counts",
              .flags = "--thetas 40 --points 100",
              .why = "the paper's own counts: 40 angle draws and 100 points x per matrix (quick scale: 8 and 20)"}}},
    {.id = "fig3.adam_beats_gd",
     .experiment = "fig3",
     .paper = "Adam outperforms the optimal single-learning-rate method",
     .place = "Sec. 2.1, finding (1), Fig. 3(a-b)",
     .claim = "Adam (best lr) reaches lower loss than GD at 2/(L+mu) on the three-block H, on average over the run",
     .stat = "fig3.gap.adam_gd.full",
     .stat_what = "mean over the run of log10(max(f_t/f_0, 1e-300)) of Adam minus that of GD on H, decades (negative: "
                  "Adam lower)",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_SIGN,
     .control = "fig3.control.gap.adam_gd.homogeneous",
     .control_what = "the same gap on a homogeneous H whose three blocks all draw eigenvalues from {1,2,3}: no block "
                     "needs "
                     "its own learning rate, one step 2/(L+mu) is near-optimal (kappa 3), so Adam must not beat it and "
                     "the rule must reject it",
     .depends = "1000 steps from w0 ~ N(0, I); blocks of 30 with eigenvalues from {1,2,3}, {99,100,101}, "
                "{4998,4999,5000}; Adam beta1 = 0, beta2 -> 1, eps 1e-8, lr the best mean log10 loss of a grid from 17 "
                "points in [1e-4, 1] that extends at its edges; the floor 1e-300 f(w0) sets the size of a gap once a "
                "run underflows, not its sign",
     .after_data = "the mean-log-loss gap and the sign test were chosen after a prototype run of seeds 1-5 that "
        "printed the gaps",
     .alt = {{.choice = "horizon",
              .name = "steps300",
              .flags = "--steps 300",
              .why = "the paper's Fig. 3 shows whole curves without a point of comparison; over 300 steps the "
                     "early phase weighs more"},
             {.choice = "horizon",
              .name = "steps3000",
              .flags = "--steps 3000",
              .why = "the same open choice, longer: over 3,000 steps the underflowing blocks weigh more"},
             {.choice = "Adam's lr grid",
              .name = "grid9",
              .flags = "--lr-points 9",
              .why = "the paper grid-searches Adam's lr without giving the grid; a first grid of 9 points instead "
                     "of 17"}}},
    {.id = "fig3.gd_beats_adam_h1",
     .experiment = "fig3",
     .paper = "We consider the optimal single learning-rate method for this new problem and find it outperforms Adam",
     .place = "Sec. 2.1, finding (2), Fig. 3(c-d)",
     .claim = "GD at 2/(L+mu) of the dense block H1 reaches lower loss than Adam (best lr) on H1 alone, on average "
              "over the run",
     .stat = "fig3.gap.gd_adam.h1",
     .stat_what = "mean over the run of log10(max(f_t/f_0, 1e-300)) of GD minus that of Adam on H1, decades (negative: "
                  "GD lower)",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_SIGN,
     .control = "fig3.control.gap.gd_adam.diag_spread",
     .control_what = "the same gap on a diagonal 30x30 block with ten eigenvalues from each of the three sets (kappa ~ "
                     "5000): "
                     "Adam's per-coordinate steps undo the spread that limits one step, so one step must not beat Adam "
                     "and the rule must reject it (a diagonal H1 with kappa 3 is no control: one step wins there too)",
     .depends = "1000 steps from w0 ~ N(0, I); blocks of 30 with eigenvalues from {1,2,3}, {99,100,101}, "
                "{4998,4999,5000}; Adam beta1 = 0, beta2 -> 1, eps 1e-8, lr the best mean log10 loss of a grid from 17 "
                "points in [1e-4, 1] that extends at its edges; the floor 1e-300 f(w0) sets the size of a gap once a "
                "run underflows, not its sign",
     .after_data = "the mean-log-loss gap and the sign test were chosen after a prototype run of seeds 1-5 that "
        "printed the gaps; the control was changed after the prototype (the diagonal H1 could not be "
        "a negative control)",
     .alt = {{.choice = "horizon",
              .name = "steps300",
              .flags = "--steps 300",
              .why = "the paper's Fig. 3 shows whole curves without a point of comparison; over 300 steps the "
                     "early phase weighs more"},
             {.choice = "horizon",
              .name = "steps3000",
              .flags = "--steps 3000",
              .why = "the same open choice, longer: over 3,000 steps the underflowing blocks weigh more"},
             {.choice = "Adam's lr grid",
              .name = "grid9",
              .flags = "--lr-points 9",
              .why = "the paper grid-searches Adam's lr without giving the grid; a first grid of 9 points instead "
                     "of 17"}}},
    {.id = "fig3.blockgd_beats_adam",
     .experiment = "fig3",
     .paper = "If we collect these optimal learning rates in (2) and apply them to a blockwise version of GD, it would "
              "be faster than Adam on the original problem",
     .place = "Sec. 2.1, finding (3), Fig. 3(b)",
     .claim = "blockwise GD with 2/(L_l+mu_l) on H's three blocks reaches lower loss than Adam (best lr) on H, on "
              "average over the run",
     .stat = "fig3.gap.blockgd_adam.full",
     .stat_what = "mean over the run of log10(max(f_t/f_0, 1e-300)) of blockwise GD minus that of Adam on H, decades "
                  "(negative: blockwise GD lower)",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_SIGN,
     .control = "fig3.control.gap.blockgd_random_adam.full",
     .control_what = "the same gap for blockwise GD on a random partition of the 90 coordinates into three blocks of "
                     "30, each "
                     "at 2/(L+mu) of its principal submatrix: every such block mixes all three scales, so its step is "
                     "limited like GD's and the rule must reject it",
     .depends = "1000 steps from w0 ~ N(0, I); blocks of 30 with eigenvalues from {1,2,3}, {99,100,101}, "
                "{4998,4999,5000}; Adam beta1 = 0, beta2 -> 1, eps 1e-8, lr the best mean log10 loss of a grid from 17 "
                "points in [1e-4, 1] that extends at its edges; the floor 1e-300 f(w0) sets the size of a gap once a "
                "run underflows, not its sign",
     .after_data = "the mean-log-loss gap and the sign test were chosen after a prototype run of seeds 1-5 that "
        "printed the gaps",
     .alt = {{.choice = "horizon",
              .name = "steps300",
              .flags = "--steps 300",
              .why = "the paper's Fig. 3 shows whole curves without a point of comparison; over 300 steps the "
                     "early phase weighs more"},
             {.choice = "horizon",
              .name = "steps3000",
              .flags = "--steps 3000",
              .why = "the same open choice, longer: over 3,000 steps the underflowing blocks weigh more"},
             {.choice = "Adam's lr grid",
              .name = "grid9",
              .flags = "--lr-points 9",
              .why = "the paper grid-searches Adam's lr without giving the grid; a first grid of 9 points instead "
                     "of 17"}}},

    /* ---- the MLP's Hessian (fig2) ---- */
    {.id = "fig2.neuron_blocks",
     .experiment = "fig2",
     .paper = "The near-block-diagonal structure maintains throughout training, where each block corresponds to one "
              "neuron",
     .place = "Sec. 2.1, Fig. 2 (b-d)",
     .claim = "the hidden layer's Hessian is block-diagonal by hidden neuron at initialisation, 50% and 100% of training",
     .stat = "fig2.hidden.min_excess",
     .stat_what = "smallest over the three checkpoints of the off-diagonal excess of the hidden-neuron blocks inside the "
                  "fc1-fc1 part of H (0: random blocks of the same sizes, 1: block-diagonal; diagonal left out)",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "fig2.control.hidden.min_excess",
     .control_what = "the same blocks laid on a random permutation of the fc1 parameters (the same H, its index order "
                     "scrambled): every entry and the diagonal are kept, only the neuron structure is lost, so a rule "
                     "that passed it would be passing H's magnitudes, not its blocks",
     .depends = "Fashion-MNIST pooled 2x2 (the paper: CIFAR-100), tanh, Adam lr 1e-4 cosine, 20 epochs, H on 1,000 "
                "test images; threshold 0.5 = the blocks lose at most half of what random blocks lose",
     .family = "fig2",
     .after_data = "the off-diagonal excess replaced the mass-ratio rule with the seed-1 values known",
     .paper_setting = "the paper: CIFAR-100 (not available offline); here Fashion-MNIST pooled 2x2, the same MLP, "
        "optimizer and schedule",
     .alt = {{.choice = "activation",
              .name = "relu",
              .flags = "--act relu",
              .why = "the paper does not name the MLP's activation (tanh here)"},
             {.choice = "input size",
              .name = "pool4",
              .flags = "--pool 4",
              .why = "the paper's CIFAR-100 inputs are not available; the input size sets the balance of fc1 and "
                     "fc2 in H, and 4x4 pooling is as defensible as 2x2"}}},
    {.id = "fig2.whole_blocks",
     .experiment = "fig2",
     .paper = "The near-block-diagonal structure maintains throughout training, where each block corresponds to one "
              "neuron",
     .place = "Sec. 2.1, Fig. 2 (b-d)",
     .claim = "the whole Hessian (hidden and output neurons, output bias) is block-diagonal by neuron at every checkpoint",
     .stat = "fig2.whole.min_excess",
     .stat_what = "smallest over the three checkpoints of the off-diagonal excess over all of H of the blocks: one per "
                  "hidden neuron, one per output neuron, the output bias",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "fig2.control.whole.min_excess",
     .control_what = "the same blocks laid on a random permutation of all parameters: the same entries without the "
                     "neuron order, which the rule must reject",
     .depends = "as fig2.neuron_blocks; at initialisation the fc1-fc2 cross terms scale with the small initial W2, so "
                "the input size (the pooling) matters",
     .family = "fig2",
     .after_data = "the off-diagonal excess replaced the mass-ratio rule with the seed-1 values known",
     .paper_setting = "the paper: CIFAR-100 (not available offline); here Fashion-MNIST pooled 2x2, the same MLP, "
        "optimizer and schedule",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: INCONCLUSIVE 0.575 [0.453, 0.698] at paper "
        "scale (full-size inputs) against FAIL at quick scale",
     .alt = {{.choice = "activation",
              .name = "relu",
              .flags = "--act relu",
              .why = "the paper does not name the MLP's activation (tanh here)"},
             {.choice = "input size",
              .name = "pool4",
              .flags = "--pool 4",
              .why = "the paper's CIFAR-100 inputs are not available; the input size sets the balance of fc1 and "
                     "fc2 in H, and 4x4 pooling is as defensible as 2x2"}}},

    /* ---- the Transformer's Hessian blocks (fig6, table_kappa, partition_check) ---- */
    {.id = "fig6.qk_heads",
     .experiment = "fig6",
     .paper = "The Hessian of query and key have near-block-diagonal structures. The number of blocks equals the "
              "number of heads",
     .place = "Sec. 2.3, Fig. 6 (a-b), class 1",
     .claim = "query's and key's Hessian blocks are block-diagonal by heads at 1% of training",
     .stat = "fig6.qk_heads.min_excess",
     .stat_what = "smaller of query's and key's off-diagonal excess of the 4-head split inside H_tt (0: random, 1: "
                  "block-diagonal)",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "fig6.control.qk_heads.min_excess",
     .control_what = "the same on H_tt with its rows and columns randomly permuted: the same entries without the head "
                     "order, which the rule must reject",
     .depends = "the tiny Transformer (V 8, C 16, 4 heads), order-2 Markov data, AdamW lr 1e-3, H at step 10 of 1,000 "
                "on 256 held-out sequences",
     .after_data = "the off-diagonal excess replaced the old rule with the seed-1 values known",
     .paper_setting = "the paper does not give the training lr to its checkpoint (here AdamW 1e-3, cosine)",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"},
             {.choice = "checkpoint",
              .name = "step1",
              .flags = "--checkpoint 0.001",
              .why = "the Fig. 6 caption says 'at 1% training step', the Exp 1 text 'after 1 training step': step "
                     "1 of 1,000 instead of step 10"}}},
    {.id = "fig6.neuron_blocks",
     .experiment = "fig6",
     .paper = "The Hessian of attn.proj and MLPs have block-diagonal structures. The number of blocks equals the "
              "number of output neurons",
     .place = "Sec. 2.3, Fig. 6 (d-f), class 2",
     .claim = "attn.proj, mlp.fc_1 and mlp.proj are block-diagonal by output neurons at 1% of training",
     .stat = "fig6.neurons.min_excess",
     .stat_what = "smallest of the three tensors' off-diagonal excess of the output-neuron split inside H_tt",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "fig6.control.neurons.min_excess",
     .control_what = "the same on each H_tt randomly permuted (rows and columns): the rule must reject the same "
                     "entries without the neuron order",
     .depends = "as fig6.qk_heads; the structure moves during training (block_structure follows it over steps 0-100)",
     .family = "fig6.neurons",
     .after_data = "the off-diagonal excess replaced the old rule with the seed-1 values known",
     .paper_setting = "the paper does not give the training lr to its checkpoint (here AdamW 1e-3, cosine)",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"},
             {.choice = "checkpoint",
              .name = "step1",
              .flags = "--checkpoint 0.001",
              .why = "the Fig. 6 caption says 'at 1% training step', the Exp 1 text 'after 1 training step': step "
                     "1 of 1,000 instead of step 10"}}},
    {.id = "fig6.token_blocks",
     .experiment = "fig6",
     .paper = "For these two layers, the Hessian sub-block has a near-block-diagonal structure and the number of "
              "blocks equals the number of tokens",
     .place = "Sec. 2.3, Fig. 6 (g-h), class 4",
     .claim = "embed's and output's Hessian blocks are block-diagonal by tokens at 1% of training",
     .stat = "fig6.tokens.min_excess",
     .stat_what = "smaller of embed's and output's off-diagonal excess of the 8-token split inside H_tt",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "fig6.control.tokens.min_excess",
     .control_what = "the same on each H_tt randomly permuted: embed's H_tt keeps most of its mass on the diagonal, "
                     "which a permutation keeps, so this is the case where the old mass ratio (diagonal included) "
                     "passes the permuted H and the excess must not",
     .depends = "as fig6.qk_heads",
     .after_data = "the off-diagonal excess replaced the old rule with the seed-1 values known",
     .paper_setting = "the paper does not give the training lr to its checkpoint (here AdamW 1e-3, cosine)",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"},
             {.choice = "checkpoint",
              .name = "step1",
              .flags = "--checkpoint 0.001",
              .why = "the Fig. 6 caption says 'at 1% training step', the Exp 1 text 'after 1 training step': step "
                     "1 of 1,000 instead of step 10"}}},
    {.id = "fig6.value_larger",
     .experiment = "fig6",
     .paper = "The Hessian entries of value are also about 10^6 larger than those of query and key",
     .place = "Sec. 2.3, Fig. 6 (c), class 3",
     .claim = "value's Hessian entries are at least 10x larger than query's and key's (mean absolute entry)",
     .stat = "fig6.value.log10_ratio",
     .stat_what = "log10 of value's mean |H_tt entry| over the larger of query's and key's (1 = ten times, 'much "
                  "larger' = at least one decade)",
     .side = CLAIM_ABOVE,
     .threshold = 1.0,
     .kind = RULE_INTERVAL,
     .control = "fig6.control.key_query.log10_ratio",
     .control_what = "|log10| of key's mean |H_tt entry| over query's: two blocks the paper puts in one class, whose "
                     "ratio must not look 'much larger' either way",
     .depends = "as fig6.qk_heads; the ratio falls as training goes on (query/key curvature grows with q.k)",
     .after_data = "the threshold 10x is the first version's; the magnitude the paper states is not reproduced, "
        "which the table says beside the verdict",
     .paper_setting = "the paper does not give the training lr to its checkpoint (here AdamW 1e-3, cosine)",
     .paper_value = "'about 10^6 larger' (a log10 ratio of 6); the rule asks for at least 10x (1)",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"},
             {.choice = "checkpoint",
              .name = "step1",
              .flags = "--checkpoint 0.001",
              .why = "the Fig. 6 caption says 'at 1% training step', the Exp 1 text 'after 1 training step': step "
                     "1 of 1,000 instead of step 10"}}},

    {.id = "partition_check.tt_alg3",
     .experiment = "partition_check",
     .paper = "By Principle 1, query and key should be further partitioned by heads; value, attn.proj, and MLPs "
              "should be partitioned by output neurons; embed and output should be partitioned by tokens",
     .place = "Sec. 2.3, Principle 1 and Algorithm 3",
     .claim = "Principle 1 read from H (splits refined while a finer one holds, excess >= 0.5, inside the current "
              "blocks) gives Algorithm 3's split for the Transformer's tensors it splits",
     .stat = "partition_check.tt.alg3_agree",
     .stat_what = "share of the 8 tensors Algorithm 3 splits (embed, query, key, value, attn.proj, mlp.fc_1, mlp.proj, "
                  "output) where the criterion picks Algorithm 3's split (0.8 = at least 7 of 8)",
     .side = CLAIM_ABOVE,
     .threshold = 0.8,
     .kind = RULE_SHARE,
     .control = "partition_check.control.tt.columns_agree",
     .control_what = "the share of the same 8 tensors where the criterion picks the split by input columns: a "
        "structured split that Principle 1 does not predict; it passes if H is block-diagonal by "
        "columns, so a rule that reads H can pass it",
     .depends = "the criterion (docs/tinytransformer_hessian.md: level 0.5, entries by the diagonal excess, the "
                "descent from whole changed after seeing seeds 2-5, docs/verdicts.md); H as fig6 at step 10",
     .after_data = "the criterion was changed after seeing seeds 2-5 (it descends from whole); the columns "
        "control replaced the permuted-H control, which could not pass, after a review",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"},
             {.choice = "criterion level",
              .name = "level0.4",
              .flags = "--level 0.4",
              .why = "Principle 1's 'smallest dense sub-block' gives no threshold; 0.4 instead of 0.5 lets a "
                     "weaker structure hold"}}},
    {.id = "partition_check.mlp_alg2",
     .experiment = "partition_check",
     .paper = "Algorithm 2: Partition for non-Transformers (param_blocks[name] = param)",
     .place = "App. A, Algorithm 2 (with Principle 1, Sec. 2.3)",
     .claim = "Principle 1 read from the MLP's H keeps each tensor whole (Algorithm 2)",
     .stat = "partition_check.mlp.alg2_agree",
     .stat_what = "share of the MLP's tensors (fc1, fc2, fc2.bias) the criterion keeps whole (0.8: all three)",
     .side = CLAIM_ABOVE,
     .threshold = 0.8,
     .kind = RULE_SHARE,
     .control = "partition_check.tt.alg2_agree",
     .control_what = "the same share on the Transformer, for which the paper says the default partition (Algorithm 2) "
                     "does not follow Principle 1; a permuted H would not do, since a structure-blind criterion keeps "
                     "tensors whole",
     .depends = "MLP 49-8-10 tanh on Fashion-MNIST pooled 4x4, Adam lr 1e-3, H at step 10 of 1,000 on 1,000 test "
                "images; the criterion as partition_check.tt_alg3",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"},
             {.choice = "criterion level",
              .name = "level0.4",
              .flags = "--level 0.4",
              .why = "Principle 1's 'smallest dense sub-block' gives no threshold; 0.4 instead of 0.5 lets a "
                     "weaker structure hold"}}},

    {.id = "block_structure.neurons_together",
     .experiment = "block_structure",
     .paper = "The Hessian of attn.proj and MLPs have block-diagonal structures. The number of blocks equals the "
              "number of output neurons",
     .place = "Sec. 2.3, Fig. 6 (d-f), class 2 (at 1% of training; the text: after 1 step)",
     .claim = "attn.proj, mlp.fc_1 and mlp.proj are block-diagonal by output neurons together at some step in 0-100",
     .stat = "block_structure.neurons_together.max_min_excess",
     .stat_what = "largest over steps 0, 1, 2, 5, 10, 20, 50, 100 of the smallest of the three tensors' off-diagonal "
                  "excess of the output-neuron split",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "block_structure.control.neurons_together.max_min_excess",
     .control_what = "the same max over steps of the min over the three on each H_tt randomly permuted: it carries the "
                     "same selection over 8 steps, so the rule must not pass it by the selection alone",
     .depends = "the fig6 setup; the steps looked at (8 of the first 100 of 1,000)",
     .family = "fig6.neurons",
     .paper_setting = "the paper does not give the training lr to its checkpoint",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},


    /* table_kappa: the kappa table (appendix Exp 1), one primary reading and seven others */
#define TK_PAPER                                                                                             \
    "We take some small dense blocks in the Hessian of 1-layer Transformer and denoted as H. We compare "    \
    "kappa(H) and kappa(D_Adam H) as in the paper. We find Adam is not effective in reducing the kappa of "  \
    "these blocks, and many lrs in Adam can be redundant"
#define TK_PLACE "Appendix \"More Results for Motivation\", Exp 1, Table \"Comparison of kappa(H) and kappa(D_Adam H)\""
#define TK_CONTROL                                                                                           \
    "the same share in coordinates rescaled by a fixed random diagonal S (log10 s_i ~ U[-1, 1], seed S+2): " \
    "S M_b S, its null directions S^-1 N, D from S M_b S x or from S^2 v-hat (the same gradients in the "    \
    "new coordinates). Badly scaled coordinates are what a diagonal preconditioner is for: D undoes about "   \
    "half of the scaling in log, so kappa(D M) falls below kappa(M) and the rule must reject it"
#define TK_DEPENDS                                                                                           \
    "the paper's model (V 8, C 16, 4 heads, M 32, T 8, biases), AdamW lr 1e-3 cosine, 1,000 steps of 64 "    \
    "sequences of the order-2 Markov source; H and G exact on 256 fixed sequences; kappa = "                 \
    "|lambda|max/|lambda|min on the complement of the derived null directions (key heads: 1/g; layer-0 "     \
    "query heads: w orthogonal to the LayerNorm outputs after position 0) and of eigenvalues |lambda| <= "   \
    "n eps |lambda|max; measurable when kappa <= 1e12; 'most' = more than half of the measurable blocks"
    {.id = "table_kappa.fig4_H_1pct",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "as the table (kappa(D_Adam H) > kappa(H) on all six blocks, by 1.7x to 3.7x): on most measurable "
              "Algorithm 3 blocks of query, key, value, attn.proj, mlp.fc_1 and mlp.proj, kappa(D H_b) > kappa(H_b) "
              "on the complement of the block's null space, D by the paper's Fig. 4 recipe, at 1% of training",
     .stat = "table_kappa.share_up.fig4.H.1pct",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D H_b)/kappa(H_b) "
                  "> 1, D from the paper's Fig. 4 recipe (D = diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 "
                  "draws), at 1% of training (step 10 of 1,000; the Fig. 6 caption's \"at 1% training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.fig4.H.1pct",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.adam_H_1pct",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on H_b, at 1% of training",
     .stat = "table_kappa.share_up.adam.H.1pct",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D H_b)/kappa(H_b) "
                  "> 1, "
                  "D = diag(1/(sqrt(v-hat) + eps)) from AdamW's own v-hat at the checkpoint, at 1% of training "
                  "(step 10 of 1,000; the Fig. 6 caption's \"at 1% training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.adam.H.1pct",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.fig4_H_step1",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from the paper's Fig. 4 recipe, on H_b, after 1 "
              "training step",
     .stat = "table_kappa.share_up.fig4.H.step1",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D H_b)/kappa(H_b) "
                  "> 1, D from the paper's Fig. 4 recipe (D = diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 "
                  "draws), after 1 training step (the text's \"after 1 training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.fig4.H.step1",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.adam_H_step1",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on H_b, after 1 training step",
     .stat = "table_kappa.share_up.adam.H.step1",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D H_b)/kappa(H_b) "
                  "> 1, "
                  "D = diag(1/(sqrt(v-hat) + eps)) from AdamW's own v-hat at the checkpoint, after 1 training step "
                  "(the text's \"after 1 training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.adam.H.step1",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.fig4_G_1pct",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from the paper's Fig. 4 recipe, on the "
              "Gauss-Newton part G_b, at 1% of training",
     .stat = "table_kappa.share_up.fig4.G.1pct",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D G_b)/kappa(G_b) "
                  "> 1, "
                  "D from the paper's Fig. 4 recipe (D = diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 "
                  "draws), at 1% of training (step 10 of 1,000; the Fig. 6 caption's \"at 1% training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.fig4.G.1pct",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.adam_G_1pct",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on the Gauss-Newton part G_b, "
              "at 1% of training",
     .stat = "table_kappa.share_up.adam.G.1pct",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D G_b)/kappa(G_b) "
                  "> 1, "
                  "D = diag(1/(sqrt(v-hat) + eps)) from AdamW's own v-hat at the checkpoint, at 1% of training "
                  "(step 10 of 1,000; the Fig. 6 caption's \"at 1% training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.adam.G.1pct",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.fig4_G_step1",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from the paper's Fig. 4 recipe, on the "
              "Gauss-Newton part G_b, after 1 training step",
     .stat = "table_kappa.share_up.fig4.G.step1",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D G_b)/kappa(G_b) "
                  "> 1, "
                  "D from the paper's Fig. 4 recipe (D = diag(1/|H_b x|), x ~ N(0, I/sqrt(n)), median over 25 "
                  "draws), after 1 training step (the text's \"after 1 training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.fig4.G.step1",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
    {.id = "table_kappa.adam_G_step1",
     .experiment = "table_kappa",
     .paper = TK_PAPER,
     .place = TK_PLACE,
     .claim = "reading of table_kappa.fig4_H_1pct: the same with D from AdamW v-hat, on the Gauss-Newton part G_b, "
              "after 1 training step",
     .stat = "table_kappa.share_up.adam.G.step1",
     .stat_what = "share of the measurable blocks (kappa <= 1e12 after deflation; of 88: 4 query heads, 4 key heads, "
                  "16 value, 16 attn.proj, 32 mlp.fc_1 and 16 mlp.proj output neurons) with kappa(D G_b)/kappa(G_b) "
                  "> 1, "
                  "D = diag(1/(sqrt(v-hat) + eps)) from AdamW's own v-hat at the checkpoint, after 1 training step "
                  "(the text's \"after 1 training step\")",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_SHARE,
     .control = "table_kappa.control.share_up.adam.G.step1",
     .control_what = "the same share on each block's diagonal part diag(H_b) (resp. diag(G_b); tau = 1, where the "
                     "paper says D_Adam works), D from the same recipe and the same measurability rule: where the "
                     "paper expects D to help, so the share must be low for the rule to mean 'dense blocks resist "
                     "D'. With the Fig. 4 recipe kappa(D diag h) = max|x|/min|x|, so this control can pass; the "
                     "old rescaled-coordinates control (0 on every seed) is kept as table_kappa.scaled.*",
     .depends = TK_DEPENDS,
     .family = "table_kappa",
     .after_data = "the null tolerance and the derived null directions were chosen after a seed-1 exploration; "
        "the diagonal-part control replaced the rescaled-coordinates control (0 on every seed by "
        "construction) after a review: it was a reference before, kept out because the Fig. 4 recipe "
        "raises kappa on diagonal parts too",
     .paper_setting = "the paper reports one block of each kind at an unstated checkpoint and D recipe; here every "
        "Algorithm 3 block, both D recipes and both checkpoints",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "training lr to the checkpoint",
              .name = "lr3e-4",
              .flags = "--lr 3e-4",
              .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training "
                     "uses"}}},
#undef TK_PAPER
#undef TK_PLACE
#undef TK_CONTROL
#undef TK_DEPENDS

    /* ---- optimizer memory (table1_memory) ---- */
    {.id = "table1.v_removed",
     .experiment = "table1_memory",
     .paper = "Adam-mini can cut down more than 99.9% of v in Adam",
     .place = "Abstract; Sec. 2.4, Table 1",
     .claim = "at least 99.9% of Adam's v is removed in each of the five models",
     .stat = "table1_memory.min_v_removed_pct",
     .stat_what = "smallest share of Adam's v that Adam-mini removes over the five models, %",
     .side = CLAIM_ABOVE,
     .threshold = 99.9,
     .kind = RULE_EXACT,
     .control = "table1_memory.control.tiny_v_removed_pct",
     .control_what = "the same share of v removed for the paper's own tiny Transformer (V 8, C 16, 4 heads, M 32, "
        "T 8) under Algorithm 3: a real model where the arithmetic does not reach 99.9%, so the rule "
        "can tell models apart",
     .depends = "exact counts from the published shapes; seeds do not enter",
     .after_data = "the tiny-Transformer control replaced one block per parameter (0 by construction) after a "
        "review",
     .alt = {{.choice = "counting",
              .name = "bias_as_blocks",
              .stat = "table1_memory.bias_as_blocks.min_v_removed_pct",
              .control = "table1_memory.control.bias_as_blocks.tiny_v_removed_pct",
              .why = "Algorithm 3 gives bias vectors no rule of their own; one block per bias vector instead of "
                     "the official code's plain Adam on them (one v per entry)"}}},

    /* ---- optimizers on the tiny Transformer (train_compare, exp2_blockwise_gd, leave_out,
     *      ablation_vstat, trajectory) ---- */
    /* Every statistic is scale-free: a held-out loss difference as a share of the reference
     * optimizer's progress from the initialisation, (L_X − L_ref)/(L_0 − L_ref), paired per
     * position (harness/ttexp.h ttexp_excess_share). "On par" / "not worse" is an excess
     * below 0.02 (TTEXP_ON_PAR: 2% of the reference's progress, docs/verdicts.md says why);
     * "beats" is a margin above the same 0.02. Every learning rate is searched on a grid
     * that extends at its edges (grid.csv); the depends fields name the choices. */
    {.id = "train_compare.mini_on_par",
     .experiment = "train_compare",
     .paper = "Adam-mini performs on par or better than AdamW",
     .place = "Abstract; Sec. 3",
     .claim = "Adam-mini (Algorithm 3) ends within 2% of AdamW's progress of AdamW's held-out loss",
     .stat = "train_compare.mini_excess",
     .stat_what = "(L_Adam-mini - L_AdamW)/(L_0 - L_AdamW), held-out, each at its best searched lr",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "train_compare.control.one_block_excess",
     .control_what = "Adam-mini with one block for the whole model (one adaptive lr for every parameter, lr "
                     "searched alike): what Principle 1 says fails on Transformers; a rule that accepts it cannot "
                     "tell the paper's partition from none",
     .depends = "1-layer model, 300 steps of batch 64, order-2 Markov data; lr chosen on training loss; "
                "weight decay 0.1 on both",
     .after_data = "the 2% margin was chosen knowing seed 1 (0.4%) and seed 2 (1.6%) of the first version",
     .paper_setting = "the paper's claim is about LLM pre-training at scale; here a 1-layer tiny Transformer over "
        "300 steps",
     .alt = {{.choice = "horizon",
              .name = "steps600",
              .flags = "--steps 600",
              .why = "the paper compares at the end of training without a fixed length; 600 steps instead of 300 "
                     "(longer training can close or open gaps)"},
             {.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"}}},
    {.id = "train_compare.adaptive_beats_gd",
     .experiment = "train_compare",
     .paper = "Adam outperforms the optimal single-learning-rate method",
     .place = "Sec. 2.1, finding (1) (on a quadratic; here on the Transformer)",
     .claim = "both AdamW and Adam-mini beat single-lr GD by more than 2% of AdamW's progress",
     .stat = "train_compare.adaptive_margin_over_gd",
     .stat_what = "(L_GD - max(L_AdamW, L_Adam-mini))/(L_0 - L_AdamW), held-out",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "train_compare.control.gd_other_batches_margin",
     .control_what = "GD at the same lr with another batch order in place of AdamW and Adam-mini: it cannot beat "
                     "GD, so a rule that passes it detects batch noise",
     .depends = "GD's lr searched over [1e-4, 1e3]; 300 steps (GD catches up with longer training at paper scale)",
     .paper_setting = "finding (1) is on a random quadratic; here on the tiny Transformer",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: INCONCLUSIVE at paper scale (2,000 steps: "
        "GD catches up) against PASS at quick scale",
     .alt = {{.choice = "horizon",
              .name = "steps600",
              .flags = "--steps 600",
              .why = "the paper compares at the end of training without a fixed length; 600 steps instead of 300 "
                     "(longer training can close or open gaps)"},
             {.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"}}},
    {.id = "train_compare.blockgd_beats_gd",
     .experiment = "train_compare",
     .paper = "(1): Adam outperforms the optimal single-learning-rate method ... (3): If we collect these "
        "optimal learning rates in (2) and apply them to a blockwise version of GD, it would be "
        "faster than Adam",
     .place = "Sec. 2.1, findings (1) and (3) (on a quadratic; here on the Transformer)",
     .claim = "blockwise GD with the Hessian rule beats single-lr GD by more than 2% of AdamW's progress "
        "(implied by (1) and (3): faster than Adam, which beats GD)",
     .stat = "train_compare.blockgd_margin_over_gd",
     .stat_what = "(L_GD - L_blockGD)/(L_0 - L_AdamW), held-out; blockGD eta_b = c/max(|lambda|max(H_bb), median)",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "train_compare.control.gd_other_batches_margin",
     .control_what = "GD at the same lr with another batch order in place of blockwise GD (batch noise only)",
     .depends = "the Hessian rule at initialisation on 64 held-out sequences, its floor at the median, c searched",
     .paper_setting = "findings (1) and (3) are on a random quadratic; here on the tiny Transformer",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: FAIL at paper scale (2,000 steps) against "
        "INCONCLUSIVE at quick scale",
     .alt = {{.choice = "horizon",
              .name = "steps600",
              .flags = "--steps 600",
              .why = "the paper compares at the end of training without a fixed length; 600 steps instead of 300 "
                     "(longer training can close or open gaps)"},
             {.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"}}},
    {.id = "exp2.blockgd_vs_adamw",
     .experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient ... block-wise GD outperforms AdamW",
     .place = "App. D.1 (More Results for Motivation), Exp 2, Fig. (blockwise GD on a 1-layer Transformer)",
     .claim = "blockwise GD with searched per-block lrs is not worse than AdamW (excess < 2% of its progress)",
     .stat = "exp2.blockgd_excess",
     .stat_what = "(L_blockGD - L_AdamW)/(L_0 - L_AdamW), held-out; the original comparison (no momentum vs beta1 0.9)",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.gd_excess",
     .control_what = "GD with one searched lr for every parameter: one lr per block is claimed to be what makes GD "
                     "sufficient, so the rule must reject one lr for all",
     .depends = "coordinate search (quick: 1 pass over 12 layers, factors x4 extended to x64) from the Hessian rule; "
                "300 steps; momentum and weight decay differ (see the next two claims)",
     .family = "exp2",
     .after_data = "the heavy-ball first grids were centred after a seed-1 exploration; the coordinate search "
        "was cut to one pass over 12 layers before any run of it",
     .alt = {{.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"},
             {.choice = "coordinate search",
              .name = "passes2",
              .flags = "--passes 2",
              .why = "the paper grid-searches one lr per block without saying how; two coordinate passes instead "
                     "of one"}}},
    {.id = "exp2.heavy_ball_vs_adamw",
     .experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient",
     .place = "App. D.1 (More Results for Motivation), Exp 2, Fig. (blockwise GD on a 1-layer Transformer)",
     .claim = "blockwise heavy ball (AdamW's beta1 = 0.9 momentum, searched per-block lrs) is not worse than AdamW",
     .stat = "exp2.blockhb_excess",
     .stat_what = "(L_blockHB - L_AdamW)/(L_0 - L_AdamW), held-out",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.heavy_ball_excess",
     .control_what = "heavy ball with one searched lr for every parameter (momentum SGD): the same momentum without "
                     "per-block lrs must be rejected",
     .depends = "same search as blockwise GD; AdamW keeps weight decay 0.1, heavy ball has none",
     .family = "exp2",
     .after_data = "the heavy-ball first grids were centred after a seed-1 exploration; the coordinate search "
        "was cut to one pass over 12 layers before any run of it",
     .alt = {{.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"},
             {.choice = "coordinate search",
              .name = "passes2",
              .flags = "--passes 2",
              .why = "the paper grid-searches one lr per block without saying how; two coordinate passes instead "
                     "of one"}}},
    {.id = "exp2.blockgd_vs_adam_b1_0",
     .experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient",
     .place = "App. D.1 (More Results for Motivation), Exp 2, Fig. (blockwise GD on a 1-layer Transformer)",
     .claim = "blockwise GD with searched per-block lrs is not worse than Adam with beta1 = 0 (no weight decay)",
     .stat = "exp2.blockgd_excess_over_adam_b1_0",
     .stat_what = "(L_blockGD - L_Adam(beta1=0))/(L_0 - L_Adam(beta1=0)), held-out",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.gd_excess_over_adam_b1_0",
     .control_what = "GD with one searched lr for every parameter against the same Adam",
     .depends = "beta2 0.999 and eps 1e-8 for Adam; the blockwise GD of the first claim",
     .family = "exp2",
     .after_data = "the heavy-ball first grids were centred after a seed-1 exploration; the coordinate search "
        "was cut to one pass over 12 layers before any run of it",
     .alt = {{.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"},
             {.choice = "coordinate search",
              .name = "passes2",
              .flags = "--passes 2",
              .why = "the paper grid-searches one lr per block without saying how; two coordinate passes instead "
                     "of one"}}},
    {.id = "exp2.full_batch",
     .experiment = "exp2_blockwise_gd",
     .paper = "we conduct the \"block-wise GD\" and we grid-search the learning rate for each block",
     .place = "App. D.1 (More Results for Motivation), Exp 2, Fig. (blockwise GD on a 1-layer Transformer)",
     .claim = "in full batch on a fixed set of sequences, searched blockwise GD reaches AdamW's training loss "
              "within 2% of AdamW's progress",
     .stat = "exp2.full_batch_blockgd_excess",
     .stat_what = "(F_blockGD - F_AdamW)/(F_0 - F_AdamW), F the loss on the fixed training set (the objective)",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.full_batch_gd_excess",
     .control_what = "full-batch GD with one searched lr for every parameter",
     .depends = "quick: 64 sequences (one batch), 300 full-batch steps; its own searches of every lr",
     .family = "exp2",
     .after_data = "the heavy-ball first grids were centred after a seed-1 exploration; the coordinate search "
        "was cut to one pass over 12 layers before any run of it",
     .alt = {{.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"},
             {.choice = "coordinate search",
              .name = "passes2",
              .flags = "--passes 2",
              .why = "the paper grid-searches one lr per block without saying how; two coordinate passes instead "
                     "of one"}}},
    {.id = "leave_out.per_tensor",
     .experiment = "leave_out",
     .paper = "Adam (leave-one-out) always performs on par with Adam",
     .place = "Sec. 2.2, Fig. 5(d)",
     .claim = "at least 90% of the tensors, left out alone at their searched lr, end within 2% of Adam's progress",
     .stat = "leave_out.share_on_par",
     .stat_what = "share of tensors whose best leave-one-out run has (L - L_Adam)/(L_0 - L_Adam) < 0.02",
     .side = CLAIM_ABOVE,
     .threshold = 0.9,
     .kind = RULE_SHARE,
     .control = "leave_out.control.frozen_share_on_par",
     .control_what = "the share of tensors that are on par when frozen (left out at lr 0): tensors that need no "
                     "training pass trivially, so a rule the frozen share also passes says nothing about one lr",
     .depends = "quick: 2 layers (the paper: 4), no biases, 200 steps; multiplier grids from Adam's step at init",
     .after_data = "Adam's grid went back to 5 points and the multiplier's lower bound to 1e-6 after seed 1; a "
        "joint coordinate pass was added for x = 2, 3 after the first 5-seed run",
     .paper_setting = "the paper: a 4-layer Transformer trained longer; quick scale: 2 layers, 200 steps",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: PASS at paper scale (4 layers, 1,000 steps) "
        "against INCONCLUSIVE at quick scale, with the control not rejected",
     .alt = {{.choice = "horizon",
              .name = "steps400",
              .flags = "--steps 400",
              .why = "the paper compares at the end of training without a fixed length; 400 steps instead of 200 "
                     "(longer training can close or open gaps)"},
             {.choice = "multiplier grid",
              .name = "lrs5",
              .flags = "--lrs 5",
              .why = "the paper searches each left-out tensor's lr without giving the grid; 5 points instead of 3"}}},
    {.id = "leave_out.random_x",
     .experiment = "leave_out",
     .paper = "A similar phenomenon is also observed when we randomly leave out up to three blocks",
     .place = "Sec. 2.2, Fig. 5(a-c)",
     .claim = "x = 1, 2, 3 random tensors left out at their searched lrs all end within 2% of Adam's progress",
     .stat = "leave_out.worst_x_excess",
     .stat_what = "largest (L - L_Adam)/(L_0 - L_Adam) over x = 1, 2, 3 (and draws)",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "leave_out.control.frozen_worst_x_excess",
     .control_what = "the same tensors frozen (lr 0): if freezing them is also on par, the draw could not test "
                     "whether one lr is enough",
     .depends = "the draws (seeded by --seed); each tensor at its own leave-one-out multiplier (no joint search)",
     .after_data = "a joint coordinate pass for x = 2, 3 was added after the first 5-seed run (seed 4's draw "
        "{wpe, wte}); the statistic, threshold and control did not change",
     .paper_setting = "the paper: a 4-layer Transformer trained longer; quick scale: 2 layers, 200 steps",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: PASS at paper scale against INCONCLUSIVE at "
        "quick scale, with the control not rejected",
     .alt = {{.choice = "horizon",
              .name = "steps400",
              .flags = "--steps 400",
              .why = "the paper compares at the end of training without a fixed length; 400 steps instead of 200 "
                     "(longer training can close or open gaps)"},
             {.choice = "multiplier grid",
              .name = "lrs5",
              .flags = "--lrs 5",
              .why = "the paper searches each left-out tensor's lr without giving the grid; 5 points instead of 3"}}},
    {.id = "ablation.mean_best",
     .experiment = "ablation_vstat",
     .paper = "all these candidates perform worse than mean(v) in Adam-mini",
     .place = "App. D.2, Ablation studies",
     .claim = "mean(g_b^2) beats the best of l2, l1, max and min",
     .stat = "ablation.mean_margin",
     .stat_what = "(min over the others of L_s - L_mean)/(L_0 - L_mean), held-out, each at its best searched lr",
     .side = CLAIM_ABOVE,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "ablation.control.min_margin",
     .control_what = "the same margin for min(g_b^2), the statistic known to be worse (it diverges in the paper's "
                     "figure): a rule that calls it the best is blind",
     .depends = "the statistic acts on the current g_b^2 (Adam-mini keeps no per-coordinate v); 300 steps",
     .paper_setting = "the paper's ablation is on Llama 2-20M pre-training; here the tiny Transformer",
     .alt = {{.choice = "horizon",
              .name = "steps600",
              .flags = "--steps 600",
              .why = "the paper compares at the end of training without a fixed length; 600 steps instead of 300 "
                     "(longer training can close or open gaps)"},
             {.choice = "lr grid",
              .name = "lrs9",
              .flags = "--lrs 9",
              .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 "
                     "decides which lr wins on a flat valley"}}},
    {.id = "trajectory.mini_close",
     .experiment = "trajectory",
     .paper = "On a small Transformer, Adam-mini generates similar trajectories to that of AdamW",
     .place = "Sec. 3.1, Trajectory comparison; App. (same seed and same learning rate)",
     .claim = "at one shared small lr, Adam-mini's normalised distance to AdamW stays below 0.5 along training",
     .stat = "trajectory.mini_max_distance",
     .stat_what = "max over snapshots of |w_X - w_A|/sqrt(|w_X - w_0|^2 + |w_A - w_0|^2) (1: unrelated directions)",
     .side = CLAIM_BELOW,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "trajectory.adafactor_max_distance",
     .control_what = "Adafactor (beta1 0.9) in Adam-mini's place: the paper says other memory-efficient methods "
                     "do not stay close to AdamW, so the rule must not pass it; on seed 1 its largest distance is "
                     "near the boundary (0.52)",
     .depends = "peak lr 1e-3 for all (AdamW's best is about 3e-2), 300 steps, snapshots every 15",
     .after_data = "the 'share' alternative's test changed from a t-test of the per-seed shares to a pooled "
        "binomial share after the 5-seed study found the share the same on every seed (INVALID); its "
        "statistic, threshold and control did not change",
     .paper_setting = "the paper: one seed, one shared lr 1e-5, an 8-layer 11M Transformer on OpenWebText; here 5 "
        "seeds, lr 1e-3, the 1-layer tiny Transformer",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: INCONCLUSIVE at paper scale (2,000 steps: "
        "the trajectories drift apart) against PASS at quick scale",
     .alt = {{.choice = "statistic",
              .name = "end",
              .stat = "trajectory.mini_below_half.end",
              .control = "trajectory.adafactor.mini_below_half.end",
              .why = "'stays close' read at the end of the run instead of at every snapshot"},
             {.choice = "statistic",
              .name = "share",
              .stat = "trajectory.mini_below_half.share",
              .control = "trajectory.adafactor.mini_below_half.share",
              .why = "'stays close' read as: at most snapshots (the share of snapshots below 0.5, above one half; "
                     "the snapshots of all seeds pooled)",
              .own_rule = 1, .kind = RULE_SHARE, .side = CLAIM_ABOVE, .threshold = 0.5},
             {.choice = "shared learning rate",
              .name = "lr1e-5",
              .flags = "--shared-lr 1e-5",
              .why = "the paper's own setting: the same lr 1e-5 for every optimizer (here 1e-3; over 300 steps "
                     "1e-5 barely moves the weights, so distances are of tiny moves)"},
             {.choice = "horizon",
              .name = "steps600",
              .flags = "--steps 600",
              .why = "the paper compares at the end of training without a fixed length; 600 steps instead of 300 "
                     "(longer training can close or open gaps)"}}},
    {.id = "trajectory.mini_closest",
     .experiment = "trajectory",
     .paper = "Adam-mini generates similar trajectories to that of AdamW, while other methods cannot",
     .place = "Sec. 3.1, Trajectory comparison",
     .claim = "Adam-mini stays closer to AdamW than both Adafactor and SM3 (beta1 0.9) along training at "
        "the shared lr, on average over the snapshots",
     .stat = "trajectory.mini_closest.area",
     .stat_what = "mean over the snapshots of Adam-mini's normalised distance to AdamW minus the smaller of "
        "Adafactor's and SM3's (negative: Adam-mini closer on average along training)",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "trajectory.control.mini_closest.area",
     .control_what = "GD in Adam-mini's place (the same mean gap over the snapshots): an optimizer the rule must "
                     "not rank closer than Adafactor and SM3. It is far from the boundary (GD at the shared lr "
                     "barely moves); no memory-efficient method can stand in, since the gap of Adafactor or SM3 "
                     "to the closer of the two is >= 0 by construction",
     .depends = "Adafactor and SM3 at their defaults (HF, reference code) with beta1 0.9, no weight decay",
     .after_data = "judged on the mean over all snapshots instead of the largest distance, after a review "
        "showed the largest was decided by the first snapshot (Adafactor is closer at 19 of 20 "
        "snapshots on seed 1); the old statistic is an alternative; the 'share' alternative's test changed "
        "from a t-test of the per-seed shares to a pooled binomial share after the 5-seed study found the "
        "share the same on every seed (INVALID)",
     .paper_setting = "the paper: one seed, one shared lr 1e-5, an 8-layer 11M Transformer on OpenWebText; here 5 "
        "seeds, lr 1e-3",
     .paper_scale = "seeds 1-3, before the seed streams were hashed (old statistic): INCONCLUSIVE at paper scale "
        "against PASS at quick scale",
     .alt = {{.choice = "statistic",
              .name = "end",
              .stat = "trajectory.mini_closest.end",
              .control = "trajectory.control.mini_closest.end",
              .why = "'stays closer' read at the end of the run"},
             {.choice = "statistic",
              .name = "share",
              .stat = "trajectory.mini_closest.share",
              .control = "trajectory.control.mini_closest.share",
              .why = "'stays closer' read as: at most snapshots (share of snapshots where Adam-mini is the "
                     "closest, above one half; the snapshots of all seeds pooled)",
              .own_rule = 1, .kind = RULE_SHARE, .side = CLAIM_ABOVE, .threshold = 0.5},
             {.choice = "statistic",
              .name = "max",
              .stat = "trajectory.mini_log_ratio_to_memory_efficient",
              .control = "trajectory.control.gd_log_ratio_to_memory_efficient",
              .why = "the first version's statistic: log of the ratio of the largest distances over the run "
                     "(decided by the first snapshot on seed 1)"},
             {.choice = "shared learning rate",
              .name = "lr1e-5",
              .flags = "--shared-lr 1e-5",
              .why = "the paper's own setting: the same lr 1e-5 for every optimizer (here 1e-3; over 300 steps "
                     "1e-5 barely moves the weights, so distances are of tiny moves)"},
             {.choice = "horizon",
              .name = "steps600",
              .flags = "--steps 600",
              .why = "the paper compares at the end of training without a fixed length; 600 steps instead of 300 "
                     "(longer training can close or open gaps)"}}},

    /* ---- extensions: block heterogeneity (spectra) and why mean(v) works (hetero, vspread) ---- */
    {.id = "hetero.tt_vs_mlp",
     .experiment = "hetero",
     .paper = "these models often exhibit Hessian-block heterogeneity, i.e., the Hessian of different parameter blocks "
              "have dramatically different eigenvalue distributions ... for CNNs, the eigenvalue distributions are "
              "similar among blocks",
     .place = "Sec. 2.1; App. \"Preliminary results in zhang2024transformers\" (their Fig. 3)",
     .claim = "the tiny Transformer's Algorithm 3 blocks are more heterogeneous than the MLP's (one block per neuron) at "
              "initialisation, 1% and the end of training",
     .stat = "hetero.diff.min",
     .stat_what = "smallest over the three points of S_tt - S_mlp, S = sd over a model's Algorithm 3 blocks of "
                  "log10 |lambda|max(H_bb), decades (scale-free; blocks without curvature beyond round-off left out)",
     .side = CLAIM_ABOVE,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "hetero.control.diff.min",
     .control_what = "the same difference with each model's blocks laid on random permutations of the same "
                     "parameters (same sizes and counts, same H; S averaged over 20 draws): which parameters form a "
                     "block is lost, so a difference that remains comes from the coordinates and the block sizes, not "
                     "from block heterogeneity, and the rule must reject it",
     .depends = "the fig6 Transformer (AdamW lr 1e-3, 1,000 steps, H on 256 held-out sequences) against "
                "partition_check's MLP (49-8-10 tanh, Fashion-MNIST pooled 4x4, Adam lr 1e-3, H on 1,000 test "
                "images): 116 blocks of 16-128 against 19 of 8-50, 11 block types against 3",
     .family = "hetero",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "the MLP's input size",
              .name = "mlp_pool2",
              .flags = "--mlp-pool 2",
              .why = "the MLP's input pooling (4x4 here) sets its block sizes; 2x2 is as defensible"}}},
    {.id = "hetero.beyond_random",
     .experiment = "hetero",
     .paper = "these models often exhibit Hessian-block heterogeneity, i.e., the Hessian of different parameter blocks "
              "have dramatically different eigenvalue distributions ... for CNNs, the eigenvalue distributions are "
              "similar among blocks",
     .place = "Sec. 2.1; App. \"Preliminary results in zhang2024transformers\" (their Fig. 3)",
     .claim = "the same made fair for block sizes and counts: the Transformer's blocks are more heterogeneous than "
              "random blocks of the same sizes on its H by more than the MLP's are, at all three points",
     .stat = "hetero.beyond_random.min",
     .stat_what = "smallest over the three points of log2(S_tt/S_tt,rand) - log2(S_mlp/S_mlp,rand), S_rand the mean S "
                  "of 20 random-permutation partitions with the same block sizes on the same H",
     .side = CLAIM_ABOVE,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "hetero.control.beyond_random.min",
     .control_what = "the same with one more random-permutation partition in place of Algorithm 3's, for both models: "
                     "no block structure at all, so the rule must not pass on the estimator's noise or bias (the "
                     "coordinates and sizes are already divided out by S_rand)",
     .depends = "as hetero.tt_vs_mlp; added after seeing seed 1 (docs/verdicts.md)",
     .family = "hetero",
     .after_data = "added after seeing seed 1, where the first claim's control passed",
     .alt = {{.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"},
             {.choice = "the MLP's input size",
              .name = "mlp_pool2",
              .flags = "--mlp-pool 2",
              .why = "the MLP's input pooling (4x4 here) sets its block sizes; 2x2 is as defensible"}}},
    {.id = "vspread.rows_vs_tensor",
     .experiment = "vspread",
     .paper = "G usually has similar entries within a row (which associates with the same output neuron), and its "
              "mean value can be a good representative of the whole row",
     .place = "App. C (More Discussions), 'Why using average v as learning rates'",
     .claim = "along AdamW training, v-hat is more homogeneous within output-neuron rows than within random groups of "
              "the same sizes in the same tensor, at every checkpoint",
     .stat = "vspread.rows_vs_tensor.worst",
     .stat_what = "largest over steps 1, 10, 100, 500, 1000 of the mean over value, attn.proj, mlp.fc_1, mlp.proj and "
                  "lm_head of log2(W_rows/sd): W_rows the pooled within-row sd of log10(sqrt(v-hat) + eps), sd the "
                  "tensor's (the exact mean for random groups); 0: rows no better than random, -inf: rows constant",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "vspread.control.rows_vs_tensor.worst",
     .control_what = "the same with random groups of the row sizes laid on each tensor's entries in place of its rows: "
                     "no group is an output neuron, so the rule must reject it",
     .depends = "the fig6 training (tiny Transformer, AdamW lr 1e-3 cosine, 1,000 steps of 64 sequences); step 1 is "
                "v-hat = g^2 of one batch",
     .family = "vspread",
     .alt = {{.choice = "checkpoints",
              .name = "late",
              .flags = "--checkpoints 0.01,0.1,0.5,1",
              .why = "'along training' need not include step 1, where v-hat is one gradient's square: checkpoints "
                     "at 1%, 10%, 50% and 100%"},
             {.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"}}},
    {.id = "vspread.rows_vs_cols",
     .experiment = "vspread",
     .paper = "For all entries in the i-th row of G, they all share the same BP error term e_i ... Therefore, G usually "
              "has similar entries within a row (which associates with the same output neuron)",
     .place = "App. C (More Discussions), 'Why using average v as learning rates'",
     .claim = "v-hat is more homogeneous within output-neuron rows than within input-neuron columns of the same "
              "tensors, at every checkpoint (G = e z^T makes columns share z_j as rows share e_i)",
     .stat = "vspread.rows_vs_cols.worst",
     .stat_what = "largest over the five checkpoints of the mean over the five output-neuron tensors of "
                  "log2(W_rows/W_cols), W the pooled within-group sd of log10(sqrt(v-hat) + eps)",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "vspread.control.rows_vs_cols.worst",
     .control_what = "random groups of the row sizes against random groups of the column sizes on the same entries: "
                     "the same sizes and counts without rows or columns, which the rule must reject",
     .depends = "as vspread.rows_vs_tensor; the tensors' inputs (LayerNorm outputs for value, fc_1 and lm_head; "
                "attention and GELU outputs for attn.proj and mlp.proj)",
     .family = "vspread",
     .alt = {{.choice = "checkpoints",
              .name = "late",
              .flags = "--checkpoints 0.01,0.1,0.5,1",
              .why = "'along training' need not include step 1, where v-hat is one gradient's square: checkpoints "
                     "at 1%, 10%, 50% and 100%"},
             {.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"}}},
    {.id = "vspread.heads_vs_rows",
     .experiment = "vspread",
     .paper = "For all entries in the i-th row of G, they all share the same BP error term e_i ... By Principle 1, query "
              "and key should be further partitioned by heads",
     .place = "App. C (More Discussions), 'Why using average v as learning rates'",
     .claim = "the BP argument's prediction: v-hat is less homogeneous within a query/key head (Algorithm 3's block, "
              "several rows) than within its rows, at every checkpoint",
     .stat = "vspread.heads_vs_rows.worst",
     .stat_what = "smallest over the five checkpoints of the mean over query and key of log2(W_heads/W_rows)",
     .side = CLAIM_ABOVE,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "vspread.control.heads_vs_rows.worst",
     .control_what = "random groups of the head size against random groups of the row size on the same entries: "
                     "larger random groups are not less homogeneous (the pooled variance has the same mean), so the "
                     "rule must reject it",
     .depends = "as vspread.rows_vs_tensor; 4 heads of 4 rows",
     .family = "vspread",
     .alt = {{.choice = "checkpoints",
              .name = "late",
              .flags = "--checkpoints 0.01,0.1,0.5,1",
              .why = "'along training' need not include step 1, where v-hat is one gradient's square: checkpoints "
                     "at 1%, 10%, 50% and 100%"},
             {.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"}}},
    {.id = "vspread.lr_close",
     .experiment = "vspread",
     .paper = "the average of v is a good representative for the whole v in the block, and can help Adam-mini keep "
              "close to Adam",
     .place = "App. C (More Discussions), 'Why using average v as learning rates'",
     .claim = "along AdamW training, Adam-mini's per-block lr 1/(sqrt(mean v-hat_b) + eps) is within a factor 2 of "
              "Adam's 1/(sqrt(v-hat_i) + eps) for most coordinates, at every checkpoint",
     .stat = "vspread.lr_within2.worst",
     .stat_what = "smallest over the five checkpoints of the share of the coordinates in Algorithm 3's blocks that "
                  "share one v (all but biases, where Adam-mini keeps Adam's) with |log2 ratio| <= 1",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "vspread.control.lr_within2.worst",
     .control_what = "the same share for random groups of Algorithm 3's block sizes over the same coordinates (mixing "
                     "tensors): a mean over parameters that share nothing, which the rule must reject if it tests "
                     "the blocks and not the overall spread of v-hat",
     .depends = "as vspread.rows_vs_tensor; factor 2 and 'most' (> 1/2) fixed before the runs",
     .family = "vspread",
     .alt = {{.choice = "checkpoints",
              .name = "late",
              .flags = "--checkpoints 0.01,0.1,0.5,1",
              .why = "'along training' need not include step 1, where v-hat is one gradient's square: checkpoints "
                     "at 1%, 10%, 50% and 100%"},
             {.choice = "training lr to the checkpoint",
              .name = "lr1e-2",
              .flags = "--lr 0.01",
              .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak "
                     "lr for models this small (the toolkit's 1e-3 is its default)"}}},


    /* ---- extensions: the MLP block-diagonal after one step (mlp_steps) ---- */
    {.id = "mlp_steps.one_step_blocks",
     .experiment = "mlp_steps",
     .paper = "The authors report that this can happen just after 1 training step, as restated in Figure 2 (a)",
     .place = "App. C (More Discussions), analysis after Collobert 2004; Fig. 2(a)",
     .claim = "after 1 training step the hidden layer's Hessian is block-diagonal by hidden neuron (100 classes)",
     .stat = "mlp_steps.c100.step1.hidden_excess",
     .stat_what = "off-diagonal excess e of the 8 hidden-neuron blocks inside fc1-fc1 at step 1, cross-entropy, "
                  "100 classes (0: random blocks of the same sizes, 1: block-diagonal; diagonal left out)",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "mlp_steps.control.c100.step1.hidden_excess",
     .control_what = "the same blocks laid on a random permutation of the fc1 parameters at step 1: every entry and "
                     "the diagonal kept, only the neuron order lost, so a rule that passed it would be reading "
                     "magnitudes, not blocks",
     .depends = "fig2's MLP (8 tanh neurons, Adam lr 1e-4 cosine, batch 128) on synthetic 3x32x32 images with 100 "
                "classes pooled 4x4 (CIFAR-100's layout; the real set is absent), H on 500 test images; threshold 0.5 "
                "as fig2",
     .family = "mlp_steps.early",
     .paper_setting = "the paper: CIFAR-100; here a synthetic set in CIFAR's layout (100 classes)",
     .alt = {{.choice = "learning rate",
              .name = "lr1e-3",
              .flags = "--lr 1e-3",
              .why = "the paper's Adam lr 1e-4 is for CIFAR-100's full-size inputs; on the pooled synthetic set "
                     "1e-3 trains further in the same steps"},
             {.choice = "activation",
              .name = "relu",
              .flags = "--act relu",
              .why = "the paper does not name the MLP's activation (tanh here)"}}},
    {.id = "mlp_steps.appears_first_steps",
     .experiment = "mlp_steps",
     .paper = "the term p(x)(1 - p(x)) will quickly shrink to zero. This term will push the Hessian to "
              "near-block-diagonal structure ... this can happen just after 1 training step",
     .place = "App. C (More Discussions), analysis after Collobert 2004; Fig. 2(a)",
     .claim = "the block-diagonal structure appears within the first 10 steps: absent at initialisation (e < 0.5), "
              "present at step 10 (e >= 0.5) (100 classes)",
     .stat = "mlp_steps.c100.appear_margin",
     .stat_what = "min(e_10 - 0.5, 0.5 - e_0), e the hidden-neuron blocks' excess at steps 10 and 0 (cross-entropy, "
                  "100 classes): > 0 iff e_0 < 0.5 <= e_10",
     .side = CLAIM_ABOVE,
     .threshold = 0.0,
     .kind = RULE_INTERVAL,
     .control = "mlp_steps.control.c100.appear_margin",
     .control_what = "the same margin of the blocks laid on a random permutation at steps 0 and 10: no structure "
                     "ever appears there, so the rule must reject it",
     .depends = "as mlp_steps.one_step_blocks; 'the first steps' = 10 (checkpoints 1, 2, 5, 10); at lr 1e-4 ten "
                "Adam steps move each weight by at most about 1e-3",
     .family = "mlp_steps.early",
     .paper_setting = "the paper: CIFAR-100; here a synthetic set in CIFAR's layout (100 classes)",
     .alt = {{.choice = "learning rate",
              .name = "lr1e-3",
              .flags = "--lr 1e-3",
              .why = "the paper's Adam lr 1e-4 is for CIFAR-100's full-size inputs; on the pooled synthetic set "
                     "1e-3 trains further in the same steps"},
             {.choice = "activation",
              .name = "relu",
              .flags = "--act relu",
              .why = "the paper does not name the MLP's activation (tanh here)"}}},
    {.id = "mlp_steps.pq_shrinks",
     .experiment = "mlp_steps",
     .paper = "Since the training objective is to maximize p(x), the term p(x)(1 - p(x)) will quickly shrink to zero",
     .place = "App. C (More Discussions), analysis after Collobert 2004",
     .claim = "the softmax factor p(1-p) at least halves over the paper's 7,900 training steps (100 classes)",
     .stat = "mlp_steps.c100.pq_ratio",
     .stat_what = "mean over the evaluation batch and the classes of p_c(1 - p_c) (= tr(diag p - pp^T)/C, p the "
                  "softmax of the outputs) at step 7,900 over its value at step 0, cross-entropy, 100 classes",
     .side = CLAIM_BELOW,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "mlp_steps.control.c100.squared.pq_ratio",
     .control_what = "the same ratio for the squared-loss twin (same initialisation and batches): its outputs are "
                     "fitted to one-hot targets, so their softmax cannot saturate (p_y <= e/(e + 99)) and p(1-p) "
                     "cannot halve; a rule that passed it would not be measuring saturation",
     .depends = "as mlp_steps.one_step_blocks; the data's difficulty (per-pixel noise 1.5, the toolkit's synthetic "
                "set's) and the width (8 neurons for 100 classes) set how far p can saturate",
     .family = "mlp_steps.softmax",
     .after_data = "written after a pilot seed (101, outside the verdict seeds): the 10-class restriction, the "
        "squared-twin controls and the softmax-factor claim with its ReLU control",
     .paper_setting = "the paper: CIFAR-100; here a synthetic set in CIFAR's layout",
     .alt = {{.choice = "learning rate",
              .name = "lr1e-3",
              .flags = "--lr 1e-3",
              .why = "the paper's Adam lr 1e-4 is for CIFAR-100's full-size inputs; on the pooled synthetic set "
                     "1e-3 trains further in the same steps"}}},
    {.id = "mlp_steps.offblock_falls_with_pq",
     .experiment = "mlp_steps",
     .paper = "the off-diagonal-block Hessian elements would contain p(x)(1 - p(x)) ... will quickly shrink to zero. "
              "This term will push the Hessian to near-block-diagonal structure",
     .place = "App. C (More Discussions), analysis after Collobert 2004",
     .claim = "the hidden neurons' off-block Hessian mass falls with p(1-p) over training (10 classes, where p "
              "saturates)",
     .stat = "mlp_steps.c10.rho_offblock_pq",
     .stat_what = "Spearman rho over the 14 checkpoints (steps 0, 1, 2, 5, ..., 5000, 7900) between the off-block "
                  "mass 1 - e of the hidden-neuron blocks (over its mean for random blocks) and p(1-p), "
                  "cross-entropy, 10 classes",
     .side = CLAIM_ABOVE,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "mlp_steps.control.c10.squared.rho_offblock_pq",
     .control_what = "the squared-loss twin's off-block mass 1 - e (same initialisation, batches and checkpoints; its "
                     "Hessian has no p(1-p): the output Hessian is the identity) against the same p(1-p) series: if it "
                     "falls along too, the rule is reading training progress, not the softmax factor",
     .depends = "as mlp_steps.one_step_blocks with 10 classes; p(1-p) as the mean over classes (the true class's "
                "p_y(1 - p_y) rises while p_y < 1/2 and is reported, not judged); at 100 classes p(1-p) hardly "
                "moves (mlp_steps.pq_shrinks), so the correlation there is reported only",
     .family = "mlp_steps.softmax",
     .after_data = "written after a pilot seed (101, outside the verdict seeds): the 10-class restriction, the "
        "squared-twin controls and the softmax-factor claim with its ReLU control",
     .paper_setting = "the paper: CIFAR-100; here a synthetic set in CIFAR's layout",
     .alt = {{.choice = "learning rate",
              .name = "lr1e-3",
              .flags = "--lr 1e-3",
              .why = "the paper's Adam lr 1e-4 is for CIFAR-100's full-size inputs; on the pooled synthetic set "
                     "1e-3 trains further in the same steps"}}},
    {.id = "mlp_steps.softmax_factor",
     .experiment = "mlp_steps",
     .paper = "the off-diagonal-block Hessian elements would contain p(x)(1 - p(x)) ... This term will push the "
              "Hessian to near-block-diagonal structure where each block corresponds to one output neuron",
     .place = "App. C (More Discussions), analysis after Collobert 2004",
     .claim = "at the same weights, the softmax factor makes the hidden layer's H more block-diagonal than the "
              "squared loss's (no factor) by at least 0.1 in e (100 classes, at initialisation)",
     .stat = "mlp_steps.c100.softmax_factor_excess",
     .stat_what = "e(cross-entropy) - e(squared loss) of the hidden-neuron blocks at step 0 (identical weights and "
                  "evaluation batch), tanh, 100 classes; 0.1 = a tenth of random blocks' off-block mass",
     .side = CLAIM_ABOVE,
     .threshold = 0.1,
     .kind = RULE_INTERVAL,
     .control = "mlp_steps.control.c100.relu.softmax_factor_excess",
     .control_what = "the same difference with ReLU at the same weights: sigma'' = 0, so fc1-fc1 of H is all "
                     "Gauss-Newton and every entry, in a block or not, carries the softmax factor; its size cannot "
                     "favour the blocks, and a rule that passed ReLU would be crediting something other than the "
                     "factor",
     .depends = "as mlp_steps.one_step_blocks; tanh (the paper does not name its activation); at initialisation "
                "p is near uniform, so the factor is ~1/C, small because p is spread, not because it saturates",
     .family = "mlp_steps.softmax",
     .after_data = "written after a pilot seed (101, outside the verdict seeds): the 10-class restriction, the "
        "squared-twin controls and the softmax-factor claim with its ReLU control",
     .paper_setting = "the paper: CIFAR-100; here a synthetic set in CIFAR's layout",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: INCONCLUSIVE at paper scale against PASS at "
        "quick scale",
     .alt = {{.choice = "learning rate",
              .name = "lr1e-3",
              .flags = "--lr 1e-3",
              .why = "the paper's Adam lr 1e-4 is for CIFAR-100's full-size inputs; on the pooled synthetic set "
                     "1e-3 trains further in the same steps"}}},

    /* ---- extensions: coarse partitions and the value split (coarse, value_split) ---- */
    /* s = min(1, (L - L_alg3)/(L_0 - L_alg3)): the share of Algorithm 3's progress (at its best lr) a run loses,
     * 1 for a diverged run (harness/coarse_util.h capped_loss_share); "hurts" = loses more than TTEXP_ON_PAR. */
    {.id = "coarse.whole_hurts",
     .experiment = "coarse",
     .paper = "if the partition is too coarse and violates Principle 1, we might accidentally remove some crucial "
              "learning rates and oversimplify the problem, causing training failure",
     .place = "Sec. 2.3, Principle 1",
     .claim = "Adam-mini with one block for the whole model loses more than 2% of Algorithm 3's progress more than "
              "Algorithm 3 does, both at each one's best lr and at twice it",
     .stat = "coarse.whole_hurt",
     .stat_what = "min over x in {1, 2} of s(whole, x lr_whole) - s(alg3, x lr_alg3), s the held-out loss above "
                  "Algorithm 3's best as a share of its progress, capped at 1 (diverged: 1)",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "coarse.control.alg3_other_batches_hurt",
     .control_what = "Algorithm 3 itself at the same two lrs with another batch order in place of the coarse "
                     "partition: it differs only by batch noise, so a rule that passes it reads noise, not the "
                     "partition",
     .depends = "quick: 2 layers, no biases, weight decay 0, 200 steps, lr searched per partition; 'hurts' = "
                "2% of Algorithm 3's progress (the optimizer claims' margin)",
     .family = "coarse",
     .paper_setting = "the paper: Llama 2-1B (Fig. 6(i)); here a 2-layer tiny Transformer",
     .alt = {{.choice = "lr grid",
              .name = "lrs7",
              .flags = "--lrs 7",
              .why = "the first grid's density: 7 points (paper scale's) instead of 4"},
             {.choice = "horizon",
              .name = "steps400",
              .flags = "--steps 400",
              .why = "the paper compares at the end of training without a fixed length; 400 steps instead of 200 "
                     "(longer training can close or open gaps)"}}},
    {.id = "coarse.alg2_hurts",
     .experiment = "coarse",
     .paper = "naive or default partitions (e.g. partitioning by layers) would cause training instability on LLMs",
     .place = "Sec. 1; Sec. 2.3 (Llama 2-1B, Fig. 6(i))",
     .claim = "Adam-mini with the default partition (one block per tensor, Algorithm 2) loses more than 2% of "
              "Algorithm 3's progress more than Algorithm 3 does, at each one's best lr and at twice it",
     .stat = "coarse.alg2_hurt",
     .stat_what = "min over x in {1, 2} of s(alg2, x lr_alg2) - s(alg3, x lr_alg3), s as coarse.whole_hurts",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "coarse.control.alg3_other_batches_hurt",
     .control_what = "Algorithm 3 with another batch order in place of Algorithm 2 (batch noise only)",
     .depends = "as coarse.whole_hurts; the paper saw the instability on 1B models, we train a 2-layer one",
     .family = "coarse",
     .paper_setting = "the paper: Llama 2-1B (Fig. 6(i)); here a 2-layer tiny Transformer",
     .alt = {{.choice = "lr grid",
              .name = "lrs7",
              .flags = "--lrs 7",
              .why = "the first grid's density: 7 points (paper scale's) instead of 4"},
             {.choice = "horizon",
              .name = "steps400",
              .flags = "--steps 400",
              .why = "the paper compares at the end of training without a fixed length; 400 steps instead of 200 "
                     "(longer training can close or open gaps)"}}},
    {.id = "coarse.whole_unstable",
     .experiment = "coarse",
     .paper = "naive or default partitions (e.g. partitioning by layers) would cause training instability on LLMs",
     .place = "Sec. 1; Sec. 2.3 (loss spikes, Fig. 6(i))",
     .claim = "at twice each one's best lr, Adam-mini with one block for the whole model loses more than 2% of "
              "Algorithm 3's progress more than Algorithm 3 does (a narrower stable lr range)",
     .stat = "coarse.whole_hurt.x2",
     .stat_what = "s(whole, 2 lr_whole) - s(alg3, 2 lr_alg3), s as coarse.whole_hurts",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "coarse.control.alg3_other_batches_hurt.x2",
     .control_what = "Algorithm 3 at 2x its best lr with another batch order in place of one block (batch noise only)",
     .depends = "as coarse.whole_hurts; added after seeing seeds 1-4, where one block at 1x was within batch noise "
                "but collapsed at 2x in every seed (docs/verdicts.md)",
     .family = "coarse",
     .after_data = "added after seeing seeds 1-4 (one block collapsed at 2x its best lr in every seed)",
     .paper_setting = "the paper: Llama 2-1B (Fig. 6(i)); here a 2-layer tiny Transformer",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: INCONCLUSIVE at paper scale against PASS at "
        "quick scale",
     .alt = {{.choice = "lr grid",
              .name = "lrs7",
              .flags = "--lrs 7",
              .why = "the first grid's density: 7 points (paper scale's) instead of 4"},
             {.choice = "horizon",
              .name = "steps400",
              .flags = "--steps 400",
              .why = "the paper compares at the end of training without a fixed length; 400 steps instead of 200 "
                     "(longer training can close or open gaps)"}}},
    /* d = min(1, (L_whole - L_neuron)/(L_0 - L_neuron)): value as one block against value by output neuron,
     * each at its own searched lr, as a share of neuron's progress (negative: whole is better). */
    {.id = "value_split.whole_better_short",
     .experiment = "value_split",
     .paper = "we find that strategy (II) works better when the number of total training steps is small",
     .place = "App. D (More Discussions on the Partition Strategies of Value)",
     .claim = "on short runs Adam-mini with value as one block beats value by output neuron by more than 2% of "
              "neuron's progress",
     .stat = "value_split.short.whole_excess",
     .stat_what = "(L_whole - L_neuron)/(L_0 - L_neuron) on short runs, held-out, each at its best searched lr "
                  "(capped at 1)",
     .side = CLAIM_BELOW,
     .threshold = -0.02,
     .kind = RULE_INTERVAL,
     .control = "value_split.control.short.other_batches_excess",
     .control_what = "value by neuron with another batch order in whole's place, at neuron's lr: the same partition, "
                     "so a rule that passes it reads batch noise",
     .depends = "quick: 100 steps (the paper's short runs: 10k steps of Llama); 1-layer model, weight decay 0.1",
     .paper_setting = "the paper: GPT-2 runs of tens of thousands of steps; here 100 and 400 steps",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: FAIL at paper scale (300 steps) against "
        "INCONCLUSIVE at quick scale",
     .alt = {{.choice = "short run length",
              .name = "short50",
              .flags = "--short 50",
              .why = "'small number of total training steps' is not given: 50 steps instead of 100"},
             {.choice = "long run length",
              .name = "long1000",
              .flags = "--steps 1000",
              .why = "'large number of total training steps': 1,000 steps instead of 400"}}},
    {.id = "value_split.neuron_fine_long",
     .experiment = "value_split",
     .paper = "we find that strategy (I) works well when the number of total training steps is large",
     .place = "App. D (More Discussions on the Partition Strategies of Value)",
     .claim = "on long runs value by output neuron is not worse than value as one block by more than 2% of "
              "neuron's progress",
     .stat = "value_split.long.whole_excess",
     .stat_what = "(L_whole - L_neuron)/(L_0 - L_neuron) on long runs, held-out, each at its best searched lr "
                  "(capped at 1)",
     .side = CLAIM_ABOVE,
     .threshold = -0.02,
     .kind = RULE_INTERVAL,
     .control = "value_split.control.long.whole_over_one_block",
     .control_what = "Adam-mini with one block for the whole model in neuron's place (its own lr search): a partition "
                     "known to be worse, which a 'not worse' rule must catch",
     .depends = "quick: 400 steps (the paper's long runs: 50k+ steps of GPT-2); 1-layer model, weight decay 0.1",
     .paper_setting = "the paper: GPT-2 runs of tens of thousands of steps; here 100 and 400 steps",
     .paper_scale = "seeds 1-3, before the seed streams were hashed: PASS at paper scale (3,000 steps) against "
        "INCONCLUSIVE at quick scale",
     .alt = {{.choice = "short run length",
              .name = "short50",
              .flags = "--short 50",
              .why = "'small number of total training steps' is not given: 50 steps instead of 100"},
             {.choice = "long run length",
              .name = "long1000",
              .flags = "--steps 1000",
              .why = "'large number of total training steps': 1,000 steps instead of 400"}}},
};

int claim_rules(const claim_rule **out)
{
    *out = RULES;
    return (int)(sizeof RULES / sizeof *RULES);
}

int claim_alt_count(const claim_rule *r)
{
    int n = 0;
    while (n < ALT_MAX && r->alt[n].name) n++;
    return n;
}

const alternative *claim_alt(const claim_rule *r, const char *name)
{
    for (int i = 0; i < claim_alt_count(r); i++)
        if (!strcmp(r->alt[i].name, name)) return &r->alt[i];
    return NULL;
}
