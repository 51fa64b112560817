/* leave_out — Adam leave-x-out on a tiny Transformer (paper Fig. 5: "Adam
 * (leave-one-out) can achieve similar or better performance than Adam ... A similar
 * phenomenon is also observed when we randomly leave out up to three blocks").
 *
 * Adam with the PyTorch default partition (one block per tensor). "Leaving out" a
 * tensor replaces Adam's per-coordinate 1/(√v̂+ε) on it by one searched learning rate
 * (optim's OPTIM_ADAM_LEAVE_OUT: the tensor takes w ← w − lr·η_t·m̂, same momentum and
 * schedule); Adam elsewhere. The rate is η_t = lr·mult / RMS(g_t), with lr Adam's and
 * g_t the tensor's gradient at initialisation (Adam's step is lr·m̂/√v̂ ≈ lr·m̂/RMS(g)),
 * mult searched on a log grid that extends at its edges (lr_range LR_LEAVE_OUT).
 *   - per tensor (Fig. 5d): every tensor left out alone at its best mult, against Adam;
 *   - x = 1, 2, 3: x tensors drawn at random (seeded); for x >= 2 the search starts
 *     from the mults their own leave-one-out searches found and makes one joint
 *     coordinate pass (each tensor's mult on an extending grid, the others fixed):
 *     a joint grid over three rates cannot extend at its edges within the budget.
 * The negative control of both claims is the same tensors frozen (a left-out tensor at
 * learning rate 0): a rule that also accepts not training the tensor at all says
 * nothing about one learning rate being enough.
 * Selection by the mean training loss over the last 10% of steps; comparisons on 512
 * held-out sequences, as shares of Adam's progress (L_X − L_Adam)/(L_0 − L_Adam).
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/lr_grid.h"
#include "harness/seeds.h"
#include "harness/ttexp.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* η_t's centre for every tensor: 1/RMS of its gradient at initialisation on the first batch. */
static void gradient_rms(ttexp *e, double *centre)
{
    model *m = e->m;
    double *g = xmalloc(m->P * sizeof(double));
    memcpy(m->params, e->params0, m->P * sizeof(double));
    m->set_tokens(m, e->eval_tokens, e->s->B < e->s->eval_B ? e->s->B : e->s->eval_B);
    m->grad(m, g);
    for (int t = 0; t < m->ntensors; t++) {
        size_t n = tensor_size(&m->tensors[t]);
        double rms = sqrt(frobenius_sq(n, g + m->tensors[t].offset) / n);
        centre[t] = rms > 0 ? 1 / rms : 1;
    }
    free(g);
}

/* What a leave-out job needs: the tensors left out, their centres; block_lr per tensor. */
typedef struct {
    int nt;
    const double *centre;
    int tensor;                /* the searched tensor (ttexp_search's setter) */
} leave_ctx;

/* block_lr for tensors[0..x-1] at multipliers mult[i] (< 0: frozen), Adam elsewhere. */
static double *leave_rates(const leave_ctx *c, const int *tensors, const double *mult, int x)
{
    double *lr = xcalloc(c->nt, sizeof(double));
    for (int i = 0; i < x; i++) lr[tensors[i]] = mult[i] < 0 ? -1 : mult[i] * c->centre[tensors[i]];
    return lr;
}

static void set_mult(ttexp_method *mt, double x, double **owned, void *ctx)
{
    const leave_ctx *c = ctx;
    *owned = leave_rates(c, &c->tensor, &x, 1);
    mt->cfg.block_lr = *owned;
}

static void leave_job(ttexp_job *j, const leave_ctx *c, const partition *alg2, double adam_lr, const int *tensors,
                      const double *mult, int x, const ttexp_schedule *sc, size_t P)
{
    *j = (ttexp_job){.method = ttexp_method_of("Adam leave-out", OPTIM_ADAM_LEAVE_OUT, alg2, adam_lr),
                     .owned = leave_rates(c, tensors, mult, x)};
    j->method.cfg.block_lr = j->owned;
    ttexp_record_alloc(&j->rec, sc, P, 0);
}

/* One coordinate pass over a leave-x-out set (x >= 2): each tensor's multiplier mu[i] in
 * turn, the others fixed, on an lr_grid around its value in the per-tensor grids' spacing
 * (step) that extends at its edges within the leave-out bounds. *cur is the run of the
 * current multipliers; it is replaced by any better run. Returns the searches that ended
 * at a bound. */
static int joint_pass(ttexp_job *cur, double *mu, const int *ts, int x, double step, const leave_ctx *c,
                      const partition *alg2, double adam_lr, const ttexp_setup *s, const ttexp_schedule *sc,
                      int threads)
{
    const lr_range *range = lr_range_of(LR_LEAVE_OUT);
    size_t P = ttexp_param_count(s);
    int at_bound = 0;
    for (int i = 0; i < x; i++) {
        /* the first grid: the current value and its neighbours in the lattice that lie in the bounds */
        int has_lo = mu[i] / step >= range->lo_bound * (1 - 1e-9), has_hi = mu[i] * step <= range->hi_bound * (1 + 1e-9);
        if (!has_lo && !has_hi) continue;
        lr_grid g;
        lr_grid_init(&g, has_lo ? mu[i] / step : mu[i], has_hi ? mu[i] * step : mu[i], has_lo + 1 + has_hi,
                     range->lo_bound, range->hi_bound);
        lr_grid_add(&g, mu[i], cur->rec.score);
        double xs[LR_GRID_MAX];
        for (int k; (k = lr_grid_next(&g, xs)) > 0;) {
            ttexp_job jobs[2];
            if (k > 2) DIE("joint pass: %d points proposed at once", k);
            for (int j = 0; j < k; j++) {
                double trial[3];
                memcpy(trial, mu, x * sizeof(double));
                trial[i] = xs[j];
                leave_job(&jobs[j], c, alg2, adam_lr, ts, trial, x, sc, P);
            }
            int quiet = core_quiet;
            core_quiet = 1;
            ttexp_run_jobs(s, sc, jobs, k, threads, "joint");
            core_quiet = quiet;
            for (int j = 0; j < k; j++) {
                lr_grid_add(&g, xs[j], jobs[j].rec.score);
                if (jobs[j].rec.score < cur->rec.score) { /* keep the better run */
                    ttexp_record_free(&cur->rec);
                    free(cur->owned);
                    *cur = jobs[j];
                    mu[i] = xs[j];
                } else {
                    ttexp_record_free(&jobs[j].rec);
                    free(jobs[j].owned);
                }
            }
        }
        at_bound += lr_grid_status(&g) != GRID_INTERIOR;
    }
    return at_bound;
}

/* ---- the recipe ------------------------------------------------------------------------ */

#define MAX_DRAWS 20
#define MAX_X 3
static const double FREEZE = -1;   /* a leave-out multiplier: the tensor frozen (lr 0) */

typedef struct {
    ttexp_args a;
    int layers, draws;
} leave_args;

/* One tensor left out alone (Fig. 5d): its multiplier searched, and frozen (the control). */
typedef struct {
    char *label;               /* "leave_out:<tensor>": grid.csv's method */
    ttexp_search search;
    double mult;               /* the best multiplier; NAN if none finished */
    double excess, excess_se;  /* over Adam as a share of its progress; +inf if none finished */
    double frozen, frozen_se;  /* the same for the tensor frozen */
} tensor_leave;

/* x tensors drawn at random and left out together, at their own searched multipliers
 * (x >= 2: after one joint coordinate pass), and frozen. */
typedef struct {
    int x, tensor[MAX_X];
    double mult[MAX_X];
    ttexp_job *job, *frozen_job;  /* x >= 2: into the study's jobs; x = 1: NULL (the per-tensor runs) */
    const ttexp_record *rec, *frozen_rec;
    double excess, excess_se, frozen, frozen_se;
} leave_set;

typedef struct {
    leave_args x;
    ttexp e;
    ttexp_schedule sc;
    int nt, points, adam_points;
    partition *alg2;
    double *centre;            /* (nt) 1/RMS of each tensor's gradient at initialisation */
    leave_ctx ctx;
    ttexp_search adam;
    const ttexp_record *A;     /* Adam at its best lr */
    double adam_lr;
    tensor_leave *one;         /* (nt) */
    ttexp_job *frozen;         /* (nt) each tensor frozen alone */
    leave_set set[MAX_X + 1][MAX_DRAWS];  /* [x][draw], x = 1..3 */
    ttexp_job *xjobs;          /* per x = 2, 3 and draw: left out, frozen */
    int nxjobs;
    int at_bound;              /* searches (grids and joint passes) that did not end interior */
} study;

/* The claims' statistics with their controls (the same tensors frozen). */
typedef struct {
    int on_par, frozen_on_par;            /* tensors on par with Adam when left out alone */
    int better, frozen_better;            /* tensors strictly better than Adam (excess < 0): Fig. 5(d)'s "for most blocks" */
    double share, share_frozen;           /* the same as shares of the tensors */
    double worst[MAX_X + 1], worst_frozen[MAX_X + 1]; /* per x, the worst draw's excess */
    double worst_x, worst_x_frozen;       /* the worst over x = 1, 2, 3 */
} leave_stats;

static leave_args parse_args(int argc, char **argv)
{
    leave_args x = {.a = TTEXP_ARGS("results/leave_out")};
    const cli_opt opts[] = {
        TTEXP_OPTS(x.a, "quick (2 layers, 200 steps, 3-point multiplier grids, 1 draw per x) or paper (4 layers, "
                        "1000, 5, 3); Adam's lr grid has 5 points (paper 9)",
                   "points of each tensor's first multiplier grid, 2..9 (0: from --scale)"),
        {"draws", OPT_INT, &x.draws, "random tensor sets per x = 1, 2, 3, 1..20 (0: from --scale)"},
        {"layers", OPT_INT, &x.layers, "Transformer layers, 1..12 (0: from --scale)"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Adam leave-x-out (paper Fig. 5) on a tiny Transformer (4 layers at paper scale, 2 at quick\n"
              "scale; V 8, C 16, 4 heads, M 32, T 8, no biases, batch 64). Adam (beta 0.9/0.999, no weight\n"
              "decay) with one block per tensor; a left-out tensor t takes one learning rate\n"
              "eta_t = lr*mult/RMS(g_t at init) on Adam's momentum, mult searched per tensor on a log grid\n"
              "that extends at its edges (first grid [1/10, 10]). Every tensor left out alone (Fig. 5d), and\n"
              "x = 1, 2, 3 random tensors (drawn with --seed) from their own searched mults, with one joint\n"
              "coordinate pass for x >= 2; the control of\n"
              "each is the same tensors frozen (lr 0). Adam's lr from an extending log grid (first\n"
              "[1e-3, 1e-1]). Selection by the mean training loss over the last 10% of steps; comparisons on\n"
              "512 held-out sequences as shares of Adam's progress; stats.csv for make verdicts.",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(&x.a, 200, 1000, 3, 5, 9);
    if (x.draws == 0) x.draws = x.a.paper ? 3 : 1;
    if (x.draws < 1 || x.draws > MAX_DRAWS) die_user("--draws must be in 1..20 (got %d)", x.draws);
    return x;
}

/* The deeper, bias-free model, one block per tensor, and each tensor's rate centre. */
static void study_open(study *st, const leave_args *x)
{
    st->x = *x;
    st->points = x->a.grid;
    st->adam_points = x->a.paper ? 9 : 5; /* as train_compare's AdamW */
    st->sc = ttexp_begin(&st->e, ttexp_layered_setup(&x->a, &st->x.layers), &x->a);
    st->nt = st->e.m->ntensors;
    st->alg2 = partition_alg2(st->e.m);
    st->centre = xmalloc(st->nt * sizeof(double));
    gradient_rms(&st->e, st->centre);
    st->ctx = (leave_ctx){.nt = st->nt, .centre = st->centre};
}

/* Adam's own learning rate, then every tensor left out alone (its multiplier searched)
 * and frozen; the searches into grid.csv. */
static void leave_one_out(study *st)
{
    int threads = st->x.a.threads;
    outfile *gf = ttexp_grid_open(st->x.a.out);
    ttexp_method mt = ttexp_method_of("Adam", OPTIM_ADAM, NULL, 0);
    ttexp_search_run(&st->adam, "adam", st->e.s, &st->sc, &mt, lr_range_of(LR_ADAM), st->adam_points, NULL, NULL,
                     threads);
    ttexp_write_search(gf, &st->adam);
    st->at_bound += ttexp_search_at_bound(&st->adam);
    if (st->adam.best < 0) die_diverged("Adam diverged at every learning rate of its grid");
    st->A = &ttexp_search_best(&st->adam)->rec;
    st->adam_lr = ttexp_search_value(&st->adam);

    st->one = xcalloc(st->nt, sizeof *st->one);
    st->frozen = xcalloc(st->nt, sizeof *st->frozen);
    size_t P = st->e.m->P;
    for (int t = 0; t < st->nt; t++) {
        tensor_leave *o = &st->one[t];
        char label[128];
        snprintf(label, sizeof label, "leave_out:%s", st->e.m->tensors[t].name);
        o->label = xstrdup(label);
        st->ctx.tensor = t;
        mt = ttexp_method_of("Adam leave-one-out", OPTIM_ADAM_LEAVE_OUT, st->alg2, st->adam_lr);
        ttexp_search_run(&o->search, o->label, st->e.s, &st->sc, &mt, lr_range_of(LR_LEAVE_OUT), st->points, set_mult,
                         &st->ctx, threads);
        ttexp_write_search(gf, &o->search);
        st->at_bound += ttexp_search_at_bound(&o->search);
        leave_job(&st->frozen[t], &st->ctx, st->alg2, st->adam_lr, &t, &FREEZE, 1, &st->sc, P);
    }
    csv_close(gf);
    ttexp_run_jobs(st->e.s, &st->sc, st->frozen, st->nt, threads, "frozen tensors");
}

/* Each tensor's best multiplier and its excess over Adam, left out and frozen. */
static void judge_one(study *st)
{
    for (int t = 0; t < st->nt; t++) {
        tensor_leave *o = &st->one[t];
        o->mult = o->search.best >= 0 ? ttexp_search_value(&o->search) : NAN;
        const ttexp_record *r = o->search.best >= 0 ? &ttexp_search_best(&o->search)->rec : NULL;
        o->excess = r ? ttexp_excess_share(&st->e, r, st->A, &o->excess_se) : INFINITY;
        o->frozen = ttexp_excess_share(&st->e, &st->frozen[t].rec, st->A, &o->frozen_se);
    }
}

/* gap.csv: one row per tensor. */
static void write_gap(const study *st)
{
    const model *m = st->e.m;
    outfile *f = csv_open_in(st->x.a.out, "gap.csv", "tensor,name,role,best_mult,status,excess,excess_se,"
                                                     "frozen_excess,frozen_se,best_final_eval,frozen_final_eval,"
                                                     "adam_final_eval");
    for (int t = 0; t < st->nt; t++) {
        const tensor_leave *o = &st->one[t];
        const ttexp_record *r = o->search.best >= 0 ? &ttexp_search_best(&o->search)->rec : NULL;
        csv_row(f, "%d,%s,%s,%g,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", t, m->tensors[t].name,
                role_name(m->tensors[t].role), o->mult, grid_status_name(o->search.status), o->excess, o->excess_se,
                o->frozen, o->frozen_se, r ? r->final_eval : INFINITY, st->frozen[t].rec.final_eval,
                st->A->final_eval);
    }
    csv_close(f);
}

/* x = 1, 2, 3: `draws` sets of x distinct tensors each, drawn with the run's seed. */
static void draw_sets(study *st)
{
    gsl_rng *rng = rng_new(seed_for((unsigned long)st->x.a.seed, SEED_DRAWS));
    for (int x = 1; x <= MAX_X; x++)
        for (int d = 0; d < st->x.draws; d++) {
            leave_set *ls = &st->set[x][d];
            ls->x = x;
            for (int i = 0; i < x; i++) {
                int t, dup;
                do {
                    t = (int)rng_int(rng, (unsigned long)st->nt);
                    dup = 0;
                    for (int k = 0; k < i; k++) dup |= ls->tensor[k] == t;
                } while (dup);
                ls->tensor[i] = t;
            }
        }
    rng_free(rng);
}

/* Every set at its tensors' own searched multipliers and frozen; for x >= 2 one joint
 * coordinate pass from there (a combination of separately searched rates can fail
 * where each alone does not). */
static void leave_x_out(study *st)
{
    int draws = st->x.draws, threads = st->x.a.threads;
    size_t P = st->e.m->P;
    st->xjobs = xcalloc((size_t)4 * draws, sizeof *st->xjobs);
    for (int x = 1; x <= MAX_X; x++)
        for (int d = 0; d < draws; d++) {
            leave_set *ls = &st->set[x][d];
            double fz[MAX_X] = {FREEZE, FREEZE, FREEZE};
            for (int i = 0; i < x; i++) ls->mult[i] = st->one[ls->tensor[i]].mult;
            if (x == 1) continue;
            ls->job = &st->xjobs[st->nxjobs];
            leave_job(&st->xjobs[st->nxjobs++], &st->ctx, st->alg2, st->adam_lr, ls->tensor, ls->mult, x, &st->sc, P);
            ls->frozen_job = &st->xjobs[st->nxjobs];
            leave_job(&st->xjobs[st->nxjobs++], &st->ctx, st->alg2, st->adam_lr, ls->tensor, fz, x, &st->sc, P);
        }
    ttexp_run_jobs(st->e.s, &st->sc, st->xjobs, st->nxjobs, threads, "leave-x-out");
    for (int x = 2; x <= MAX_X; x++)
        for (int d = 0; d < draws; d++) {
            leave_set *ls = &st->set[x][d];
            st->at_bound += joint_pass(ls->job, ls->mult, ls->tensor, x, st->one[ls->tensor[0]].search.g.step,
                                       &st->ctx, st->alg2, st->adam_lr, st->e.s, &st->sc, threads);
        }
}

/* Each set's excess over Adam, left out and frozen; the claims' statistics. */
static leave_stats judge(study *st)
{
    leave_stats r = {.worst = {0, -INFINITY, -INFINITY, -INFINITY},
                     .worst_frozen = {0, -INFINITY, -INFINITY, -INFINITY}};
    for (int t = 0; t < st->nt; t++) {
        r.on_par += st->one[t].excess < TTEXP_ON_PAR;
        r.frozen_on_par += st->one[t].frozen < TTEXP_ON_PAR;
        r.better += st->one[t].excess < 0;
        r.frozen_better += st->one[t].frozen < 0;
    }
    for (int x = 1; x <= MAX_X; x++)
        for (int d = 0; d < st->x.draws; d++) {
            leave_set *ls = &st->set[x][d];
            if (x == 1) {
                const tensor_leave *o = &st->one[ls->tensor[0]];
                ls->rec = o->search.best >= 0 ? &ttexp_search_best(&o->search)->rec : NULL;
                ls->frozen_rec = &st->frozen[ls->tensor[0]].rec;
            } else {
                ls->rec = &ls->job->rec;
                ls->frozen_rec = &ls->frozen_job->rec;
            }
            ls->excess = ls->rec ? ttexp_excess_share(&st->e, ls->rec, st->A, &ls->excess_se) : INFINITY;
            ls->frozen = ttexp_excess_share(&st->e, ls->frozen_rec, st->A, &ls->frozen_se);
            if (ls->excess > r.worst[x]) r.worst[x] = ls->excess;
            if (ls->frozen > r.worst_frozen[x]) r.worst_frozen[x] = ls->frozen;
        }
    r.share = (double)r.on_par / st->nt;
    r.share_frozen = (double)r.frozen_on_par / st->nt;
    r.worst_x = fmax(r.worst[1], fmax(r.worst[2], r.worst[3]));
    r.worst_x_frozen = fmax(r.worst_frozen[1], fmax(r.worst_frozen[2], r.worst_frozen[3]));
    return r;
}

/* leave_x.csv (one row per set) and eval.csv (Adam and the first draw of each x). */
static void write_sets(const study *st)
{
    const model *m = st->e.m;
    outfile *f = csv_open_in(st->x.a.out, "leave_x.csv", "x,draw,tensors,mults,excess,excess_se,frozen_excess,"
                                                         "frozen_se,final_eval,frozen_final_eval,adam_final_eval");
    for (int x = 1; x <= MAX_X; x++)
        for (int d = 0; d < st->x.draws; d++) {
            const leave_set *ls = &st->set[x][d];
            char names[400] = "", mults[80] = "";
            for (int i = 0; i < x; i++) {
                size_t ln = strlen(names), lm = strlen(mults);
                snprintf(names + ln, sizeof names - ln, "%s%s", i ? " " : "", m->tensors[ls->tensor[i]].name);
                snprintf(mults + lm, sizeof mults - lm, "%s%g", i ? " " : "", ls->mult[i]);
            }
            csv_row(f, "%d,%d,%s,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", x, d, names, mults, ls->excess,
                    ls->excess_se, ls->frozen, ls->frozen_se, ls->rec ? ls->rec->final_eval : INFINITY,
                    ls->frozen_rec->final_eval, st->A->final_eval);
        }
    csv_close(f);
    const char *cols[MAX_X + 1] = {"adam", "leave_1_out", "leave_2_out", "leave_3_out"};
    const ttexp_record *curves[MAX_X + 1] = {st->A, st->set[1][0].rec, st->set[2][0].rec, st->set[3][0].rec};
    if (curves[1]) {
        char *path = path_join(st->x.a.out, "eval.csv");
        ttexp_write_curves(path, cols, curves, MAX_X + 1, &st->sc, 1);
        free(path);
    }
}

static void write_stats(const study *st, const leave_stats *r)
{
    outfile *f = stats_open(st->x.a.out);
    stats_put_share(f, r->on_par, st->nt, "leave_out.share_on_par");
    stats_put_share(f, r->frozen_on_par, st->nt, "leave_out.control.frozen_share_on_par");
    stats_put_share(f, r->better, st->nt, "leave_out.share_better");
    stats_put_share(f, r->frozen_better, st->nt, "leave_out.control.frozen_share_better");
    stats_put(f, "leave_out.worst_x_excess", r->worst_x);
    stats_put(f, "leave_out.control.frozen_worst_x_excess", r->worst_x_frozen);
    for (int x = 1; x <= MAX_X; x++) {
        stats_putf(f, r->worst[x], "leave_out.x%d_excess", x);
        stats_putf(f, r->worst_frozen[x], "leave_out.control.frozen_x%d_excess", x);
    }
    stats_put(f, "leave_out.grids_at_bound", st->at_bound);
    csv_close(f);
}

static void write_claims(const study *st, const leave_stats *r)
{
    const leave_args *x = &st->x;
    int nt = st->nt;
    outfile *f = outfile_open_in(x->a.out, "claims.txt");
    FILE *c = outfile_fp(f);
    fprintf(c, "leave_out: %d-layer Transformer (P = %zu, %d tensors), %ld steps, seed %ld; Adam lr %.4g, held-out "
               "%.4f\n", x->layers, st->e.m->P, nt, x->a.steps, x->a.seed, st->adam_lr, st->A->final_eval);
    fprintf(c, "learning-rate searches: %d not interior (grid.csv; %d per-tensor searches, Adam's, and the joint "
               "passes' %d)\n", st->at_bound, nt, 5 * x->draws);
    ttexp_print_search(c, &st->adam);
    for (int t = 0; t < nt; t++)
        if (ttexp_search_at_bound(&st->one[t].search)) ttexp_print_search(c, &st->one[t].search);
    fprintf(c, "excess over Adam as a share of Adam's progress, (L_X - L_Adam)/(L_0 - L_Adam); on par: < %g\n",
            TTEXP_ON_PAR);
    fprintf(c, "per tensor (Fig. 5d, gap.csv): %d of %d tensors on par when left out at their searched lr; %d of %d "
               "when frozen\n", r->on_par, nt, r->frozen_on_par, nt);
    for (int k = 1; k <= MAX_X; k++)
        fprintf(c, "x = %d (worst of %d draw(s), leave_x.csv): %+.4f; frozen %+.4f\n", k, x->draws, r->worst[k],
                r->worst_frozen[k]);
    ttexp_print_claim(c, "leave_out.per_tensor", r->share, r->share_frozen);
    ttexp_print_claim(c, "leave_out.per_tensor_better", (double)r->better / nt, (double)r->frozen_better / nt);
    ttexp_print_claim(c, "leave_out.random_x", r->worst_x, r->worst_x_frozen);
    outfile_commit_echo(f);
}

static void study_close(study *st)
{
    ttexp_jobs_free(st->xjobs, st->nxjobs);
    for (int t = 0; t < st->nt; t++) {
        ttexp_search_free(&st->one[t].search);
        free(st->one[t].label);
    }
    free(st->one);
    ttexp_jobs_free(st->frozen, st->nt);
    ttexp_search_free(&st->adam);
    free(st->centre);
    partition_free(st->alg2);
    ttexp_close(&st->e);
}

int main(int argc, char **argv)
{
    leave_args x = parse_args(argc, argv);
    study *st = xcalloc(1, sizeof *st);
    study_open(st, &x);
    leave_one_out(st);
    judge_one(st);
    write_gap(st);
    draw_sets(st);
    leave_x_out(st);
    leave_stats r = judge(st);
    write_sets(st);
    write_stats(st, &r);
    write_claims(st, &r);
    ttexp_write_reference(&st->e, x.a.out);
    run_write_info(x.a.out, (unsigned long)x.a.seed);
    study_close(st);
    free(st);
    return 0;
}
