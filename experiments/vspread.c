/* vspread — why mean(v) works: the spread of Adam's v̂ inside Adam-mini's
 * blocks along the AdamW training of the tiny Transformer (or the Llama-style
 * model: --model llama).
 *
 * The paper (App. "Why using average v as learning rates"): "for all entries in
 * the i-th row of G, they all share the same BP error term e_i ... Therefore, G
 * usually has similar entries within a row (which associates with the same
 * output neuron), and its mean value can be a good representative of the whole
 * row." For one sample G = e zᵀ, so v̂_ij ≈ E[e_i² z_j²]: a row shares e_i, and
 * a column shares z_j just as much. Rows are the more homogeneous only if the
 * inputs' second moments vary less across j than the errors' across i; and a
 * query/key head (Algorithm 3's block there) holds several rows, so the
 * argument predicts a head to be less homogeneous than its rows.
 *
 * The fig6 training (AdamW, same flags, same run) with v̂ written at
 * --checkpoints; at each, x_i = log10(√v̂_i + ε) (the log of Adam's
 * denominator; scale-free) and, per matrix tensor, the pooled within-group sd
 * of x (vspread_util.h: group_spread_of) over its rows, its columns, its heads
 * (query/key/value), and random groups of the same sizes laid on the tensor's
 * entries, against the tensor's own sd; the R² of x_ij ≈ a_i + b_j (additive
 * rows and columns: v̂ = αβᵀ). And Adam-mini's per-block learning rate against
 * Adam's per coordinate: r_i = log2((√mean_b v̂ + ε)/(√v̂_i + ε)) over the
 * Algorithm 3 blocks Adam-mini gives one v (all but the biases, which keep
 * Adam's), per block type.
 * Claims, each at every checkpoint (the worst over them), with their controls:
 *   rows: mean over the output-neuron tensors (value, attn.proj, mlp.fc_1,
 *     mlp.proj, lm_head) of log2(W_rows/sd) < 0; control: random groups of the
 *     row sizes in place of the rows;
 *   rows vs columns: the mean of log2(W_rows/W_cols) < 0; control: random
 *     groups of the row sizes against random groups of the column sizes;
 *   heads vs rows (the prediction): query's and key's mean log2(W_heads/W_rows)
 *     > 0; control: random groups of the head size against the row size;
 *   close to Adam: the share of coordinates with |r_i| <= 1 (Adam-mini's lr
 *     within a factor 2 of Adam's) > 1/2; control: random groups of Algorithm
 *     3's block sizes over the same coordinates.
 *
 * Outputs in --out: spread.csv (checkpoint × tensor: the within-group sds over
 * the tensor's sd, R²), lr_ratio.csv (checkpoint × block type: quantiles of r,
 * share within a factor 2), checkpoints.csv (step, held-out loss), train/,
 * stats.csv, claims.txt.
 */
#include "core/core.h"
#include "core/model.h"
#include "experiments/vspread_util.h"
#include "harness/data.h"
#include "harness/groups.h"
#include "harness/models.h"
#include "harness/seeds.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES 32

/* What one checkpoint gives the claims: each statistic and its control. */
typedef enum { C_ROWS, C_ROWS_COLS, C_HEADS_ROWS, C_LR_CLOSE, NCLAIMS } claim_k;
static const char *CLAIM_KEYS[NCLAIMS] = {"rows_vs_tensor", "rows_vs_cols", "heads_vs_rows", "lr_within2"};
/* The claim holds below its threshold (rows, rows vs columns) or above (heads, lr). */
static const int CLAIM_BELOW_SIDE[NCLAIMS] = {1, 1, 0, 0};

typedef struct {
    model_cli mc;
    const char *out;
    double_list fracs;
    model_ckpt k;              /* the model at the current checkpoint, on the held-out batch */
    gsl_rng *rng;
    double eps;
    outfile *spread, *ratio, *ckpts;
    int nsteps;
    long step[TT_MAX_CHECKPOINTS];
    double stat[TT_MAX_CHECKPOINTS][NCLAIMS], control[TT_MAX_CHECKPOINTS][NCLAIMS];
} run;

/* ---- the spread of x inside one tensor's groups ------------------------------------------------ */

/* The tensors whose rows are output neurons in the BP sense and Algorithm 3's blocks. */
static int output_rows(tensor_role r)
{
    return r == ROLE_VALUE || r == ROLE_ATTN_PROJ || r == ROLE_MLP_FC || r == ROLE_MLP_PROJ || r == ROLE_OUTPUT;
}

/* Within-group sd of x (the tensor's own entries, x[0..n)) for split s of tensor t, and for random
 * groups of the same sizes on the tensor's entries. */
static void split_spread(run *r, const model *m, int t, split_kind s, const double *x, group_spread *real,
                         group_spread *rnd)
{
    partition *p = tensor_local_partition(m, t, s);
    index_groups *g = groups_of_partition(p), *gr = groups_shuffled(g, r->rng);
    *real = group_spread_of(x, g);
    *rnd = group_spread_of(x, gr);
    groups_free(gr);
    groups_free(g);
    partition_free(p);
}

static void analyse_spread(run *r, int k, const model *m, const double *x)
{
    double sum[NCLAIMS] = {0}, csum[NCLAIMS] = {0};
    int n_rows = 0, n_heads = 0;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        if (ti->rows < 2 || ti->cols < 2) continue;   /* matrices only */
        const double *xt = x + ti->offset;
        group_spread rows, cols, rrows, rcols;
        group_spread heads = {.within_sd = NAN, .total_sd = NAN}, rheads = heads;
        split_spread(r, m, t, SPLIT_ROWS, xt, &rows, &rrows);
        split_spread(r, m, t, SPLIT_COLS, xt, &cols, &rcols);
        if (ti->heads > 1) split_spread(r, m, t, SPLIT_HEADS, xt, &heads, &rheads);
        double sd = rows.total_sd, r2 = additive_r2(xt, ti->rows, ti->cols);
        csv_row(r->spread, "%ld,%s,%s,%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", r->step[k], ti->name,
                role_name(ti->role), ti->rows, ti->cols, ti->heads, sd, rows.within_sd / sd, cols.within_sd / sd,
                heads.within_sd / sd, rrows.within_sd / sd, rcols.within_sd / sd, rheads.within_sd / sd, r2);
        if (output_rows(ti->role)) {
            sum[C_ROWS] += log2(rows.within_sd / sd);
            csum[C_ROWS] += log2(rrows.within_sd / sd);
            sum[C_ROWS_COLS] += log2(rows.within_sd / cols.within_sd);
            csum[C_ROWS_COLS] += log2(rrows.within_sd / rcols.within_sd);
            n_rows++;
        }
        if (ti->role == ROLE_QUERY || ti->role == ROLE_KEY) {
            sum[C_HEADS_ROWS] += log2(heads.within_sd / rows.within_sd);
            csum[C_HEADS_ROWS] += log2(rheads.within_sd / rrows.within_sd);
            n_heads++;
        }
    }
    if (!n_rows || !n_heads) die_user("the model has no %s tensor to judge", n_rows ? "query or key" : "output-neuron");
    for (int c = C_ROWS; c <= C_ROWS_COLS; c++) r->stat[k][c] = sum[c] / n_rows, r->control[k][c] = csum[c] / n_rows;
    r->stat[k][C_HEADS_ROWS] = sum[C_HEADS_ROWS] / n_heads;
    r->control[k][C_HEADS_ROWS] = csum[C_HEADS_ROWS] / n_heads;
}

/* ---- Adam-mini's learning rate against Adam's -------------------------------------------------- */

static double share_within2(const double *ratio, const index_groups *g)
{
    size_t in = 0, N = g->off[g->ngroups];
    for (size_t i = 0; i < N; i++) in += fabs(ratio[g->idx[i]]) <= 1;
    return N ? (double)in / N : NAN;
}

static void analyse_lr(run *r, int k, const model *m, const double *vhat)
{
    /* Algorithm 3's blocks that share one v in Adam-mini: all but the biases (optim.h) */
    partition *all = partition_alg3(m, 0), *p = partition_new();
    for (int b = 0; b < all->nblocks; b++)
        if (m->tensors[all->b[b].tensor].role != ROLE_BIAS)
            partition_add(p, all->b[b].start, all->b[b].n, all->b[b].stride, all->b[b].tensor, all->b[b].name);
    index_groups *g = groups_of_partition(p), *gr = groups_shuffled(g, r->rng);
    double *ratio = xmalloc(m->P * sizeof(double)), *rratio = xmalloc(m->P * sizeof(double));
    group_lr_log2_ratio(ratio, vhat, g, r->eps);
    group_lr_log2_ratio(rratio, vhat, gr, r->eps);
    r->stat[k][C_LR_CLOSE] = share_within2(ratio, g);
    r->control[k][C_LR_CLOSE] = share_within2(rratio, gr);

    int *type = xmalloc((size_t)p->nblocks * sizeof(int));
    char (*names)[BLOCK_TYPE_LEN] = xmalloc(MAX_TYPES * sizeof *names);
    int ntypes = block_types(type, names, MAX_TYPES, m, p);
    double *v = xmalloc(m->P * sizeof(double));
    for (int ty = 0; ty < ntypes; ty++) {
        size_t n = 0, in = 0;
        for (int b = 0; b < p->nblocks; b++)
            if (type[b] == ty)
                for (size_t i = g->off[b]; i < g->off[b + 1]; i++) {
                    v[n++] = ratio[g->idx[i]];
                    in += fabs(ratio[g->idx[i]]) <= 1;
                }
        csv_row(r->ratio, "%ld,%s,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", r->step[k], names[ty], n, quantile(v, n, 0.05),
                quantile(v, n, 0.25), quantile(v, n, 0.5), quantile(v, n, 0.75), quantile(v, n, 0.95), (double)in / n);
    }
    free(v);
    free(names);
    free(type);
    free(rratio);
    free(ratio);
    groups_free(gr);
    groups_free(g);
    partition_free(p);
    partition_free(all);
}

/* ---- statistics and claims ---------------------------------------------------------------------- */

/* The worst over the checkpoints for the claim's side: the largest for a claim below, the smallest above. */
static double worst(const run *r, double (*x)[NCLAIMS], int c)
{
    double v = CLAIM_BELOW_SIDE[c] ? -INFINITY : INFINITY;
    for (int k = 0; k < r->nsteps; k++) {
        if (isnan(x[k][c])) return NAN;
        v = CLAIM_BELOW_SIDE[c] ? fmax(v, x[k][c]) : fmin(v, x[k][c]);
    }
    return v;
}

static void write_results(run *r)
{
    outfile *f = stats_open(r->out);
    char name[128];
    double w[NCLAIMS], cw[NCLAIMS];
    for (int c = 0; c < NCLAIMS; c++) {
        w[c] = worst(r, r->stat, c);
        cw[c] = worst(r, r->control, c);
        snprintf(name, sizeof name, "vspread.%s.worst", CLAIM_KEYS[c]);
        stats_put(f, name, w[c]);
        snprintf(name, sizeof name, "vspread.control.%s.worst", CLAIM_KEYS[c]);
        stats_put(f, name, cw[c]);
    }
    for (int k = 0; k < r->nsteps; k++)
        for (int c = 0; c < NCLAIMS; c++) {
            snprintf(name, sizeof name, "vspread.step%ld.%s", r->step[k], CLAIM_KEYS[c]);
            stats_put(f, name, r->stat[k][c]);
            snprintf(name, sizeof name, "vspread.control.step%ld.%s", r->step[k], CLAIM_KEYS[c]);
            stats_put(f, name, r->control[k][c]);
        }
    csv_close(f);

    static const char *what[NCLAIMS] = {
        "v-hat is more homogeneous within output-neuron rows than within their tensor (random groups): max over "
        "checkpoints of the mean log2(W_rows/sd)",
        "v-hat is more homogeneous within output-neuron rows than within input-neuron columns: max over checkpoints "
        "of the mean log2(W_rows/W_cols)",
        "(the BP argument's prediction) v-hat is less homogeneous within query/key heads than within their rows: min "
        "over checkpoints of the mean log2(W_heads/W_rows)",
        "Adam-mini's per-block lr is within a factor 2 of Adam's for most coordinates: min over checkpoints of the "
        "share with |log2 ratio| <= 1",
    };
    static const double thr[NCLAIMS] = {0, 0, 0, 0.5};
    outfile *o = outfile_open_in(r->out, "claims.txt");
    FILE *fp = outfile_fp(o);
    for (int c = 0; c < NCLAIMS; c++) {
        int pass = CLAIM_BELOW_SIDE[c] ? w[c] < thr[c] : w[c] > thr[c];
        int cpass = CLAIM_BELOW_SIDE[c] ? cw[c] < thr[c] : cw[c] > thr[c];
        fprintf(fp, "%s: %s = %.3f (%s %g; control %.3f)\n", pass ? (cpass ? "PASS (control passes too: no power)"
                : "PASS") : "FAIL", what[c], w[c], CLAIM_BELOW_SIDE[c] ? "below" : "above", thr[c], cw[c]);
    }
    fprintf(fp, "%8s", "step");
    for (int c = 0; c < NCLAIMS; c++) fprintf(fp, " %15s %8s", CLAIM_KEYS[c], "control");
    fprintf(fp, "\n");
    for (int k = 0; k < r->nsteps; k++) {
        fprintf(fp, "%8ld", r->step[k]);
        for (int c = 0; c < NCLAIMS; c++) fprintf(fp, " %15.3f %8.3f", r->stat[k][c], r->control[k][c]);
        fprintf(fp, "\n");
    }
    fprintf(fp, "rule: x = log10(sqrt(v-hat) + eps) (eps %g); W = pooled within-group sd of x, sd = the tensor's sd of "
                "x; output-neuron tensors: value, attn.proj, mlp.fc_1, mlp.proj, lm_head; controls: random groups of "
                "the same sizes on the same entries (one draw each)\n", r->eps);
    fprintf(fp, "context: the fig6 training of the %s (AdamW lr %g cosine, %ld steps of %d sequences), P = %zu\n",
            model_ckpt_what(&r->k), r->mc.cli.lr, r->mc.cli.steps, r->mc.cli.batch, r->k.m->P);
    outfile_commit(o);
}

/* ---- the run ------------------------------------------------------------------------------------ */

static void check_fracs(const run *r)
{
    long steps = r->mc.cli.steps;
    if (r->fracs.n < 1 || r->fracs.n > TT_MAX_CHECKPOINTS)
        die_user("--checkpoints must list 1 to %d fractions (got %d)", TT_MAX_CHECKPOINTS, r->fracs.n);
    for (int k = 0; k < r->fracs.n; k++) {
        if (!(r->fracs.v[k] > 0 && r->fracs.v[k] <= 1))
            die_user("--checkpoints: fraction %g is outside (0, 1]", r->fracs.v[k]);
        if (k && checkpoint_step(r->fracs.v[k], steps) <= checkpoint_step(r->fracs.v[k - 1], steps))
            die_user("--checkpoints must give increasing steps of --steps %ld (%g after %g)", steps, r->fracs.v[k],
                     r->fracs.v[k - 1]);
    }
}

static void run_steps(run *r)
{
    model_ckpt *c = &r->k;
    char *dir = path_join(r->out, "train");
    double t0 = wall_seconds();
    model_ckpt_train(c, dir);
    double train_seconds = wall_seconds() - t0;
    r->spread = csv_open_in(r->out, "spread.csv", "step,tensor,role,rows,cols,heads,sd,rows_over_sd,cols_over_sd,"
                            "heads_over_sd,random_rows_over_sd,random_cols_over_sd,random_heads_over_sd,additive_r2");
    r->ratio = csv_open_in(r->out, "lr_ratio.csv", "step,type,n,q05,q25,median,q75,q95,share_within2");
    r->ckpts = csv_open_in(r->out, "checkpoints.csv", "step,heldout_loss");
    double *x = xmalloc(c->m->P * sizeof(double));
    for (int k = 0; k < r->fracs.n; k++) {
        model_ckpt_load(c, k);
        r->step[k] = c->step;
        for (size_t i = 0; i < c->m->P; i++) x[i] = log10(sqrt(c->vhat[i]) + r->eps);
        analyse_spread(r, k, c->m, x);
        analyse_lr(r, k, c->m, c->vhat);
        csv_row(r->ckpts, "%ld,%.10g", r->step[k], c->m->loss(c->m));
        r->nsteps = k + 1;
    }
    free(x);
    free(dir);
    csv_close(r->spread);
    csv_close(r->ratio);
    csv_close(r->ckpts);
    run_note("train seconds: %.3f", train_seconds);
}

static void parse_args(run *r, int argc, char **argv)
{
    *r = (run){.out = "results/vspread", .fracs = {5, {0.001, 0.01, 0.1, 0.5, 1.0}}};
    model_cli_init(&r->mc);
    ckpt_cli *c = &r->mc.cli;
    const cli_opt opts[] = {
        {"model", OPT_STRING, &r->mc.model_name, "tt (the tiny Transformer) or llama (the Llama-style model: the same "
                                                 "sizes and --llama-*)"},
        {"scale", OPT_STRING, &c->scale, "quick or paper: the same training (the paper gives no length); the held-out "
                                         "loss on 256 or 1,024 sequences"},
        {"checkpoints", OPT_DOUBLE_LIST, &r->fracs, "fractions of training at which v-hat is read, increasing"},
        {"steps", OPT_LONG, &c->steps, "AdamW training steps"},
        {"lr", OPT_DOUBLE, &c->lr, "AdamW peak learning rate (cosine decay to 10%, weight decay 0.1)"},
        {"batch", OPT_INT, &c->batch, "training sequences per step"},
        {"V", OPT_INT, &c->V, "vocabulary size of the Markov source (text: --vocab-size)"},
        {"C", OPT_INT, &c->C, "embedding width"},
        {"heads", OPT_INT, &c->heads, "attention heads (divides C)"},
        {"M", OPT_INT, &c->M, "MLP hidden width"},
        {"T", OPT_INT, &c->T, "context length"},
        {"layers", OPT_INT, &c->layers, "Transformer blocks"},
        {"bias", OPT_INT, &c->bias, "1: biases in linear layers and LayerNorm (tt)"},
        {"order", OPT_INT, &c->order, "Markov source: the next token depends on this many previous ones"},
        {"successors", OPT_INT, &c->successors, "Markov source: likely next tokens per context"},
        TT_DATA_OPTS(c->data),
        {"data-seed", OPT_LONG, &c->data_seed, "the data's seed: Markov chain and held-out sequences"},
        {"seed", OPT_LONG, &c->seed, "the run's seed: initialisation, training batches, random groups"},
        LLAMA_CLI_OPTS(&r->mc.llama),
        {"out", OPT_STRING, &r->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Why mean(v) works (paper App. \"Why using average v\"): the spread of AdamW's v-hat inside\n"
              "Adam-mini's blocks along the fig6 training of the tiny Transformer. Per matrix tensor, the pooled\n"
              "sd of log10(sqrt(v-hat) + eps) within rows, columns, heads and random groups of the same sizes;\n"
              "and Adam-mini's per-block learning rate 1/(sqrt(mean v-hat_b) + eps) over Adam's per coordinate,\n"
              "per block type. Claims (the worst over --checkpoints): rows more homogeneous than their tensor\n"
              "and than columns, query/key heads less homogeneous than their rows (the BP argument's\n"
              "prediction), Adam-mini's lr within a factor 2 of Adam's for most coordinates; each against\n"
              "random groups (controls). --model llama: the Llama-style model (o_proj, gate/up/down_proj).",
              opts, sizeof opts / sizeof *opts);
    const model_kind *kind = model_kind_named(r->mc.model_name);
    if (!kind || kind == &MODEL_MLP)
        die_user("--model: vspread trains a Transformer: tt or llama (got '%s')", r->mc.model_name);
    llama_cli_refuse_unused(&r->mc.llama, kind == &MODEL_LLAMA);
    ckpt_cli_check_run(c); /* --steps first: the checkpoints' steps depend on it */
    check_fracs(r);
    model_ckpt_check_at(&r->k, &r->mc, r->mc.model_name, r->fracs.v, r->fracs.n);
    model_ckpt_start(&r->k);
}

int main(int argc, char **argv)
{
    run r;
    parse_args(&r, argc, argv);
    r.eps = r.k.eps;
    ensure_dir(r.out);
    r.rng = rng_new(seed_for((unsigned long)r.mc.cli.seed, SEED_DRAWS));
    run_steps(&r);
    write_results(&r);
    run_write_info(r.out, (unsigned long)r.mc.cli.seed);
    rng_free(r.rng);
    model_ckpt_free(&r.k);
    model_cli_free(&r.mc);
    return 0;
}
