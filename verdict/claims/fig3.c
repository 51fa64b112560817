/* Claims on fig3 (the paper's Fig. 3, Sec. 2.1): the three findings on the three-block quadratic,
 * one family each. */
#include "verdict/claims/claims.h"

#define DEPENDS \
    "1000 steps from w0 ~ N(0, I); blocks of 30 with eigenvalues from {1,2,3}, {99,100,101}, {4998,4999,5000}; " \
    "Adam beta1 = 0, beta2 -> 1, eps 1e-8, lr the best mean log10 loss of a grid from 17 points in [1e-4, 1] " \
    "that extends at its edges; the floor 1e-300 f(w0) sets the size of a gap once a run underflows, not its " \
    "sign"
#define AFTER_DATA \
    "the mean-log-loss gap and the sign test were chosen after a prototype run of seeds 1-5 that printed the " \
    "gaps"
#define STEPS300 \
    {.choice = "horizon", \
     .name = "steps300", \
     .flags = "--steps 300", \
     .why = "the paper's Fig. 3 shows whole curves without a point of comparison; over 300 steps the early phase " \
            "weighs more"}
#define STEPS3000 \
    {.choice = "horizon", \
     .name = "steps3000", \
     .flags = "--steps 3000", \
     .why = "the same open choice, longer: over 3,000 steps the underflowing blocks weigh more"}
#define GRID9 \
    {.choice = "Adam's lr grid", \
     .name = "grid9", \
     .flags = "--lr-points 9", \
     .why = "the paper grid-searches Adam's lr without giving the grid; a first grid of 9 points instead of 17"}

static const claim_family FAMILIES[] = {
    {.experiment = "fig3",
     .paper = "Adam outperforms the optimal single-learning-rate method",
     .place = "Sec. 2.1, finding (1), Fig. 3(a-b)",
     .control_what = "the same gap on a homogeneous H whose three blocks all draw eigenvalues from {1,2,3}: no block "
                     "needs its own learning rate, one step 2/(L+mu) is near-optimal (kappa 3), so Adam must not "
                     "beat it and the rule must reject it",
     .depends = DEPENDS,
     .after_data = AFTER_DATA,
     .alt = {STEPS300, STEPS3000, GRID9},
     .reading = {{.id = "fig3.adam_beats_gd",
                   .claim = "Adam (best lr) reaches lower loss than GD at 2/(L+mu) on the three-block H, on average "
                            "over the run",
                   .stat = "fig3.gap.adam_gd.full",
                   .stat_what = "mean over the run of log10(max(f_t/f_0, 1e-300)) of Adam minus that of GD on H, "
                                "decades (negative: Adam lower)",
                   .side = CLAIM_BELOW,
                   .threshold = 0,
                   .kind = RULE_SIGN,
                   .control = "fig3.control.gap.adam_gd.homogeneous"}}},
    {.experiment = "fig3",
     .paper = "We consider the optimal single learning-rate method for this new problem and find it outperforms Adam",
     .place = "Sec. 2.1, finding (2), Fig. 3(c-d)",
     .control_what = "the same gap on a diagonal 30x30 block with ten eigenvalues from each of the three sets (kappa "
                     "~ 5000): Adam's per-coordinate steps undo the spread that limits one step, so one step must "
                     "not beat Adam and the rule must reject it (a diagonal H1 with kappa 3 is no control: one step "
                     "wins there too)",
     .depends = DEPENDS,
     .after_data = "the mean-log-loss gap and the sign test were chosen after a prototype run of seeds 1-5 that "
                   "printed the gaps; the control was changed after the prototype (the diagonal H1 could not be a "
                   "negative control)",
     .alt = {STEPS300, STEPS3000, GRID9},
     .reading = {{.id = "fig3.gd_beats_adam_h1",
                   .claim = "GD at 2/(L+mu) of the dense block H1 reaches lower loss than Adam (best lr) on H1 "
                            "alone, on average over the run",
                   .stat = "fig3.gap.gd_adam.h1",
                   .stat_what = "mean over the run of log10(max(f_t/f_0, 1e-300)) of GD minus that of Adam on H1, "
                                "decades (negative: GD lower)",
                   .side = CLAIM_BELOW,
                   .threshold = 0,
                   .kind = RULE_SIGN,
                   .control = "fig3.control.gap.gd_adam.diag_spread"}}},
    {.experiment = "fig3",
     .paper = "If we collect these optimal learning rates in (2) and apply them to a blockwise version of GD, it "
              "would be faster than Adam on the original problem",
     .place = "Sec. 2.1, finding (3), Fig. 3(b)",
     .control_what = "the same gap for blockwise GD on a random partition of the 90 coordinates into three blocks of "
                     "30, each at 2/(L+mu) of its principal submatrix: every such block mixes all three scales, so "
                     "its step is limited like GD's and the rule must reject it",
     .depends = DEPENDS,
     .after_data = AFTER_DATA,
     .alt = {STEPS300, STEPS3000, GRID9},
     .reading = {{.id = "fig3.blockgd_beats_adam",
                   .claim = "blockwise GD with 2/(L_l+mu_l) on H's three blocks reaches lower loss than Adam (best "
                            "lr) on H, on average over the run",
                   .stat = "fig3.gap.blockgd_adam.full",
                   .stat_what = "mean over the run of log10(max(f_t/f_0, 1e-300)) of blockwise GD minus that of Adam "
                                "on H, decades (negative: blockwise GD lower)",
                   .side = CLAIM_BELOW,
                   .threshold = 0,
                   .kind = RULE_SIGN,
                   .control = "fig3.control.gap.blockgd_random_adam.full"}}},
    {.experiment = "fig3",
     .paper = "Similar phenomena apply to all the three sub-blocks of (a)",
     .place = "Sec. 2.1, finding (2), Fig. 3(c-d)",
     .control_what = "the same gap on a diagonal 30x30 block with ten eigenvalues from each of the three sets (kappa "
                     "~ 5000), the control of finding (2): one step must not beat Adam there",
     .depends = DEPENDS "; H1, H2 and H3 alone, each with the w0 entries of its block; the worst block decides",
     .after_data = "H2 and H3 were added after the review (issue 26) noted that only H1 was tested; the rule is "
                   "finding (2)'s, unchanged",
     .alt = {STEPS300, STEPS3000, GRID9},
     .reading = {{.id = "fig3.gd_beats_adam_all_blocks",
                   .claim = "on each of H1, H2 and H3 alone, GD at 2/(L+mu) of the block reaches lower loss than "
                            "Adam (best lr), on average over the run",
                   .stat = "fig3.gap.gd_adam.worst_block",
                   .stat_what = "the largest over H1, H2, H3 of GD's mean log10 loss minus Adam's on the block "
                                "alone, decades (negative: GD lower on all three)",
                   .side = CLAIM_BELOW,
                   .threshold = 0,
                   .kind = RULE_SIGN,
                   .control = "fig3.control.gap.gd_adam.diag_spread"}}},
    {.experiment = "fig3",
     .paper = "D_Adam is not so effective when H_b is dense. This aligns with the convergence rates in Figure 3",
     .place = "Sec. 2.1, Fig. 3 and Fig. 4",
     .control_what = "the same with r from D = diag(1/|z|), z ~ N(0, I) (a diagonal scaling blind to H; Fig. 4's "
                     "control): it passes when such a D happens to help on H and hurt on the blocks exactly where "
                     "Adam wins and loses, so an alignment it shows too says nothing of D_Adam",
     .depends = DEPENDS "; r = kappa(D H)/kappa(H) by the eigenvalues of D^1/2 H D^1/2, the median over 20 points x "
                "~ N(0, 1/sqrt(d)) with D from g = Hx (Fig. 4's recipe), on H and on H1, H2, H3; 'aligns' read as: "
                "on all four problems Adam beats GD exactly where r < 1",
     .after_data = "added after the review (issue 26); the rule (all four aligned, a 0/1 share per seed pooled over "
                   "seeds) was written knowing seed 1's r (H 0.07, H1 34, H2 101, H3 63)",
     .alt = {STEPS300, STEPS3000, GRID9},
     .reading = {{.id = "fig3.aligned",
                   .claim = "in more than half of the seeds, Adam beats GD on H, H1, H2 and H3 exactly where Fig. "
                            "4's r < 1",
                   .stat = "fig3.aligned",
                   .stat_what = "1 when on each of H, H1, H2, H3 Adam's mean log10 loss is below GD's exactly when "
                                "r < 1, else 0 (a share of one item per seed, pooled over seeds)",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "fig3.control.aligned"}}},
};
const claim_file claims_fig3 = CLAIM_FILE(FAMILIES);
