/* exp2_blockwise_gd — one searched learning rate per block vs Adam on the 1-layer
 * Transformer (paper appendix "More Results for Motivation", Exp 2: "we conduct the
 * block-wise GD and we grid-search the learning rate for each block ... block-wise GD
 * outperforms AdamW"), with the confounds of that comparison taken out one at a time:
 *
 *   original     blockwise GD (no momentum) vs AdamW (β1 = 0.9, weight decay 0.1);
 *   momentum     blockwise heavy ball (AdamW's bias-corrected β1 = 0.9 momentum, one lr
 *                per block, optim's heavy-ball) vs AdamW;
 *   no momentum  blockwise GD vs Adam with β1 = 0 (and no weight decay): neither has
 *                momentum, they differ only in one lr per block vs Adam's per-coordinate v;
 *   full batch   blockwise GD vs AdamW on one fixed finite set of sequences, every step on
 *                the whole set (no batch noise), compared on that set's loss, the
 *                objective both minimise.
 * Each claim's negative control is the same method with one learning rate for every
 * parameter (GD, heavy ball), which one lr per block is claimed to beat.
 *
 * One learning rate per block cannot be searched jointly (grid^blocks runs), so the
 * search is coordinate-wise:
 *   0. start from η_b = c / max(|λ|max(H_bb), median) (the exact Hessian at
 *      initialisation, as in train_compare) with c searched on a grid;
 *   1. for each group in turn, search a factor x on its rates with every other rate
 *      fixed: a grid {1/4, 1, 4} (1 is the current configuration, already scored) that
 *      extends by ×4 at its edges up to ×64 (lr_range LR_COORD); keep the best;
 *   2. repeat for --passes passes.
 * A group is a layer (a weight tensor with its bias; its Algorithm 3 blocks keep their
 * Hessian ratios) at quick scale, one Algorithm 3 block at paper scale (--per-block). Every
 * run of the search is in search.csv, every grid point in grid.csv.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/lr_grid.h"
#include "harness/ttexp.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>

/* Groups of blocks: one per Algorithm 3 block, or one per layer. Returns the number of
 * groups; group[b] is block b's group. A layer is a tensor with the bias tensor that
 * follows it in the tensor table (the bias of output neuron i shares that neuron's
 * dense Hessian block). */
static int make_groups(const model *m, const partition *p, int per_block, int *group)
{
    int n = 0;
    for (int b = 0; b < p->nblocks; b++) {
        int t = p->b[b].tensor, new_tensor = b == 0 || t != p->b[b - 1].tensor;
        int joins = m->tensors[t].role == ROLE_BIAS && b > 0;
        if (per_block || (new_tensor && !joins)) n++;
        group[b] = n - 1;
    }
    return n;
}

/* A search's state: the current per-block rates (absolute; base lr 1) and their score. */
typedef struct {
    const char *label;
    optim_kind kind;
    double *lr_b;
    double score;
    long runs;
    int at_bound;               /* groups whose factor search ended at a bound */
} coord_state;

static void coord_job(ttexp_job *j, const coord_state *cs, const partition *p, const int *group, int g, double x)
{
    int nb = p->nblocks;
    *j = (ttexp_job){.method = ttexp_method_of(cs->label, cs->kind, p, 1), .owned = xmalloc(nb * sizeof(double))};
    for (int b = 0; b < nb; b++) j->owned[b] = cs->lr_b[b] * (group[b] == g ? x : 1);
    j->method.cfg.block_lr = j->owned;
}

/* Coordinate passes (steps 1–2 above) on cs, logged to search.csv. */
static void coord_search(coord_state *cs, const ttexp_setup *s, const ttexp_schedule *sc, const partition *p,
                         const int *group, int ngroups, int passes, int threads, outfile *log)
{
    size_t P = ttexp_param_count(s);
    const lr_range *range = lr_range_of(LR_COORD);
    progress prog;
    progress_start(&prog, cs->label, (long)passes * ngroups);
    for (int pass = 0; pass < passes; pass++)
        for (int g = 0; g < ngroups; g++) {
            int first = 0;
            while (group[first] != g) first++;
            lr_grid grid;
            lr_grid_init(&grid, range->lo, range->hi, 3, range->lo_bound, range->hi_bound);
            lr_grid_add(&grid, 1, cs->score); /* the current rates */
            double xs[LR_GRID_MAX];
            for (int k; (k = lr_grid_next(&grid, xs)) > 0;) {
                ttexp_job jobs[2];
                for (int i = 0; i < k; i++) {
                    coord_job(&jobs[i], cs, p, group, g, xs[i]);
                    ttexp_record_alloc(&jobs[i].rec, sc, P, 0);
                }
                int quiet = core_quiet;
                core_quiet = 1; /* one progress line for the whole search */
                ttexp_run_jobs(s, sc, jobs, k, threads, "group");
                core_quiet = quiet;
                for (int i = 0; i < k; i++) lr_grid_add(&grid, xs[i], jobs[i].rec.score);
                cs->runs += k;
                for (int i = 0; i < k; i++) {
                    ttexp_record_free(&jobs[i].rec);
                    free(jobs[i].owned);
                }
            }
            int best = lr_grid_best(&grid);
            grid_status status = lr_grid_status(&grid);
            cs->at_bound += status != GRID_INTERIOR;
            double x = grid.lr[best];
            for (int i = 0; i < grid.n; i++)
                csv_row(log, "%s,%d,%d,%s,%g,%.10g,%d,%s", cs->label, pass, g, p->b[first].name, grid.lr[i],
                        grid.score[i], i == best && x != 1, grid_status_name(status));
            if (x != 1) {
                cs->score = grid.score[best];
                for (int b = 0; b < p->nblocks; b++)
                    if (group[b] == g) cs->lr_b[b] *= x;
            }
            progress_update(&prog, (long)pass * ngroups + g + 1);
        }
    progress_end(&prog);
}

/* The searched per-block method once more, with its curves and final parameters. */
static void final_run(ttexp_job *j, const coord_state *cs, const ttexp_setup *s, const ttexp_schedule *sc,
                      const partition *p)
{
    *j = (ttexp_job){.method = ttexp_method_of(cs->label, cs->kind, p, 1)};
    j->method.cfg.block_lr = cs->lr_b;
    ttexp_record_alloc(&j->rec, sc, ttexp_param_count(s), 0);
    ttexp_run_jobs(s, sc, j, 1, 1, cs->label);
}

/* A coordinate search's start: the best c of the Hessian rule, rates c·η_b. */
static coord_state coord_start(const char *label, optim_kind kind, const ttexp_search *c_grid, const double *eta,
                               int nb)
{
    coord_state cs = {.label = label, .kind = kind, .lr_b = xmalloc(nb * sizeof(double)),
                      .score = ttexp_search_best(c_grid)->rec.score};
    double c = ttexp_search_value(c_grid);
    for (int b = 0; b < nb; b++) cs.lr_b[b] = c * eta[b];
    return cs;
}

/* ---- the recipe ------------------------------------------------------------------------ */

typedef struct {
    ttexp_args a;
    int passes, train_set, per_block;
} exp2_args;

/* Step 0: every single-lr method and the Hessian rule's c, each on its own grid. */
enum { S_ADAMW, S_ADAM0, S_GD, S_HB, S_BGD, S_BHB, F_ADAMW, F_GD, F_BGD, NSEARCH };
static const struct {
    const char *label, *name;  /* grid.csv's method; the method's name */
    optim_kind kind;
    lr_method range;
    int beta1_0;               /* Adam without momentum */
    int blockwise;             /* Algorithm 3's blocks at c·eta_b: c searched */
    int full_batch;            /* on the fixed training set */
} SEARCHES[NSEARCH] = {
    [S_ADAMW] = {.label = "adamw", .name = "AdamW", .kind = OPTIM_ADAMW, .range = LR_ADAMW},
    [S_ADAM0] = {.label = "adam_beta1_0", .name = "Adam, beta1 = 0", .kind = OPTIM_ADAM, .range = LR_ADAM,
                 .beta1_0 = 1},
    [S_GD] = {.label = "gd", .name = "GD", .kind = OPTIM_GD, .range = LR_GD},
    [S_HB] = {.label = "heavy_ball", .name = "heavy ball", .kind = OPTIM_HEAVY_BALL, .range = LR_HEAVY_BALL},
    [S_BGD] = {.label = "blockgd_c", .name = "blockwise GD", .kind = OPTIM_BLOCK_GD, .range = LR_BLOCKGD,
               .blockwise = 1},
    [S_BHB] = {.label = "blockhb_c", .name = "blockwise heavy ball", .kind = OPTIM_HEAVY_BALL, .range = LR_BLOCKHB,
               .blockwise = 1},
    [F_ADAMW] = {.label = "full_adamw", .name = "AdamW, full batch", .kind = OPTIM_ADAMW, .range = LR_ADAMW,
                 .full_batch = 1},
    [F_GD] = {.label = "full_gd", .name = "GD, full batch", .kind = OPTIM_GD, .range = LR_GD, .full_batch = 1},
    [F_BGD] = {.label = "full_blockgd_c", .name = "blockwise GD, full batch", .kind = OPTIM_BLOCK_GD,
               .range = LR_BLOCKGD, .blockwise = 1, .full_batch = 1},
};
/* Steps 1-2: the coordinate searches, each from its step-0 search of c. */
enum { C_BGD, C_BHB, C_FULL, NCOORD };
static const struct {
    const char *name;
    optim_kind kind;
    int from;                  /* the search of c it starts from */
} COORDS[NCOORD] = {
    [C_BGD] = {"blockwise GD", OPTIM_BLOCK_GD, S_BGD},
    [C_BHB] = {"blockwise heavy ball", OPTIM_HEAVY_BALL, S_BHB},
    [C_FULL] = {"blockwise GD, full batch", OPTIM_BLOCK_GD, F_BGD},
};

typedef struct {
    exp2_args x;
    double t0;                 /* wall clock at the start (run.txt) */
    ttexp e, full;             /* fresh batches; the fixed training set */
    ttexp_schedule sc;
    partition *alg3;
    int nb, ngroups, *group;   /* group[b]: block b's coordinate-search group */
    double *eta;               /* (nb) the Hessian rule's 1/max(|lambda|max(H_bb), median) */
    ttexp_search g[NSEARCH];
    int at_bound;              /* step-0 searches not interior */
    coord_state cs[NCOORD];
    ttexp_job fin[NCOORD];     /* each searched method run once more, kept */
    long runs;                 /* training runs in all */
} study;

/* Each claim's statistic and its control's: the excess over the reference as a share
 * of the reference's progress (ttexp_excess_share). */
typedef struct {
    double blockgd, gd;                /* over AdamW */
    double blockhb, hb;                /* over AdamW */
    double blockgd_b1_0, gd_b1_0;      /* over Adam with beta1 = 0 */
    double full, full_gd;              /* over AdamW, full batch, on the training set */
    double hessian_rule;               /* blockwise GD at the Hessian rule's c, over AdamW */
} exp2_stats;

static exp2_args parse_args(int argc, char **argv)
{
    exp2_args x = {.a = TTEXP_ARGS("results/exp2_blockwise_gd"), .per_block = -1};
    ttexp_args *a = &x.a;
    const cli_opt opts[] = {
        TTEXP_OPTS(*a, "quick (300 steps, 5-point first grids, 1 pass over layers, full batch on 64 sequences) or "
                       "paper (1000 steps, 9, 3 passes over blocks, 256 sequences)",
                   "points of the first grids, 2..50 (0: from --scale)"),
        {"passes", OPT_INT, &x.passes, "coordinate-search passes, 1..10 (0: from --scale)"},
        {"per-block", OPT_INT, &x.per_block, "coordinate-search groups: 1 one per Algorithm 3 block, 0 one per layer "
                                             "(a tensor with its bias), -1 from --scale"},
        {"train-set", OPT_INT, &x.train_set, "sequences of the full-batch variant's fixed training set, 1..4096 "
                                             "(0: from --scale)"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "One searched learning rate per block vs Adam on the paper's 1-layer Transformer (paper\n"
              "appendix Exp 2), with the confounds taken out one at a time: blockwise GD vs AdamW (the\n"
              "original), blockwise heavy ball (AdamW's beta1 = 0.9 momentum, one lr per block) vs AdamW,\n"
              "blockwise GD vs Adam with beta1 = 0, and blockwise GD vs AdamW in full batch on a fixed set of\n"
              "sequences (compared on that set's loss). Controls: the same methods with one lr for all (GD,\n"
              "heavy ball). Search: start from eta_b = c/|lambda|max(H_bb) at initialisation (c from a log\n"
              "grid), then coordinate-wise: each group's rates x {1/4, 1, 4}, extended by x4 at the edges up\n"
              "to x64, with the others fixed; the lowest mean training loss over the last 10% of steps wins.\n"
              "Every grid extends at its edges until the best is interior or a bound is hit (grid.csv).\n"
              "Reported: loss on 512 held-out sequences; stats.csv for make verdicts (docs/verdicts.md).",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(a, 300, 1000, 5, 9, 50);
    if (x.passes == 0) x.passes = a->paper ? 3 : 1;
    if (x.passes < 1 || x.passes > 10) die_user("--passes must be in 1..10 (got %d)", x.passes);
    if (x.train_set == 0) x.train_set = a->paper ? 256 : 64;
    if (x.train_set < 1 || x.train_set > 4096) die_user("--train-set must be in 1..4096 (got %d)", x.train_set);
    if (x.per_block < -1 || x.per_block > 1) die_user("--per-block must be -1, 0 or 1 (got %d)", x.per_block);
    if (x.per_block < 0) x.per_block = a->paper;
    return x;
}

/* The two setups (fresh batches; the fixed training set), Algorithm 3's blocks, their
 * groups and the Hessian rule's rates at initialisation. */
static void study_open(study *st, const exp2_args *x)
{
    st->x = *x;
    st->t0 = wall_seconds();
    ttexp_setup setup = ttexp_default_setup(&x->a);
    st->sc = ttexp_begin(&st->e, setup, &x->a);
    setup.train_set = x->train_set;
    ttexp_open(&st->full, &setup);
    st->alg3 = partition_alg3(st->e.m, 0);
    st->nb = st->alg3->nblocks;
    st->group = xmalloc(st->nb * sizeof(int));
    st->ngroups = make_groups(st->e.m, st->alg3, x->per_block, st->group);
    st->eta = xmalloc(st->nb * sizeof(double));
    ttexp_block_lr_from_hessian(&st->e, st->alg3, st->e.s->B, st->eta);
}

/* Step 0, into grid.csv. */
static void search_single_lrs(study *st)
{
    outfile *gf = ttexp_grid_open(st->x.a.out);
    for (int k = 0; k < NSEARCH; k++) {
        const partition *blocks = SEARCHES[k].blockwise ? st->alg3 : NULL;
        ttexp_method mt = ttexp_method_of(SEARCHES[k].name, SEARCHES[k].kind, blocks, 0);
        if (SEARCHES[k].beta1_0) mt.cfg.beta1 = 0;
        if (SEARCHES[k].blockwise) mt.cfg.block_lr = st->eta;
        const ttexp_setup *s = SEARCHES[k].full_batch ? st->full.s : st->e.s;
        ttexp_search_run(&st->g[k], SEARCHES[k].label, s, &st->sc, &mt, lr_range_of(SEARCHES[k].range), st->x.a.grid,
                         NULL, NULL, st->x.a.threads);
        ttexp_write_search(gf, &st->g[k]);
        st->at_bound += ttexp_search_at_bound(&st->g[k]);
        if (st->g[k].best < 0) die_diverged("%s diverged at every point of its grid", SEARCHES[k].label);
    }
    csv_close(gf);
}

/* Steps 1-2 (search.csv), then each searched method once more. */
static void coordinate_passes(study *st)
{
    for (int k = 0; k < NCOORD; k++)
        st->cs[k] = coord_start(COORDS[k].name, COORDS[k].kind, &st->g[COORDS[k].from], st->eta, st->nb);
    outfile *log = csv_open_in(st->x.a.out, "search.csv", "search,pass,group,first_block,factor,"
                                                          "score_last10pct_train_loss,accepted,status");
    for (int k = 0; k < NCOORD; k++) {
        const ttexp_setup *s = k == C_FULL ? st->full.s : st->e.s;
        coord_search(&st->cs[k], s, &st->sc, st->alg3, st->group, st->ngroups, st->x.passes, st->x.a.threads, log);
        st->runs += st->cs[k].runs;
    }
    csv_close(log);
    for (int k = 0; k < NCOORD; k++)
        final_run(&st->fin[k], &st->cs[k], k == C_FULL ? st->full.s : st->e.s, &st->sc, st->alg3);
    for (int k = 0; k < NSEARCH; k++) st->runs += st->g[k].g.n;
    st->runs += NCOORD;
}

static const ttexp_record *best_of(const study *st, int k) { return &ttexp_search_best(&st->g[k])->rec; }

/* block_lr.csv, eval.csv (held-out curves) and full_batch_train.csv (training-set curves). */
static void write_rates_and_curves(const study *st)
{
    outfile *f = csv_open_in(st->x.a.out, "block_lr.csv", "block,name,n,group,blockgd,blockhb,full_blockgd");
    for (int b = 0; b < st->nb; b++)
        csv_row(f, "%d,%s,%zu,%d,%.10g,%.10g,%.10g", b, st->alg3->b[b].name, st->alg3->b[b].n, st->group[b],
                st->cs[C_BGD].lr_b[b], st->cs[C_BHB].lr_b[b], st->cs[C_FULL].lr_b[b]);
    csv_close(f);
    const char *cols[7] = {"adamw", "adam_beta1_0", "gd", "heavy_ball", "blockgd_hessian_init", "blockgd_searched",
                           "blockhb_searched"};
    const ttexp_record *recs[7] = {best_of(st, S_ADAMW), best_of(st, S_ADAM0), best_of(st, S_GD), best_of(st, S_HB),
                                   best_of(st, S_BGD), &st->fin[C_BGD].rec, &st->fin[C_BHB].rec};
    char *path = path_join(st->x.a.out, "eval.csv");
    ttexp_write_curves(path, cols, recs, 7, &st->sc, 1);
    free(path);
    const char *fcols[3] = {"adamw", "gd", "blockgd_searched"};
    const ttexp_record *frecs[3] = {best_of(st, F_ADAMW), best_of(st, F_GD), &st->fin[C_FULL].rec};
    path = path_join(st->x.a.out, "full_batch_train.csv");
    ttexp_write_curves(path, fcols, frecs, 3, &st->sc, 0);
    free(path);
}

static exp2_stats judge(study *st)
{
    const ttexp_record *A = best_of(st, S_ADAMW), *A0 = best_of(st, S_ADAM0), *GD = best_of(st, S_GD),
                       *HB = best_of(st, S_HB), *B0 = best_of(st, S_BGD), *FA = best_of(st, F_ADAMW),
                       *FG = best_of(st, F_GD);
    const ttexp_record *B = &st->fin[C_BGD].rec, *BH = &st->fin[C_BHB].rec, *FB = &st->fin[C_FULL].rec;
    exp2_stats r;
    r.blockgd = ttexp_excess_share(&st->e, B, A, NULL);
    r.gd = ttexp_excess_share(&st->e, GD, A, NULL);
    r.blockhb = ttexp_excess_share(&st->e, BH, A, NULL);
    r.hb = ttexp_excess_share(&st->e, HB, A, NULL);
    r.blockgd_b1_0 = ttexp_excess_share(&st->e, B, A0, NULL);
    r.gd_b1_0 = ttexp_excess_share(&st->e, GD, A0, NULL);
    r.full = ttexp_train_excess_share(&st->full, FB, FA);
    r.full_gd = ttexp_train_excess_share(&st->full, FG, FA);
    r.hessian_rule = ttexp_excess_share(&st->e, B0, A, NULL);
    return r;
}

static void write_stats(const study *st, const exp2_stats *r)
{
    outfile *f = stats_open(st->x.a.out);
    stats_put(f, "exp2_blockwise_gd.blockgd_excess", r->blockgd);
    stats_put(f, "exp2_blockwise_gd.control.gd_excess", r->gd);
    stats_put(f, "exp2_blockwise_gd.blockhb_excess", r->blockhb);
    stats_put(f, "exp2_blockwise_gd.control.heavy_ball_excess", r->hb);
    stats_put(f, "exp2_blockwise_gd.blockgd_excess_over_adam_b1_0", r->blockgd_b1_0);
    stats_put(f, "exp2_blockwise_gd.control.gd_excess_over_adam_b1_0", r->gd_b1_0);
    stats_put(f, "exp2_blockwise_gd.full_batch_blockgd_excess", r->full);
    stats_put(f, "exp2_blockwise_gd.control.full_batch_gd_excess", r->full_gd);
    stats_put(f, "exp2_blockwise_gd.blockgd_hessian_rule_excess", r->hessian_rule);
    stats_put(f, "exp2_blockwise_gd.grids_at_bound", st->at_bound);
    stats_put(f, "exp2_blockwise_gd.coordinate_groups_at_bound", st->cs[C_BGD].at_bound + st->cs[C_BHB].at_bound +
                                                        st->cs[C_FULL].at_bound);
    csv_close(f);
}

static void write_claims(study *st, const exp2_stats *r)
{
    const exp2_args *x = &st->x;
    const ttexp_record *A = best_of(st, S_ADAMW), *FA = best_of(st, F_ADAMW);
    outfile *f = outfile_open_in(x->a.out, "claims.txt");
    FILE *cl = outfile_fp(f);
    fprintf(cl, "exp2_blockwise_gd: 1-layer Transformer, %ld steps, seed %ld; coordinate search over %d %s, %d "
                "pass(es); full batch on %d sequences; %ld training runs\n", x->a.steps, x->a.seed, st->ngroups,
            x->per_block ? "Algorithm 3 blocks" : "layers", x->passes, x->train_set, st->runs);
    run_note("search seconds: %.1f", wall_seconds() - st->t0);
    fprintf(cl, "learning-rate searches (%d of %d not interior; coordinate factors at a bound: %d, %d, %d):\n",
            st->at_bound, (int)NSEARCH, st->cs[C_BGD].at_bound, st->cs[C_BHB].at_bound, st->cs[C_FULL].at_bound);
    for (int k = 0; k < NSEARCH; k++) ttexp_print_search(cl, &st->g[k]);
    fprintf(cl, "held-out loss at the end (floor %.4f): AdamW %.4f, Adam beta1 = 0 %.4f, GD %.4f, heavy ball %.4f, "
                "blockwise GD (Hessian rule) %.4f, blockwise GD searched %.4f, blockwise heavy ball searched %.4f\n",
            ttexp_optimal_loss(&st->e), A->final_eval, best_of(st, S_ADAM0)->final_eval, best_of(st, S_GD)->final_eval,
            best_of(st, S_HB)->final_eval, best_of(st, S_BGD)->final_eval, st->fin[C_BGD].rec.final_eval,
            st->fin[C_BHB].rec.final_eval);
    fprintf(cl, "full batch, training-set loss at the end (initial %.4f): AdamW %.4f, GD %.4f, blockwise GD searched "
                "%.4f\n", FA->train_loss[0], FA->final_train, best_of(st, F_GD)->final_train,
            st->fin[C_FULL].rec.final_train);
    fprintf(cl, "excess over the reference as a share of the reference's progress, (L_X - L_ref)/(L_0 - L_ref):\n");
    ttexp_print_claim(cl, "exp2_blockwise_gd.blockgd_vs_adamw", r->blockgd, r->gd);
    ttexp_print_claim(cl, "exp2_blockwise_gd.heavy_ball_vs_adamw", r->blockhb, r->hb);
    ttexp_print_claim(cl, "exp2_blockwise_gd.blockgd_vs_adam_b1_0", r->blockgd_b1_0, r->gd_b1_0);
    ttexp_print_claim(cl, "exp2_blockwise_gd.full_batch", r->full, r->full_gd);
    outfile_commit_echo(f);
}

static void study_close(study *st)
{
    for (int k = 0; k < NCOORD; k++) {
        ttexp_record_free(&st->fin[k].rec);
        free(st->cs[k].lr_b);
    }
    for (int k = 0; k < NSEARCH; k++) ttexp_search_free(&st->g[k]);
    free(st->eta);
    free(st->group);
    partition_free(st->alg3);
    ttexp_close(&st->full);
    ttexp_close(&st->e);
}

int main(int argc, char **argv)
{
    exp2_args x = parse_args(argc, argv);
    study st = {0};
    study_open(&st, &x);
    search_single_lrs(&st);
    coordinate_passes(&st);
    write_rates_and_curves(&st);
    exp2_stats r = judge(&st);
    write_stats(&st, &r);
    write_claims(&st, &r);
    ttexp_write_reference(&st.e, x.a.out);
    run_write_info(x.a.out, (unsigned long)x.a.seed);
    study_close(&st);
    return 0;
}
