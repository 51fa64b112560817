/* block_structure — the block structure of the tiny Transformer's Hessian
 * (or the Llama-style model's: --model llama), tensor by tensor, through early
 * training (steps 0 to 100).
 *
 * Trains the fig6 setup once (the same flags give the same run: AdamW, 1,000
 * steps, the model registry's checkpoints, harness/models.h) with checkpoints at --at-steps (default
 * 0, 1, 2, 5, 10, 20, 50, 100; 0 is the initialisation, 1 the paper's text
 * "after 1 training step", 10 its caption "at 1% training step" and fig6's H),
 * takes the exact H at each on the fixed Hessian batch, and for every tensor
 * and candidate split writes the old statistic (the mass ratio with the
 * diagonal and its exact random mean) and the ones without the diagonal
 * (hessian/hessian.h: off-diagonal share, chance, excess e; the blocks' own
 * excess; e on the tensor's H_tt randomly permuted, the negative control),
 * with Principle 1's pick (principle1_pick at level 1/2).
 *
 * The question: when, if ever, are attn.proj, mlp.proj and
 * mlp.fc_1 block-diagonal by output neuron together? Statistic: the largest,
 * over the steps, of the smallest excess of the three (stats.csv); the
 * control takes the same max-min on the permuted H_tt, so it carries the
 * same selection over steps.
 *
 * Outputs in --out: structure.csv (step × tensor × split), claimed.csv (step ×
 * the eight Fig. 6 blocks, their claimed split), steps.csv (per step: loss on
 * the Hessian batch; the seconds go to run.txt), train/, stats.csv, claims.txt.
 * --bands-of DIR,DIR,... (no training): the seed bands of claimed.csv over
 * those runs into --out/bands.csv (mean, min, max and 95% t-interval of each
 * block's excess per step) for plots/block_structure.gp.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/models.h"
#include "harness/seeds.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL 0.5   /* the excess that counts as block-diagonal (the claims' threshold, docs/verdicts.md) */
#define NEURON_BLOCKS 3
static const int NEURONS[NEURON_BLOCKS] = {3, 4, 5};   /* attn.proj, mlp.fc_1, mlp.proj in FIG6_BLOCKS (the
                                                          Llama's o_proj, gate_proj, down_proj) */

typedef struct {
    model_cli mc;
    int_list at;
    const char *out, *bands_of;
    model_ckpt k;              /* the model at the current step, on the Hessian batch */
    double *H;                 /* (P,P) there */
    double loss, hess_seconds; /* there */
    gsl_rng *perm_rng;
    outfile *structure, *claimed, *steps;
    /* per step: the claimed split's excess of each Fig. 6 block, on H and on the permuted H_tt */
    double excess[LIST_MAX][FIG6_NBLOCKS], perm_excess[LIST_MAX][FIG6_NBLOCKS];
} run;

/* ---- one step --------------------------------------------------------------------------------- */

/* Every candidate split of tensor t at this step; returns the claimed split's
 * excess on H_tt and on its permutation when `claimed` is one of them. */
static void tensor_rows(run *r, long step, int t, split_kind claimed, double *e, double *e_perm)
{
    const model *m = r->k.m;
    const tensor_info *ti = &m->tensors[t];
    size_t n = tensor_size(ti);
    double *Htt = tensor_hessian(r->H, m->P, m, t);
    double *Hperm = sym_permuted(Htt, n, r->perm_rng);
    split_candidates c, cp;
    split_candidates_of(Htt, m, t, &c);
    split_candidates_of(Hperm, m, t, &cp);
    int pick = principle1_pick(Htt, m, t, &c, LEVEL, NULL);
    for (int i = 0; i < c.n; i++) {
        const offdiag_stats *st = &c.st[i];
        partition *p = tensor_local_partition(m, t, c.split[i]);
        double *eb = xmalloc((size_t)p->nblocks * sizeof(double));
        offdiag_block_excess(Htt, n, p, eb);
        double bmin = eb[0];
        for (int b = 1; b < p->nblocks; b++) bmin = fmin(bmin, eb[b]);
        double bmed = median_of(eb, p->nblocks);
        /* the old statistic's random mean, exactly: (D + qO)/(D + O) */
        double total = st->diag + st->offdiag;
        double rand = total > 0 ? (st->diag + st->chance * st->offdiag) / total : 1;
        csv_row(r->structure, "%ld,%s,%s,%s,%s,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%d",
                step, ti->name, role_name(ti->role), split_name(c.split[i]), split_meaning(ti, c.split[i]),
                c.nblocks[i], c.mass[i], rand, st->share, st->chance, st->excess, bmin, bmed, cp.st[i].excess,
                c.hold[i], cp.hold[i], c.diag_share, i == pick);
        if (c.split[i] == claimed) {
            *e = st->excess;
            *e_perm = cp.st[i].excess;
        }
        free(eb);
        partition_free(p);
    }
    free(Hperm);
    free(Htt);
}

static void analyse_step(run *r, int k, long step)
{
    const model *m = r->k.m;
    int *fig6_of = xmalloc((size_t)m->ntensors * sizeof(int));   /* tensor -> Fig. 6 block, or -1 */
    for (int t = 0; t < m->ntensors; t++) fig6_of[t] = -1;
    for (int b = 0; b < FIG6_NBLOCKS; b++) fig6_of[fig6_tensor(m, 0, b)] = b;
    for (int t = 0; t < m->ntensors; t++) {
        int b = fig6_of[t];
        double e = NAN, ep = NAN;
        tensor_rows(r, step, t, b >= 0 ? FIG6_BLOCKS[b].claimed : SPLIT_COUNT, &e, &ep);
        if (b < 0) continue;
        r->excess[k][b] = e;
        r->perm_excess[k][b] = ep;
        csv_row(r->claimed, "%s,%ld,%d,%.10g,%.10g", FIG6_BLOCKS[b].key, step, k, e, ep);
    }
    free(fig6_of);
    csv_row(r->steps, "%ld,%.10g", step, r->loss);
    run_note("hessian seconds at step %ld: %.4f", step, r->hess_seconds);
    if (!core_quiet)
        fprintf(stderr, "block_structure: step %ld, loss %.4f, H in %.2f s; excess attn.proj %.3f, mlp.fc_1 %.3f, "
                        "mlp.proj %.3f\n", step, r->loss, r->hess_seconds, r->excess[k][3], r->excess[k][4],
                r->excess[k][5]);
}

/* ---- claims ----------------------------------------------------------------------------------- */

/* The smallest excess of attn.proj, mlp.fc_1 and mlp.proj at step k. */
static double neurons_min(double (*e)[FIG6_NBLOCKS], int k)
{
    double v = INFINITY;
    for (int i = 0; i < NEURON_BLOCKS; i++) v = fmin(v, e[k][NEURONS[i]]);
    return v;
}

static double max_over_steps(run *r, double (*e)[FIG6_NBLOCKS], int *argmax)
{
    double best = -INFINITY;
    for (int k = 0; k < r->at.n; k++)
        if (neurons_min(e, k) > best) best = neurons_min(e, k), *argmax = k;
    return best;
}

static void write_results(run *r)
{
    int kbest = 0, kperm = 0;
    double best = max_over_steps(r, r->excess, &kbest), pbest = max_over_steps(r, r->perm_excess, &kperm);
    outfile *f = stats_open(r->out);
    stats_put(f, "block_structure.neurons_together.max_min_excess", best);
    stats_put(f, "block_structure.control.neurons_together.max_min_excess", pbest);
    stats_put(f, "block_structure.neurons_together.best_step", (double)r->at.v[kbest]);
    for (int k = 0; k < r->at.n; k++) {
        char name[96];
        snprintf(name, sizeof name, "block_structure.step%d.neurons_min_excess", r->at.v[k]);
        stats_put(f, name, neurons_min(r->excess, k));
        for (int b = 0; b < FIG6_NBLOCKS; b++) {
            snprintf(name, sizeof name, "block_structure.step%d.%s.excess", r->at.v[k], FIG6_BLOCKS[b].key);
            stats_put(f, name, r->excess[k][b]);
        }
    }
    csv_close(f);

    outfile *o = outfile_open_in(r->out, "claims.txt");
    FILE *fp = outfile_fp(o);
    fprintf(fp, "%s: attn.proj, mlp.fc_1 and mlp.proj are block-diagonal by output neuron together at some step "
                "<= %d (paper Fig. 6 d-f, class 2, at 1%% of training): the largest over the steps of the smallest "
                "off-diagonal excess of the three is %.3f, at step %d (permuted H_tt: %.3f)\n",
            best >= LEVEL ? "PASS" : "FAIL", r->at.v[r->at.n - 1], best, r->at.v[kbest], pbest);
    fprintf(fp, "per step (attn.proj / mlp.fc_1 / mlp.proj):");
    for (int k = 0; k < r->at.n; k++)
        fprintf(fp, "%s %d: %.3f / %.3f / %.3f", k ? ";" : "", r->at.v[k], r->excess[k][3], r->excess[k][4],
                r->excess[k][5]);
    fprintf(fp, "\nrule: PASS iff at some step all three have an off-diagonal excess e = (s - q)/(1 - q) >= %.2f "
                "(s = share of H_tt's off-diagonal squared mass inside the output-neuron blocks, q = its exact mean "
                "for random blocks of the same sizes; 0 random, 1 block-diagonal); the control takes the same "
                "max over steps of the min over the three on each H_tt randomly permuted\n", LEVEL);
    const ckpt_cli *c = &r->mc.cli;
    fprintf(fp, "context: %s, P = %zu; AdamW lr %g cosine, %ld steps of %d sequences; H on %d fixed sequences; loss "
                "on them %.4f at init\n", model_ckpt_what(&r->k), r->k.m->P, c->lr, c->steps, c->batch, c->hess_batch,
            r->k.loss0);
    outfile_commit(o);
}

/* ---- the run ---------------------------------------------------------------------------------- */

static void check_steps(const run *r)
{
    long steps = r->mc.cli.steps;
    if (r->at.n < 1 || r->at.n > TT_MAX_CHECKPOINTS)
        die_user("--at-steps must list 1 to %d steps (got %d)", TT_MAX_CHECKPOINTS, r->at.n);
    for (int k = 0; k < r->at.n; k++) {
        if (r->at.v[k] < 0 || r->at.v[k] > steps)
            die_user("--at-steps: step %d is outside 0..%ld (--steps)", r->at.v[k], steps);
        if (k && r->at.v[k] <= r->at.v[k - 1]) die_user("--at-steps must increase (got %d after %d)", r->at.v[k],
                                                        r->at.v[k - 1]);
    }
    if (r->at.v[r->at.n - 1] < 1) die_user("--at-steps needs a step after initialisation (>= 1)");
}

/* --model tt or llama with --at-steps as the checkpoints' fractions of training (0: the initialisation). */
static void check_model(run *r)
{
    const char *name = r->mc.model_name;
    const model_kind *kind = model_kind_named(name);
    if (!kind) die_user("--model: block_structure trains its model: tt or llama (got '%s')", name);
    llama_cli_refuse_unused(&r->mc.llama, kind == &MODEL_LLAMA);
    ckpt_cli_check_run(&r->mc.cli); /* --steps first: the fractions divide by it */
    check_steps(r);
    double fracs[TT_MAX_CHECKPOINTS];
    for (int k = 0; k < r->at.n; k++) fracs[k] = (double)r->at.v[k] / r->mc.cli.steps;
    for (int k = 0; k < r->at.n; k++)
        if (r->at.v[k] > 0 && checkpoint_step(fracs[k], r->mc.cli.steps) != r->at.v[k])
            DIE("step %d is not a checkpoint of %ld steps", r->at.v[k], r->mc.cli.steps);
    model_ckpt_check_at(&r->k, &r->mc, name, fracs, r->at.n);
    model_ckpt_start(&r->k); /* the model, not trained: its tensors, before any output */
    for (int b = 0; b < FIG6_NBLOCKS; b++)
        if (fig6_tensor(r->k.m, 0, b) < 0) die_user("--model %s: not a Transformer (no %s tensor)", name,
                                                    FIG6_BLOCKS[b].key);
}

/* H and the loss at the model's current parameters, on the Hessian batch. */
static void take_hessian(run *r)
{
    free(r->H);
    r->loss = r->k.m->loss(r->k.m);
    double t0 = wall_seconds();
    r->H = model_ckpt_hessian(&r->k);
    r->hess_seconds = wall_seconds() - t0;
}

static void run_steps(run *r)
{
    r->structure = csv_open_in(r->out, "structure.csv", "step,tensor,role,split,meaning,blocks,mass_ratio,random_mass_ratio,"
                               "offdiag_share,chance,excess,block_excess_min,block_excess_median,perm_excess,score,"
                               "perm_score,diag_share,principle1");
    r->claimed = csv_open_in(r->out, "claimed.csv", "block,step,step_index,excess,perm_excess");
    r->steps = csv_open_in(r->out, "steps.csv", "step,hessian_batch_loss");
    int from = r->at.v[0] == 0;
    if (from) {
        take_hessian(r);
        analyse_step(r, 0, 0);
    }
    char *train_dir = path_join(r->out, "train");
    double t0 = wall_seconds();
    model_ckpt_train(&r->k, train_dir);
    double train_seconds = wall_seconds() - t0;
    for (int k = from; k < r->at.n; k++) {
        model_ckpt_load(&r->k, k);
        take_hessian(r);
        analyse_step(r, k, r->at.v[k]);
    }
    free(train_dir);
    csv_close(r->structure);
    csv_close(r->claimed);
    csv_close(r->steps);
    run_note("train seconds: %.3f", train_seconds);
    write_results(r);
}

/* ---- seed bands over several runs (--bands-of) --------------------------------------------------- */

#define BAND_STEPS LIST_MAX
typedef struct {
    int nstep, nrun;
    long step[BAND_STEPS];
    double e[FIG6_NBLOCKS][BAND_STEPS][LIST_MAX], ep[FIG6_NBLOCKS][BAND_STEPS][LIST_MAX];
} bands;

static int block_index(const char *key)
{
    for (int b = 0; b < FIG6_NBLOCKS; b++) if (strcmp(FIG6_BLOCKS[b].key, key) == 0) return b;
    return -1;
}

/* One run's claimed.csv into column `run` of bd; its steps must be the first run's. */
static void read_claimed(const char *dir, int run_i, bands *bd)
{
    char *path = path_join(dir, "claimed.csv");
    FILE *fp = fopen(path, "r");
    if (!fp) die_user("--bands-of: cannot read %s", path);
    char line[512];
    int rows = 0, seen[FIG6_NBLOCKS][BAND_STEPS] = {{0}};
    if (!fgets(line, sizeof line, fp) || strncmp(line, "block,step,step_index,excess,perm_excess", 40) != 0)
        die_user("--bands-of: %s is not a block_structure claimed.csv", path);
    while (fgets(line, sizeof line, fp)) {
        char key[64];
        long step;
        int k;
        double e, ep;
        if (sscanf(line, "%63[^,],%ld,%d,%lf,%lf", key, &step, &k, &e, &ep) != 5)
            die_user("--bands-of: %s: malformed row %d", path, rows + 2);
        int b = block_index(key);
        if (b < 0 || k < 0 || k >= BAND_STEPS) die_user("--bands-of: %s: unknown block or step in row %d", path, rows + 2);
        if (run_i == 0) {
            if (k >= bd->nstep) bd->nstep = k + 1;
            bd->step[k] = step;
        } else if (k >= bd->nstep || bd->step[k] != step) {
            die_user("--bands-of: %s has other steps than the first run", path);
        }
        bd->e[b][k][run_i] = e;
        bd->ep[b][k][run_i] = ep;
        seen[b][k]++;
        rows++;
    }
    fclose(fp);
    for (int b = 0; b < FIG6_NBLOCKS; b++)
        for (int k = 0; k < bd->nstep; k++)
            if (seen[b][k] != 1) die_user("--bands-of: %s: block %s at step index %d appears %d times", path,
                                          FIG6_BLOCKS[b].key, k, seen[b][k]);
    free(path);
}

static void write_bands(const char *list, const char *out)
{
    bands *bd = xcalloc(1, sizeof *bd);
    char *copy = xstrdup(list), *save = NULL;
    for (char *dir = strtok_r(copy, ",", &save); dir; dir = strtok_r(NULL, ",", &save)) {
        if (bd->nrun == LIST_MAX) die_user("--bands-of: at most %d runs", LIST_MAX);
        read_claimed(dir, bd->nrun++, bd);
    }
    free(copy);
    if (bd->nrun == 0) die_user("--bands-of: no run folder given");
    outfile *f = csv_open_in(out, "bands.csv", "block,step,step_index,runs,mean,min,max,lo,hi,perm_mean,perm_min,perm_max");
    for (int b = 0; b < FIG6_NBLOCKS; b++)
        for (int k = 0; k < bd->nstep; k++) {
            const double *x = bd->e[b][k], *xp = bd->ep[b][k];
            double lo = x[0], hi = x[0], plo = xp[0], phi = xp[0], pm = 0;
            for (int i = 0; i < bd->nrun; i++) {
                lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
                plo = fmin(plo, xp[i]), phi = fmax(phi, xp[i]);
                pm += xp[i] / bd->nrun;
            }
            interval iv = t_interval(x, bd->nrun, 0.95);
            /* one run: no interval, the band is the value itself */
            double ilo = bd->nrun > 1 ? iv.lo : iv.mean, ihi = bd->nrun > 1 ? iv.hi : iv.mean;
            csv_row(f, "%s,%ld,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", FIG6_BLOCKS[b].key, bd->step[k], k,
                    bd->nrun, iv.mean, lo, hi, ilo, ihi, pm, plo, phi);
        }
    csv_close(f);
    free(bd);
}

int main(int argc, char **argv)
{
    run r = {0};
    model_cli_init(&r.mc);
    r.out = "results/block_structure";
    r.at = (int_list){8, {0, 1, 2, 5, 10, 20, 50, 100}};
    const cli_opt opts[] = {
        {"model", OPT_STRING, &r.mc.model_name, "tt (the tiny Transformer) or llama (the Llama-style model: the same "
                                                "sizes and --llama-*)"},
        CKPT_CLI_RUN_OPTS(&r.mc.cli),
        LLAMA_CLI_OPTS(&r.mc.llama),
        {"at-steps", OPT_INT_LIST, &r.at, "steps at which H is taken, increasing (0: at initialisation)"},
        {"bands-of", OPT_STRING, &r.bands_of, "run folders, comma-separated: write their seed bands (bands.csv) only"},
        {"out", OPT_STRING, &r.out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Block structure of the tiny Transformer's Hessian per tensor through early training: the fig6\n"
              "setup (AdamW, 1,000 steps) with H at --at-steps (default 0, 1, 2, 5, 10, 20, 50, 100), and per\n"
              "tensor and split the mass ratio with the diagonal (old) and the off-diagonal excess e (0: random\n"
              "blocks, 1: block-diagonal) with the same on a randomly permuted H_tt (control). Claim: attn.proj,\n"
              "mlp.fc_1 and mlp.proj are block-diagonal by output neuron (e >= 0.5) together at some step.\n"
              "--model llama: the Llama-style model (o_proj, gate_proj and down_proj for the three).\n"
              "--bands-of DIR,DIR,...: the seed bands of those runs' claimed.csv into --out/bands.csv.",
              opts, sizeof opts / sizeof *opts);
    if (r.bands_of) {
        output_keep_previous(); /* bands.csv joins a run's folder (make figures: the run it reads) */
        ensure_dir(r.out);
        write_bands(r.bands_of, r.out);
        return 0;
    }
    check_model(&r);
    ensure_dir(r.out);
    r.perm_rng = rng_new(seed_for((unsigned long)r.mc.cli.seed, SEED_DRAWS));
    run_steps(&r);
    run_write_info(r.out, (unsigned long)r.mc.cli.seed);
    rng_free(r.perm_rng);
    free(r.H);
    model_ckpt_free(&r.k);
    model_cli_free(&r.mc);
    return 0;
}
