/* Claims on fig4 (the paper's Fig. 4, Sec. 2.1): r = kappa(D_Adam H)/kappa(H) of rotated random
 * matrices falls as tau -> 1; four readings of one sentence. */
#include "verdict/claims/claims.h"

static const claim_family FAMILIES[] = {
    {.experiment = "fig4",
     .paper = "for H_b with most dimension d and kappa(H_b), r decreases as tau -> 1. That is, D_Adam is effective "
              "when H_b is close to diagonal, and D_Adam is not so effective when H_b is dense",
     .place = "Sec. 2.1, Fig. 4",
     .control_what = "the same share with D = diag(1/|z|), z ~ N(0, I) drawn independently of H (seeded): a diagonal "
                     "scaling that knows nothing of H, the natural null for 'D_Adam, made from g = Hx, helps as tau "
                     "-> 1'. It can pass: kappa(DH) grows as H gets dense for any D when kappa(H) is large (seed 1: "
                     "9 of 11 curves fall with it too), which is what the rule must tell apart from D_Adam",
     .depends = "8 theta x 20 x x 51 R per curve at quick scale (40 x 100 x 51 at paper scale); the 11 (d, kappa) "
                "curves, the (50, 500) one counted in both panels; rho threshold -0.5; the whole R range k/50 (tau "
                "is not monotone in R: R = 0..R* alone was the first version's rule, kept as a reference in "
                "stats.csv)",
     .holm = "fig4",
     .after_data = "the R range was widened from R <= R* to every R knowing the first version's seed-1 rho over all "
                   "R; the four readings became claims after the reviewers reported them; the control (D from a "
                   "random z, knowing nothing of H) replaced the tau-shuffle control, which was 0 on every seed by "
                   "construction, after a review",
     .alt = {{.choice = "R range",
              .name = "rstar",
              .why = "'r decreases as tau -> 1' can be read on the branch where tau returns to 1, R <= R* (tau falls "
                     "from 1 to its minimum as R grows), instead of over every R: tau is not monotone in R"},
             {.choice = "draws per matrix",
              .name = "paper_counts",
              .flags = "--thetas 40 --points 100",
              .why = "the paper's own counts: 40 angle draws and 100 points x per matrix (quick scale: 8 and 20)"}},
     .reading = {{.id = "fig4.falls_a_median",
                   .claim = "for more than half of the curves r falls as tau -> 1 over the whole R range (kappa by "
                            "eigenvalues of D^1/2 H D^1/2, median r)",
                   .stat = "fig4.share_falling.a_median",
                   .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho "
                                "between the mean tau and the median of r (kappa by the eigenvalues of D^1/2 H "
                                "D^1/2) over all 51 R is <= -0.5",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "fig4.control.share_falling.a_median",
                   .alt = {{"rstar", "fig4.share_falling_rstar.a_median",
                            "fig4.control.share_falling_rstar.a_median"}}},
                  {.id = "fig4.falls_b_median",
                   .claim = "robustness of fig4.falls_a_median: the same with kappa by the singular values of DH",
                   .stat = "fig4.share_falling.b_median",
                   .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho "
                                "between the mean tau and the median of r (kappa by the singular values of DH) over "
                                "all 51 R is <= -0.5",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "fig4.control.share_falling.b_median",
                   .alt = {{"rstar", "fig4.share_falling_rstar.b_median",
                            "fig4.control.share_falling_rstar.b_median"}}},
                  {.id = "fig4.falls_a_mean",
                   .claim = "robustness of fig4.falls_a_median: the same with the mean of r per R (the paper's "
                            "averaging)",
                   .stat = "fig4.share_falling.a_mean",
                   .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho "
                                "between the mean tau and the mean of r (kappa by the eigenvalues of D^1/2 H D^1/2) "
                                "over all 51 R is <= -0.5",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "fig4.control.share_falling.a_mean",
                   .alt = {{"rstar", "fig4.share_falling_rstar.a_mean",
                            "fig4.control.share_falling_rstar.a_mean"}}},
                  {.id = "fig4.falls_b_mean",
                   .claim = "robustness of fig4.falls_a_median: singular values of DH and the mean of r per R",
                   .stat = "fig4.share_falling.b_mean",
                   .stat_what = "share of the 11 curves (6 d at kappa = 500, 5 kappa at d = 50) whose Spearman rho "
                                "between the mean tau and the mean of r (kappa by the singular values of DH) over "
                                "all 51 R is <= -0.5",
                   .side = CLAIM_ABOVE,
                   .threshold = 0.5,
                   .kind = RULE_SHARE,
                   .control = "fig4.control.share_falling.b_mean",
                   .alt = {{"rstar", "fig4.share_falling_rstar.b_mean",
                            "fig4.control.share_falling_rstar.b_mean"}}}}},
};
const claim_file claims_fig4 = CLAIM_FILE(FAMILIES);
