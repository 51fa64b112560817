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
#include "harness/ttexp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* η_t's centre for every tensor: 1/RMS of its gradient at initialisation on the first batch. */
static void gradient_rms(ttexp *e, double *centre)
{
    model *m = e->m;
    double *g = xmalloc(m->P * sizeof(double));
    memcpy(m->params, e->params0, m->P * sizeof(double));
    tt_set_batch(m, e->eval_tokens, e->s->B < e->s->eval_B ? e->s->B : e->s->eval_B);
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
    *j = (ttexp_job){ttexp_method_of("Adam leave-out", OPTIM_ADAM_LEAVE_OUT, alg2, adam_lr), {0},
                     leave_rates(c, tensors, mult, x)};
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
    size_t P = tt_param_count(&s->cfg);
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

int main(int argc, char **argv)
{
    ttexp_args a = TTEXP_ARGS("results/leave_out");
    int layers = 0, draws = 0;
    const cli_opt opts[] = {
        TTEXP_OPTS(a, "quick (2 layers, 200 steps, 3-point multiplier grids, 1 draw per x) or paper (4 layers, 1000, "
                      "5, 3); Adam's lr grid has 5 points (paper 9)",
                   "points of each tensor's first multiplier grid, 2..9 (0: from --scale)"),
        {"draws", OPT_INT, &draws, "random tensor sets per x = 1, 2, 3, 1..20 (0: from --scale)"},
        {"layers", OPT_INT, &layers, "Transformer layers, 1..12 (0: from --scale)"},
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
    ttexp_args_finish(&a, 200, 1000, 3, 5, 9);
    int points = a.grid, threads = a.threads, adam_points = a.paper ? 9 : 5; /* as train_compare's AdamW */
    if (draws == 0) draws = a.paper ? 3 : 1;
    if (draws < 1 || draws > 20) die_user("--draws must be in 1..20 (got %d)", draws);
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, ttexp_layered_setup(&a, &layers), &a);
    model *m = e.m;
    size_t P = m->P;
    int nt = m->ntensors, at_bound = 0;
    partition *alg2 = partition_alg2(m);
    double *centre = xmalloc(nt * sizeof(double));
    gradient_rms(&e, centre);
    leave_ctx ctx = {nt, centre, 0};

    /* Adam's own learning rate */
    outfile *gf = ttexp_grid_open(a.out);
    ttexp_search adam;
    ttexp_method mt = ttexp_method_of("Adam", OPTIM_ADAM, NULL, 0);
    ttexp_search_run(&adam, "adam", e.s, &sc, &mt, lr_range_of(LR_ADAM), adam_points, NULL, NULL, threads);
    ttexp_write_search(gf, &adam);
    at_bound += ttexp_search_at_bound(&adam);
    if (adam.best < 0) die_diverged("Adam diverged at every learning rate of its grid");
    const ttexp_record *A = &ttexp_search_best(&adam)->rec;
    double adam_lr = ttexp_search_value(&adam);

    /* every tensor left out alone, its multiplier searched; and frozen */
    ttexp_search *one = xcalloc(nt, sizeof *one);
    ttexp_job *frozen = xcalloc(nt, sizeof *frozen);
    double *best_mult = xmalloc(nt * sizeof(double)), *ex = xmalloc(nt * sizeof(double));
    double *ex_se = xmalloc(nt * sizeof(double)), *ex_frozen = xmalloc(nt * sizeof(double));
    double *fz_se = xmalloc(nt * sizeof(double));
    char **labels = xcalloc(nt, sizeof *labels);
    const double FREEZE = -1;
    for (int t = 0; t < nt; t++) {
        char label[128];
        snprintf(label, sizeof label, "leave_out:%s", m->tensors[t].name);
        labels[t] = xstrdup(label);
        ctx.tensor = t;
        mt = ttexp_method_of("Adam leave-one-out", OPTIM_ADAM_LEAVE_OUT, alg2, adam_lr);
        ttexp_search_run(&one[t], labels[t], e.s, &sc, &mt, lr_range_of(LR_LEAVE_OUT), points, set_mult, &ctx, threads);
        ttexp_write_search(gf, &one[t]);
        at_bound += ttexp_search_at_bound(&one[t]);
        leave_job(&frozen[t], &ctx, alg2, adam_lr, &t, &FREEZE, 1, &sc, P);
    }
    csv_close(gf);
    ttexp_run_jobs(e.s, &sc, frozen, nt, threads, "frozen tensors");
    const double ON_PAR = TTEXP_ON_PAR;
    int n_on_par = 0, n_frozen_on_par = 0;
    outfile *f = csv_open_in(a.out, "gap.csv", "tensor,name,role,best_mult,status,excess,excess_se,frozen_excess,"
                                             "frozen_se,best_final_eval,frozen_final_eval,adam_final_eval");
    for (int t = 0; t < nt; t++) {
        best_mult[t] = one[t].best >= 0 ? ttexp_search_value(&one[t]) : NAN;
        const ttexp_record *r = one[t].best >= 0 ? &ttexp_search_best(&one[t])->rec : NULL;
        ex[t] = r ? ttexp_excess_share(&e, r, A, &ex_se[t]) : INFINITY;
        ex_frozen[t] = ttexp_excess_share(&e, &frozen[t].rec, A, &fz_se[t]);
        n_on_par += ex[t] < ON_PAR;
        n_frozen_on_par += ex_frozen[t] < ON_PAR;
        csv_row(f, "%d,%s,%s,%g,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", t, m->tensors[t].name,
                role_name(m->tensors[t].role), best_mult[t], grid_status_name(one[t].status), ex[t], ex_se[t],
                ex_frozen[t], fz_se[t], r ? r->final_eval : INFINITY, frozen[t].rec.final_eval, A->final_eval);
    }
    csv_close(f);

    /* x = 1, 2, 3: random tensor sets at their own searched multipliers, and frozen */
    gsl_rng *rng = rng_new(seed_for((unsigned long)a.seed, SEED_DRAWS));
    f = csv_open_in(a.out, "leave_x.csv", "x,draw,tensors,mults,excess,excess_se,frozen_excess,frozen_se,final_eval,"
                                        "frozen_final_eval,adam_final_eval");
    ttexp_job *xj = xcalloc((size_t)4 * draws, sizeof *xj); /* per x = 2, 3 and draw: leave-out, frozen */
    double worst[4] = {0, -INFINITY, -INFINITY, -INFINITY}, worst_fz[4] = {0, -INFINITY, -INFINITY, -INFINITY};
    const ttexp_record *curves[4] = {A, NULL, NULL, NULL};
    int tens[4][20][3];
    for (int x = 1; x <= 3; x++)
        for (int d = 0; d < draws; d++)
            for (int i = 0; i < x; i++) { /* distinct random tensors */
                int t, dup;
                do {
                    t = (int)rng_int(rng, (unsigned long)nt);
                    dup = 0;
                    for (int k = 0; k < i; k++) dup |= tens[x][d][k] == t;
                } while (dup);
                tens[x][d][i] = t;
            }
    rng_free(rng);
    int nj = 0;
    double mus[4][20][3];
    for (int x = 1; x <= 3; x++)
        for (int d = 0; d < draws; d++) {
            double fz[3] = {FREEZE, FREEZE, FREEZE};
            for (int i = 0; i < x; i++) mus[x][d][i] = best_mult[tens[x][d][i]];
            if (x == 1) continue;
            leave_job(&xj[nj++], &ctx, alg2, adam_lr, tens[x][d], mus[x][d], x, &sc, P);
            leave_job(&xj[nj++], &ctx, alg2, adam_lr, tens[x][d], fz, x, &sc, P);
        }
    ttexp_run_jobs(e.s, &sc, xj, nj, threads, "leave-x-out");
    /* from the per-tensor optima, one joint coordinate pass (a combination of separately
     * searched rates can fail where each alone does not) */
    for (int x = 2, k = 0; x <= 3; x++)
        for (int d = 0; d < draws; d++, k += 2)
            at_bound += joint_pass(&xj[k], mus[x][d], tens[x][d], x, one[tens[x][d][0]].g.step, &ctx, alg2, adam_lr,
                                   e.s, &sc, threads);
    for (int x = 1, k = 0; x <= 3; x++)
        for (int d = 0; d < draws; d++) {
            const int *ts = tens[x][d];
            const ttexp_record *r, *rf;
            if (x == 1) {
                r = one[ts[0]].best >= 0 ? &ttexp_search_best(&one[ts[0]])->rec : NULL;
                rf = &frozen[ts[0]].rec;
            } else {
                r = &xj[k++].rec;
                rf = &xj[k++].rec;
            }
            double se, fse, v = r ? ttexp_excess_share(&e, r, A, &se) : INFINITY;
            double vf = ttexp_excess_share(&e, rf, A, &fse);
            if (v > worst[x]) worst[x] = v;
            if (vf > worst_fz[x]) worst_fz[x] = vf;
            if (d == 0) curves[x] = r;
            char names[400] = "", mults[80] = "";
            for (int i = 0; i < x; i++) {
                size_t ln = strlen(names), lm = strlen(mults);
                snprintf(names + ln, sizeof names - ln, "%s%s", i ? " " : "", m->tensors[ts[i]].name);
                snprintf(mults + lm, sizeof mults - lm, "%s%g", i ? " " : "", mus[x][d][i]);
            }
            csv_row(f, "%d,%d,%s,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", x, d, names, mults, v, se, vf, fse,
                    r ? r->final_eval : INFINITY, rf->final_eval, A->final_eval);
        }
    csv_close(f);
    const char *cols[4] = {"adam", "leave_1_out", "leave_2_out", "leave_3_out"};
    if (curves[1]) {
        char *path = path_join(a.out, "eval.csv");
        ttexp_write_curves(path, cols, curves, 4, &sc, 1);
        free(path);
    }

    double share = (double)n_on_par / nt, share_fz = (double)n_frozen_on_par / nt;
    double worst_x = fmax(worst[1], fmax(worst[2], worst[3])), worst_x_fz = fmax(worst_fz[1], fmax(worst_fz[2], worst_fz[3]));
    outfile *st = stats_open(a.out);
    stats_put(st, "leave_out.share_on_par", share);
    stats_put(st, "leave_out.control.frozen_share_on_par", share_fz);
    stats_put(st, "leave_out.worst_x_excess", worst_x);
    stats_put(st, "leave_out.control.frozen_worst_x_excess", worst_x_fz);
    for (int x = 1; x <= 3; x++) {
        stats_putf(st, worst[x], "leave_out.x%d_excess", x);
        stats_putf(st, worst_fz[x], "leave_out.control.frozen_x%d_excess", x);
    }
    stats_put(st, "leave_out.grids_at_bound", at_bound);
    csv_close(st);

    char *path = path_join(a.out, "claims.txt");
    f = outfile_open(path);
    FILE *c = outfile_fp(f);
    fprintf(c, "leave_out: %d-layer Transformer (P = %zu, %d tensors), %ld steps, seed %ld; Adam lr %.4g, held-out "
               "%.4f\n", layers, P, nt, a.steps, a.seed, adam_lr, A->final_eval);
    fprintf(c, "learning-rate searches: %d not interior (grid.csv; %d per-tensor searches, Adam's, and the joint "
               "passes' %d)\n", at_bound, nt, 5 * draws);
    ttexp_print_search(c, &adam);
    for (int t = 0; t < nt; t++)
        if (ttexp_search_at_bound(&one[t])) ttexp_print_search(c, &one[t]);
    fprintf(c, "excess over Adam as a share of Adam's progress, (L_X - L_Adam)/(L_0 - L_Adam); on par: < %g\n", ON_PAR);
    fprintf(c, "per tensor (Fig. 5d, gap.csv): %d of %d tensors on par when left out at their searched lr; %d of %d "
               "when frozen\n", n_on_par, nt, n_frozen_on_par, nt);
    for (int x = 1; x <= 3; x++)
        fprintf(c, "x = %d (worst of %d draw(s), leave_x.csv): %+.4f; frozen %+.4f\n", x, draws, worst[x], worst_fz[x]);
    ttexp_print_claim(c, "leave_out.per_tensor", share, share_fz);
    ttexp_print_claim(c, "leave_out.random_x", worst_x, worst_x_fz);
    outfile_commit(f);
    echo_file(path);
    free(path);
    ttexp_write_reference(&e, a.out);
    run_write_info(a.out, (unsigned long)a.seed);

    ttexp_jobs_free(xj, nj);
    for (int t = 0; t < nt; t++) {
        ttexp_search_free(&one[t]);
        free(labels[t]);
    }
    free(labels);
    ttexp_jobs_free(frozen, nt);
    ttexp_search_free(&adam);
    free(one);
    free(best_mult);
    free(ex);
    free(ex_se);
    free(ex_frozen);
    free(fz_se);
    free(centre);
    partition_free(alg2);
    ttexp_close(&e);
    return 0;
}
