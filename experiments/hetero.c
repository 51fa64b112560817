/* hetero — block heterogeneity of the Hessian: the tiny Transformer (or the
 * Llama-style model: --model llama) against the MLP.
 *
 * The paper (Sec. 2.1, after zhang2024transformers): Transformers "exhibit
 * Hessian-block heterogeneity, i.e., the Hessian of different parameter blocks
 * have dramatically different eigenvalue distributions"; for CNNs "the
 * eigenvalue distributions are similar among blocks" (App., restating their
 * Fig. 3). That is why a learning rate per block is needed.
 *
 * The exact spectrum of every Algorithm 3 block H_bb (one block per head of
 * query/key, per output neuron of value, attn.proj and the MLP layers, per
 * token of embed/output, one per position table, LayerNorm and bias tensor; for
 * the MLP one per neuron of each layer and the output bias) of
 *   the tiny Transformer — the fig6 setup (same flags, same training, H on the
 *     fixed held-out batch) at initialisation, --checkpoint (1%) and the end;
 *     --model llama: the Llama-style model in its place (the same training;
 *     its results keep the Transformer's name, tt, in files and statistics);
 *   the MLP — partition_check --model mlp's (49-8-10 tanh on Fashion-MNIST
 *     pooled 4x4, Adam, H on 1,000 test images) at the same three points.
 * Per block h_b = log10 |λ|max(H_bb) (hetero_util.h: group_log_absmax); blocks
 * with no curvature beyond round-off (the key bias, which softmax ignores) are
 * left out and counted. The heterogeneity of a model: S = sd of h_b over its
 * blocks, in decades (scale-free). Its decomposition by block type (role and
 * split: "query head", "mlp_fc output neuron", ...): eta2 = share of the
 * variance of h_b between the types.
 * Random partitions: the same block sizes laid on a random permutation of the
 * kept blocks' parameters (S_rand: S averaged over --reps draws): they keep H,
 * the sizes and the counts, and lose only which parameters form a block.
 * Claim 1: D = S_tt − S_mlp > 0 at every point (min over the three); control:
 * the same difference of S_rand. Claim 2, the comparison made fair for block
 * sizes and counts: log2(S/S_rand) of the Transformer minus the MLP's > 0 at
 * every point; control: one more random partition in place of Algorithm 3's.
 *
 * Outputs in --out: blocks.csv (model × point × block: type, size, λmin,
 * λmax, |λ|max, negatives, h_b, the control partition's h at its position),
 * eigs.csv (every eigenvalue), density_<model>_<point>.csv (density of
 * log10(|λ|/λref) per type, λref the largest |λ| of the model's blocks there),
 * summary.csv (model × point: S, IQR, eta2, S_rand and its eta2, the control
 * partition's S, S over Algorithm 2's blocks (tensors)), stats.csv,
 * claims.txt, tt_train/.
 */
#include "core/core.h"
#include "core/model.h"
#include "experiments/hetero_util.h"
#include "harness/groups.h"
#include "harness/mlp_ckpt.h"
#include "harness/models.h"
#include "harness/seeds.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NMODELS 2
#define NPOINTS 3
static const char *MODELS[NMODELS] = {"tt", "mlp"};
static const char *POINTS[NPOINTS] = {"init", "checkpoint", "end"};
/* A block with ‖H_bb‖_F below ZERO_REL of the blocks' total has no curvature beyond round-off. */
#define ZERO_REL 1e-12
/* Densities: log10(|λ|/λref) in [DENS_LO, 0] in bins of DENS_W decades; smaller |λ| count as zero. */
#define DENS_LO (-14.0)
#define DENS_W 0.5
#define DENS_N 28
#define MAX_TYPES 32

typedef struct {
    model_cli mc;              /* --model: the Transformer; the MLP's flags are mc.mlp */
    const char *out;
    int reps;
    model_ckpt k;              /* the Transformer */
    mlp_ckpt_setup ms;
    gsl_rng *rng;
    outfile *blocks, *eigs, *summary;
    hetero_stats st[NMODELS][NPOINTS];
    spread_stats alg2[NMODELS][NPOINTS];
    long step[NMODELS][NPOINTS];
} run;

typedef struct {
    int n;
    char name[MAX_TYPES][BLOCK_TYPE_LEN];
} type_table;

/* ---- one model at one point --------------------------------------------------------------------- */

static void write_density(run *r, int mi, int k, const index_groups *g, const double *w, const int *type,
                          const type_table *tt)
{
    double ref = 0;
    for (size_t i = 0; i < g->off[g->ngroups]; i++) ref = fmax(ref, fabs(w[i]));
    double (*count)[DENS_N] = xcalloc((size_t)tt->n, sizeof *count);
    double *total = xcalloc((size_t)tt->n, sizeof(double));
    for (int b = 0; b < g->ngroups; b++)
        for (size_t e = g->off[b]; e < g->off[b + 1]; e++) {
            double x = ref > 0 ? log10(fabs(w[e]) / ref) : -INFINITY;
            if (!(x >= DENS_LO)) continue;   /* zero to round-off */
            int bin = (int)((x - DENS_LO) / DENS_W);
            count[type[b]][bin < DENS_N ? bin : DENS_N - 1]++;
            total[type[b]]++;
        }
    char fname[64], header[MAX_TYPES * 66 + 32] = "log10_rel_abs_lambda";
    snprintf(fname, sizeof fname, "density_%s_%s.csv", MODELS[mi], POINTS[k]);
    for (int t = 0; t < tt->n; t++) strcat(strcat(header, ","), tt->name[t]);
    outfile *f = csv_open_in(r->out, fname, header);
    FILE *fp = outfile_fp(f);
    for (int i = 0; i < DENS_N; i++) {
        fprintf(fp, "%.4f", DENS_LO + (i + 0.5) * DENS_W);
        /* a density per type over its eigenvalues above the floor: each curve has area 1 */
        for (int t = 0; t < tt->n; t++) fprintf(fp, ",%.6g", total[t] > 0 ? count[t][i] / (total[t] * DENS_W) : 0);
        fprintf(fp, "\n");
    }
    csv_close(f);
    free(count);
    free(total);
}

static void analyse(run *r, int mi, int k, const model *m, const double *H, long step)
{
    size_t P = m->P;
    partition *p = partition_alg3(m, 0);
    index_groups *g = groups_of_partition(p);
    int nb = p->nblocks;
    type_table tt = {0};
    int *type = xmalloc((size_t)nb * sizeof(int));
    tt.n = block_types(type, tt.name, MAX_TYPES, m, p);
    double *w = xmalloc(P * sizeof(double)), *h = xmalloc((size_t)nb * sizeof(double));
    double *hc = xmalloc((size_t)nb * sizeof(double));
    hetero_stats *st = &r->st[mi][k];
    *st = block_heterogeneity(h, w, hc, H, P, g, type, r->reps, r->rng, ZERO_REL);
    r->step[mi][k] = step;
    for (int b = 0; b < nb; b++) {
        spectrum s = spectrum_of((int)group_size(g, b), w + g->off[b]);
        csv_row(r->blocks, "%s,%s,%ld,%d,%s,%s,%zu,%.10g,%.10g,%.10g,%d,%.10g,%.10g", MODELS[mi], POINTS[k], step, b,
                p->b[b].name, tt.name[type[b]], group_size(g, b), s.lmin, s.lmax, s.absmax, s.nneg, h[b], hc[b]);
        for (size_t e = g->off[b]; e < g->off[b + 1]; e++)
            csv_row(r->eigs, "%s,%s,%d,%s,%.10g", MODELS[mi], POINTS[k], b, tt.name[type[b]], w[e]);
    }
    write_density(r, mi, k, g, w, type, &tt);

    /* descriptive: the same over Algorithm 2's blocks (one per tensor, zhang2024transformers' blocks) */
    partition *p2 = partition_alg2(m);
    index_groups *g2 = groups_of_partition(p2);
    double *h2 = xmalloc((size_t)p2->nblocks * sizeof(double));
    group_log_absmax(h2, NULL, H, P, g2, ZERO_REL);
    r->alg2[mi][k] = spread_of(h2, NULL, p2->nblocks);

    csv_row(r->summary, "%s,%s,%ld,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%d", MODELS[mi], POINTS[k], step,
            st->kept, st->zero, st->real.sd, st->real.iqr, st->real.eta2, st->rand_sd, st->rand_eta2, st->control_sd,
            r->alg2[mi][k].sd, r->alg2[mi][k].n);
    if (!core_quiet)
        fprintf(stderr, "hetero: %s at %s (step %ld): %d blocks (%d without curvature), sd of log10 |l|max %.3f "
                        "(random blocks %.3f), eta2 %.3f\n", MODELS[mi], POINTS[k], step, st->kept, st->zero,
                st->real.sd, st->rand_sd, st->real.eta2);
    free(h2);
    groups_free(g2);
    partition_free(p2);
    free(hc);
    free(w);
    free(h);
    free(type);
    groups_free(g);
    partition_free(p);
}

/* ---- the two models ------------------------------------------------------------------------------ */

/* The Transformer at the three points: checkpoints 1 (initialisation, fraction 0), 0 (--checkpoint: the
 * kind writes --save-safetensors there) and 2 (the end) of model_ckpt_check_at's list in main. A file
 * (--model FILE): its architecture at the toolkit's initialisation (init) and the model itself
 * (checkpoint and end, one H). */
static void run_tt(run *r)
{
    static const int CKPT_OF_POINT[NPOINTS] = {1, 0, 2};
    model_ckpt *k = &r->k;
    char *dir = path_join(r->out, "tt_train");
    model_ckpt_train(k, dir);
    free(dir);
    double *H = NULL;
    for (int p = 0; p < NPOINTS; p++) {
        if (!(k->file && p == 2)) {
            model_ckpt_load(k, CKPT_OF_POINT[p]);
            if (p == 0) model_ckpt_init_params(k);
            free(H);
            H = model_ckpt_hessian(k);
        }
        analyse(r, 0, p, k->m, H, k->step);
    }
    free(H);
}

static void run_mlp(run *r)
{
    mlp_ckpt c;
    mlp_ckpt_setup s = r->ms;
    mlp_ckpt_hessian(&s, &c);   /* at --checkpoint */
    analyse(r, 1, 1, c.m, c.H, c.step);
    /* the initialisation: the same model's initial parameters (mlp_new's), same Hessian batch */
    mlp_init_params(c.m, mlp_get_config(c.m)->seed);
    free(c.H);
    hessian_opts o = hessian_defaults();
    o.label = "MLP Hessian";
    c.H = hessian_full(c.m, &o);
    analyse(r, 1, 0, c.m, c.H, 0);
    mlp_ckpt_free(&c);
    s.frac = 1.0;
    mlp_ckpt_hessian(&s, &c);
    analyse(r, 1, 2, c.m, c.H, c.step);
    mlp_ckpt_free(&c);
}

/* ---- statistics and claims ------------------------------------------------------------------------ */

static void put(outfile *f, const char *a, const char *b, const char *c, double v)
{
    char name[128];
    snprintf(name, sizeof name, "hetero.%s%s%s%s%s", a, b[0] ? "." : "", b, c[0] ? "." : "", c);
    stats_put(f, name, v);
}

/* min over the points; a NaN anywhere (a model without two blocks with curvature) makes it NaN: INVALID */
static double min_over(const double *x)
{
    double v = INFINITY;
    for (int k = 0; k < NPOINTS; k++) v = isnan(x[k]) || isnan(v) ? NAN : fmin(v, x[k]);
    return v;
}

static void write_results(run *r)
{
    double diff[NPOINTS], cdiff[NPOINTS], beyond[NPOINTS], cbeyond[NPOINTS], e[NMODELS][NPOINTS], ce[NMODELS][NPOINTS];
    for (int k = 0; k < NPOINTS; k++) {
        diff[k] = r->st[0][k].real.sd - r->st[1][k].real.sd;
        cdiff[k] = r->st[0][k].rand_sd - r->st[1][k].rand_sd;
        for (int mi = 0; mi < NMODELS; mi++) {
            e[mi][k] = log2(r->st[mi][k].real.sd / r->st[mi][k].rand_sd);
            ce[mi][k] = log2(r->st[mi][k].control_sd / r->st[mi][k].rand_sd);
        }
        beyond[k] = e[0][k] - e[1][k];
        cbeyond[k] = ce[0][k] - ce[1][k];
    }
    double dmin = min_over(diff), cmin = min_over(cdiff), bmin = min_over(beyond), cbmin = min_over(cbeyond);
    outfile *f = stats_open(r->out);
    stats_put(f, "hetero.diff.min", dmin);
    stats_put(f, "hetero.control.diff.min", cmin);
    stats_put(f, "hetero.beyond_random.min", bmin);
    stats_put(f, "hetero.control.beyond_random.min", cbmin);
    for (int k = 0; k < NPOINTS; k++) {
        put(f, POINTS[k], "diff", "", diff[k]);
        put(f, "control", POINTS[k], "diff", cdiff[k]);
        put(f, POINTS[k], "beyond_random", "", beyond[k]);
        put(f, "control", POINTS[k], "beyond_random", cbeyond[k]);
        for (int mi = 0; mi < NMODELS; mi++) {
            const hetero_stats *h = &r->st[mi][k];
            char pre[64];
            snprintf(pre, sizeof pre, "%s.%s", MODELS[mi], POINTS[k]);
            put(f, pre, "sd", "", h->real.sd);
            put(f, pre, "iqr", "", h->real.iqr);
            put(f, pre, "eta2", "", h->real.eta2);
            put(f, pre, "rand_sd", "", h->rand_sd);
            put(f, pre, "rand_eta2", "", h->rand_eta2);
            put(f, pre, "log2_sd_over_rand", "", e[mi][k]);
            put(f, pre, "control_sd", "", h->control_sd);
            put(f, pre, "alg2_sd", "", r->alg2[mi][k].sd);
            put(f, pre, "blocks", "", h->kept);
            put(f, pre, "zero_blocks", "", h->zero);
        }
    }
    csv_close(f);

    outfile *o = outfile_open_in(r->out, "claims.txt");
    FILE *fp = outfile_fp(o);
    fprintf(fp, "%s: the Transformer's Algorithm 3 blocks are more heterogeneous than the MLP's at initialisation, "
                "step %ld and the end (paper Sec. 2.1: \"the Hessian of different parameter blocks have dramatically "
                "different eigenvalue distributions\"): min over the three of S_tt - S_mlp = %.3f decades (random-"
                "permutation blocks of the same sizes: %.3f)\n",
            dmin > 0 ? (cmin > 0 ? "PASS (control passes too: no power)" : "PASS") : "FAIL", r->step[0][1], dmin, cmin);
    fprintf(fp, "%s: the same beyond random blocks of the same sizes on the same H: min over the three of "
                "log2(S_tt/S_tt,rand) - log2(S_mlp/S_mlp,rand) = %.3f (a random partition in place of Algorithm 3's: "
                "%.3f)\n", bmin > 0 ? (cbmin > 0 ? "PASS (control passes too: no power)" : "PASS") : "FAIL", bmin, cbmin);
    fprintf(fp, "%-10s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "point", "S_tt", "S_mlp", "D", "rnd_tt", "rnd_mlp",
            "D_rnd", "beyond", "ctrl", "eta2_tt", "eta2_mlp");
    for (int k = 0; k < NPOINTS; k++)
        fprintf(fp, "%-10s %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f\n", POINTS[k], r->st[0][k].real.sd,
                r->st[1][k].real.sd, diff[k], r->st[0][k].rand_sd, r->st[1][k].rand_sd, cdiff[k], beyond[k], cbeyond[k],
                r->st[0][k].real.eta2, r->st[1][k].real.eta2);
    fprintf(fp, "rule: S = sd over a model's Algorithm 3 blocks of h_b = log10 |lambda|max(H_bb) (decades; blocks "
                "without curvature beyond round-off left out: tt %d, mlp %d at the end); S_rand = mean S of %d "
                "random-permutation partitions with the kept blocks' sizes; claim 1: D = S_tt - S_mlp > 0 at all "
                "three points, control D_rand = S_tt,rand - S_mlp,rand; claim 2: log2(S/S_rand) of tt minus mlp > 0, "
                "control: one more random partition in place of Algorithm 3's; eta2 = share of the variance of h_b "
                "between block types\n", r->st[0][2].zero, r->st[1][2].zero, r->reps);
    fprintf(fp, "context: %s P = %zu (fig6 setup, H on %d held-out sequences, AdamW %ld steps); MLP as "
                "partition_check --model mlp (%s pooled %dx%d, width %d, %s, Adam, H on %d test images)\n",
            model_ckpt_what(&r->k), r->k.m->P, r->mc.cli.hess_batch, r->k.total, r->ms.data, r->ms.pool,
            r->ms.pool, r->ms.width, r->ms.act, r->ms.eval_n);
    outfile_commit(o);
}

int main(int argc, char **argv)
{
    run r = {0};
    model_cli_init(&r.mc);
    r.out = "results/hetero";
    const cli_opt opts[] = {
        MODEL_CLI_OPTS(&r.mc),
        {"reps", OPT_INT, &r.reps, "random-permutation partitions per model and point (0: 20 quick, 100 paper)"},
        {"out", OPT_STRING, &r.out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Block heterogeneity of the Hessian (paper Sec. 2.1, after zhang2024transformers): the exact\n"
              "spectrum of every Algorithm 3 block of the tiny Transformer (the fig6 setup) and of the MLP\n"
              "(partition_check --model mlp's), at initialisation, --checkpoint and the end of training.\n"
              "Heterogeneity S = sd over the blocks of log10 |lambda|max(H_bb) (decades, scale-free);\n"
              "control: the same block sizes on a random permutation of the parameters. Claim: S_tt > S_mlp\n"
              "at all three points. --steps, --lr and --batch train both models (AdamW / Adam).\n"
              "Scales: quick (H of the Transformer on 256 sequences, 20 random partitions) or paper (1,024, 100).\n"
              "--model llama: the Llama-style model in the Transformer's place (named tt in the outputs).\n"
              "--model FILE: the Transformer is that model (checkpoint and end) and its architecture at the\n"
              "toolkit's initialisation (init); the MLP as always.",
              opts, sizeof opts / sizeof *opts);
    if (model_kind_named(r.mc.model_name) == &MODEL_MLP)
        die_user("--model: hetero compares a Transformer with the MLP: tt, llama or a Transformer file (got mlp)");
    llama_cli_refuse_unused(&r.mc.llama, model_kind_named(r.mc.model_name) == &MODEL_LLAMA);
    ckpt_cli_check_run(&r.mc.cli);
    if (!(r.mc.cli.frac < 1)) die_user("--checkpoint must be below 1 (the end of training is taken anyway; got %g)",
                                       r.mc.cli.frac);
    const double fracs[NPOINTS] = {r.mc.cli.frac, 0, 1.0};   /* run_tt's checkpoints: --checkpoint, init, end */
    model_ckpt_check_at(&r.k, &r.mc, r.mc.model_name, fracs, NPOINTS);
    if (r.reps == 0) r.reps = scale_parse(r.mc.cli.scale) ? 100 : 20;
    if (r.reps < 2 || r.reps > 10000) die_user("--reps must be in 2..10000 (got %d)", r.reps);
    r.ms = mlp_cli_setup(&r.mc.mlp, &r.mc.cli);
    model_ckpt_start(&r.k);
    ensure_dir(r.out);
    r.rng = rng_new(seed_for((unsigned long)r.mc.cli.seed, SEED_DRAWS));
    r.blocks = csv_open_in(r.out, "blocks.csv", "model,point,step,block,name,type,size,lambda_min,lambda_max,"
                           "abs_max,negatives,log10_abs_max,control_log10_abs_max");
    r.eigs = csv_open_in(r.out, "eigs.csv", "model,point,block,type,eigenvalue");
    r.summary = csv_open_in(r.out, "summary.csv", "model,point,step,blocks,zero_blocks,sd,iqr,eta2,random_sd,"
                            "random_eta2,control_sd,alg2_sd,alg2_blocks");
    run_mlp(&r);   /* first: a bad MLP setting (data, pooling, test images) stops before any file is written */
    run_tt(&r);
    csv_close(r.blocks);
    csv_close(r.eigs);
    csv_close(r.summary);
    write_results(&r);
    run_write_info(r.out, (unsigned long)r.mc.cli.seed);
    rng_free(r.rng);
    model_ckpt_free(&r.k);
    model_cli_free(&r.mc);
    return 0;
}
