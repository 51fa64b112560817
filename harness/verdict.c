/* Per-run statistics files and the table of claims judged on them. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

outfile *stats_open(const char *dir) { return csv_open_in(dir, "stats.csv", "name,value"); }

void stats_put(outfile *f, const char *name, double value)
{
    if (isnan(value)) csv_row(f, "%s,nan", name);
    else if (isinf(value)) csv_row(f, "%s,%sinf", name, value < 0 ? "-" : "");
    else csv_row(f, "%s,%.17g", name, value);
}

int stats_get(const char *path, const char *name, double *value)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    char line[512];
    size_t n = strlen(name);
    int found = 0;
    while (!found && fgets(line, sizeof line, fp))
        if (strncmp(line, name, n) == 0 && line[n] == ',') {
            char *end;
            double v = strtod(line + n + 1, &end);
            if (end != line + n + 1 && (*end == '\n' || *end == '\0' || *end == '\r')) {
                *value = v;
                found = 1;
            }
        }
    fclose(fp);
    return found;
}

/* ---- the claims ------------------------------------------------------------------------------
 * One table, fixed before the runs: each claim's statistic, threshold, side,
 * kind of test and negative control. Every change after seeing data is listed
 * in docs/verdicts.md with its reason. Sections follow the README's order. */
static const claim_rule RULES[] = {
    /* ---- random quadratics (fig4, fig3) ---- */

    /* ---- the MLP's Hessian (fig2) ---- */

    /* ---- the Transformer's Hessian blocks (fig6, table_kappa, partition_check) ---- */

    /* ---- optimizer memory (table1_memory) ---- */
    {.id = "table1.v_removed",
     .experiment = "table1_memory",
     .paper = "Adam-mini can cut down more than 99.9% of v in Adam",
     .place = "Abstract; Table 1",
     .claim = "at least 99.9% of Adam's v is removed in each of the five models",
     .stat = "table1_memory.min_v_removed_pct",
     .stat_what = "smallest share of Adam's v that Adam-mini removes over the five models, %",
     .side = CLAIM_ABOVE,
     .threshold = 99.9,
     .kind = RULE_INTERVAL,
     .control = "table1_memory.control.min_v_removed_pct",
     .control_what = "the same count for a partition of one block per parameter (Adam's own v): nothing is removed, "
                     "so the rule must reject it",
     .depends = "exact counts from the published shapes; seeds do not enter"},

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
     .place = "Abstract; Sec. 4",
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
                "weight decay 0.1 on both"},
    {.id = "train_compare.adaptive_beats_gd",
     .experiment = "train_compare",
     .paper = "Adam outperforms the optimal single-learning-rate method",
     .place = "Sec. 3.1, finding (1) (on a quadratic; here on the Transformer)",
     .claim = "both AdamW and Adam-mini beat single-lr GD by more than 2% of AdamW's progress",
     .stat = "train_compare.adaptive_margin_over_gd",
     .stat_what = "(L_GD - max(L_AdamW, L_Adam-mini))/(L_0 - L_AdamW), held-out",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "train_compare.control.gd_other_batches_margin",
     .control_what = "GD at the same lr with another batch order in place of AdamW and Adam-mini: it cannot beat "
                     "GD, so a rule that passes it detects batch noise",
     .depends = "GD's lr searched over [1e-4, 1e3]; 300 steps (GD catches up with longer training at paper scale)"},
    {.id = "train_compare.blockgd_beats_gd",
     .experiment = "train_compare",
     .paper = "If we collect these optimal learning rates ... [blockwise GD] would be faster than Adam",
     .place = "Sec. 3.1, finding (3) (one lr per dense block helps GD)",
     .claim = "blockwise GD with the Hessian rule beats single-lr GD by more than 2% of AdamW's progress",
     .stat = "train_compare.blockgd_margin_over_gd",
     .stat_what = "(L_GD - L_blockGD)/(L_0 - L_AdamW), held-out; blockGD eta_b = c/max(|lambda|max(H_bb), median)",
     .side = CLAIM_ABOVE,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "train_compare.control.gd_other_batches_margin",
     .control_what = "GD at the same lr with another batch order in place of blockwise GD (batch noise only)",
     .depends = "the Hessian rule at initialisation on 64 held-out sequences, its floor at the median, c searched"},
    {.id = "exp2.blockgd_vs_adamw",
     .experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient ... block-wise GD outperforms AdamW",
     .place = "Appendix, Exp 2",
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
                "300 steps; momentum and weight decay differ (see the next two claims)"},
    {.id = "exp2.heavy_ball_vs_adamw",
     .experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient",
     .place = "Appendix, Exp 2 (with AdamW's momentum on both sides)",
     .claim = "blockwise heavy ball (AdamW's beta1 = 0.9 momentum, searched per-block lrs) is not worse than AdamW",
     .stat = "exp2.blockhb_excess",
     .stat_what = "(L_blockHB - L_AdamW)/(L_0 - L_AdamW), held-out",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.heavy_ball_excess",
     .control_what = "heavy ball with one searched lr for every parameter (momentum SGD): the same momentum without "
                     "per-block lrs must be rejected",
     .depends = "same search as blockwise GD; AdamW keeps weight decay 0.1, heavy ball has none"},
    {.id = "exp2.blockgd_vs_adam_b1_0",
     .experiment = "exp2_blockwise_gd",
     .paper = "Single learning rate per block is sufficient",
     .place = "Appendix, Exp 2 (without momentum on both sides)",
     .claim = "blockwise GD with searched per-block lrs is not worse than Adam with beta1 = 0 (no weight decay)",
     .stat = "exp2.blockgd_excess_over_adam_b1_0",
     .stat_what = "(L_blockGD - L_Adam(beta1=0))/(L_0 - L_Adam(beta1=0)), held-out",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.gd_excess_over_adam_b1_0",
     .control_what = "GD with one searched lr for every parameter against the same Adam",
     .depends = "beta2 0.999 and eps 1e-8 for Adam; the blockwise GD of the first claim"},
    {.id = "exp2.full_batch",
     .experiment = "exp2_blockwise_gd",
     .paper = "we conduct the \"block-wise GD\" and we grid-search the learning rate for each block",
     .place = "Appendix, Exp 2 (full batch: no batch noise)",
     .claim = "in full batch on a fixed set of sequences, searched blockwise GD reaches AdamW's training loss "
              "within 2% of AdamW's progress",
     .stat = "exp2.full_batch_blockgd_excess",
     .stat_what = "(F_blockGD - F_AdamW)/(F_0 - F_AdamW), F the loss on the fixed training set (the objective)",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "exp2.control.full_batch_gd_excess",
     .control_what = "full-batch GD with one searched lr for every parameter",
     .depends = "quick: 64 sequences (one batch), 300 full-batch steps; its own searches of every lr"},
    {.id = "leave_out.per_tensor",
     .experiment = "leave_out",
     .paper = "Adam (leave-one-out) always performs on par with Adam",
     .place = "Sec. 3.1, Fig. 5(d)",
     .claim = "at least 90% of the tensors, left out alone at their searched lr, end within 2% of Adam's progress",
     .stat = "leave_out.share_on_par",
     .stat_what = "share of tensors whose best leave-one-out run has (L - L_Adam)/(L_0 - L_Adam) < 0.02",
     .side = CLAIM_ABOVE,
     .threshold = 0.9,
     .kind = RULE_INTERVAL,
     .control = "leave_out.control.frozen_share_on_par",
     .control_what = "the share of tensors that are on par when frozen (left out at lr 0): tensors that need no "
                     "training pass trivially, so a rule the frozen share also passes says nothing about one lr",
     .depends = "quick: 2 layers (the paper: 4), no biases, 200 steps; multiplier grids from Adam's step at init"},
    {.id = "leave_out.random_x",
     .experiment = "leave_out",
     .paper = "A similar phenomenon is also observed when we randomly leave out up to three blocks",
     .place = "Sec. 3.1, Fig. 5(a-c)",
     .claim = "x = 1, 2, 3 random tensors left out at their searched lrs all end within 2% of Adam's progress",
     .stat = "leave_out.worst_x_excess",
     .stat_what = "largest (L - L_Adam)/(L_0 - L_Adam) over x = 1, 2, 3 (and draws)",
     .side = CLAIM_BELOW,
     .threshold = 0.02,
     .kind = RULE_INTERVAL,
     .control = "leave_out.control.frozen_worst_x_excess",
     .control_what = "the same tensors frozen (lr 0): if freezing them is also on par, the draw could not test "
                     "whether one lr is enough",
     .depends = "the draws (seeded by --seed); each tensor at its own leave-one-out multiplier (no joint search)"},
    {.id = "ablation.mean_best",
     .experiment = "ablation_vstat",
     .paper = "all these candidates perform worse than mean(v) in Adam-mini",
     .place = "Appendix, Ablation Studies",
     .claim = "mean(g_b^2) beats the best of l2, l1, max and min",
     .stat = "ablation.mean_margin",
     .stat_what = "(min over the others of L_s - L_mean)/(L_0 - L_mean), held-out, each at its best searched lr",
     .side = CLAIM_ABOVE,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "ablation.control.min_margin",
     .control_what = "the same margin for min(g_b^2), the statistic known to be worse (it diverges in the paper's "
                     "figure): a rule that calls it the best is blind",
     .depends = "the statistic acts on the current g_b^2 (Adam-mini keeps no per-coordinate v); 300 steps"},
    {.id = "trajectory.mini_close",
     .experiment = "trajectory",
     .paper = "On a small Transformer, Adam-mini generates similar trajectories to that of AdamW",
     .place = "Sec. 4, Trajectory comparison; appendix: same seed and same learning rate",
     .claim = "at one shared small lr, Adam-mini's normalised distance to AdamW stays below 0.5 along training",
     .stat = "trajectory.mini_max_distance",
     .stat_what = "max over snapshots of |w_X - w_A|/sqrt(|w_X - w_0|^2 + |w_A - w_0|^2) (1: unrelated directions)",
     .side = CLAIM_BELOW,
     .threshold = 0.5,
     .kind = RULE_INTERVAL,
     .control = "trajectory.control.gd_max_distance",
     .control_what = "GD at the same lr (the first version's rule passed it): it hardly moves, so it sits at 1",
     .depends = "peak lr 1e-3 for all (AdamW's best is about 3e-2), 300 steps, snapshots every 15"},
    {.id = "trajectory.mini_closest",
     .experiment = "trajectory",
     .paper = "Adam-mini generates similar trajectories to that of AdamW, while other methods cannot",
     .place = "Sec. 4, Trajectory comparison",
     .claim = "Adam-mini stays closer to AdamW than both Adafactor and SM3 (beta1 0.9) at the shared lr",
     .stat = "trajectory.mini_log_ratio_to_memory_efficient",
     .stat_what = "log(max-distance of Adam-mini / the smaller max-distance of Adafactor and SM3)",
     .side = CLAIM_BELOW,
     .threshold = 0,
     .kind = RULE_INTERVAL,
     .control = "trajectory.control.gd_log_ratio_to_memory_efficient",
     .control_what = "GD in Adam-mini's place: an optimizer the rule must not rank closer than Adafactor and SM3",
     .depends = "Adafactor and SM3 at their defaults (HF, reference code) with beta1 0.9, no weight decay"},
};

int claim_rules(const claim_rule **out)
{
    *out = RULES;
    return (int)(sizeof RULES / sizeof *RULES);
}
