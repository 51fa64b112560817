/* leave_out — Adam leave-x-out on a 4-layer tiny Transformer (paper Fig. 5).
 *
 * Adam with the PyTorch default partition (one block per tensor). "Leaving
 * out" a tensor replaces Adam's per-coordinate 1/(√v̂+ε) on it by one
 * grid-searched learning rate (optim's OPTIM_ADAM_LEAVE_OUT: the tensor takes
 * w ← w − lr·η_t·m̂, same momentum and schedule); Adam elsewhere.
 *   - per-tensor gap (Fig. 5d): for every tensor, the best leave-one-out loss
 *     over its grid minus Adam's;
 *   - x = 1, 2, 3: x tensors drawn at random (seeded), a joint grid over their
 *     x learning rates (grid^x runs), the best run's curve against Adam's.
 * The grid for tensor t is centred on Adam's effective step at initialisation:
 * η_t = lr·mult / RMS(g_t) with lr Adam's and g_t the tensor's gradient at
 * initialisation (Adam's step is lr·m̂/√v̂ ≈ lr·m̂/RMS(g)), mult on a log grid. Selection by the mean training loss over the last 10% of
 * steps; reported: the loss on 512 held-out sequences.
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

/* A leave-out job: tensors[0..x-1] left out at multipliers mult[0..x-1]. */
static void leave_out_job(ttexp_job *j, const partition *alg2, double *block_lr, const int *tensors, const double *mult,
                          int x, const double *centre, double adam_lr, const ttexp_schedule *sc, size_t P)
{
    for (int b = 0; b < alg2->nblocks; b++) block_lr[b] = 0;
    for (int i = 0; i < x; i++) block_lr[tensors[i]] = mult[i] * centre[tensors[i]]; /* η = lr·mult/RMS(g) */
    j->method = ttexp_method_of("Adam leave-out", OPTIM_ADAM_LEAVE_OUT, alg2, adam_lr);
    j->method.cfg.block_lr = block_lr;
    ttexp_record_alloc(&j->rec, sc, P, 0);
}

int main(int argc, char **argv)
{
    ttexp_args a = TTEXP_ARGS("results/leave_out");
    int layers = 0, draws = 0;
    const cli_opt opts[] = {
        TTEXP_OPTS(a, "quick (2 layers, 200 steps, 3-point grids, 1 draw per x) or paper (4 layers, 1000, 5, 3)",
                   "points of each left-out tensor's lr grid (0: from --scale)"),
        {"draws", OPT_INT, &draws, "random tensor sets per x = 1, 2, 3 (0: from --scale)"},
        {"layers", OPT_INT, &layers, "Transformer layers (0: from --scale)"},
    };
    cli_parse(argc, argv,
              "Adam leave-x-out (paper Fig. 5) on a tiny Transformer (4 layers at paper scale, 2 at quick\n"
              "scale; V 8, C 16, 4 heads, M 32, T 8, no biases, batch 64). Adam (beta 0.9/0.999, no weight\n"
              "decay) with one block per tensor; a left-out tensor t takes one learning rate\n"
              "eta_t = lr*mult/RMS(g_t at init) on Adam's momentum (grid over mult in [1/10, 10]). Per-tensor\n"
              "gap for every tensor, and joint grids for x = 1, 2, 3 random tensors (drawn with --seed).\n"
              "Adam's lr from a log grid in [1e-3, 1e-1]. Selection by the mean training loss over the last\n"
              "10% of steps; comparisons on 512 held-out sequences, paired per position, with standard errors.",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(&a, 200, 1000, 3, 5, 9);
    int ngrid = a.grid, threads = a.threads;
    if (layers == 0) layers = a.paper ? 4 : 2;
    if (draws == 0) draws = a.paper ? 3 : 1;
    if (draws < 1 || draws > 20) die_user("--draws must be in 1..20 (got %d)", draws);
    if (layers < 1 || layers > 12) die_user("--layers must be in 1..12 (got %d)", layers);
    ttexp_setup setup = ttexp_default_setup(&a);
    setup.cfg.layers = layers;
    setup.cfg.bias = 0;
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, setup, &a);
    model *m = e.m;
    size_t P = m->P;
    int nt = m->ntensors;
    partition *alg2 = partition_alg2(m);
    double *centre = xmalloc(nt * sizeof(double)), mult[9];
    gradient_rms(&e, centre);
    ttexp_log_grid(mult, ngrid > 1 ? 0.1 : 1, 10, ngrid);

    /* Adam's own learning rate */
    outfile *f = csv_open_in(a.out, "grid.csv", TTEXP_GRID_HEADER);
    ttexp_method adam = ttexp_method_of("Adam", OPTIM_ADAM, NULL, 0);
    int ba;
    const lr_range *range = lr_range_of(LR_ADAM);
    ttexp_job *ga = ttexp_grid(e.s, &sc, &adam, range->lo, range->hi, 5, threads, &ba);
    ttexp_write_grid(f, "adam", ga, 5, ba);
    csv_close(f);
    double adam_lr = ga[ba].method.lr, adam_score = ga[ba].rec.score;

    /* x = 1 for every tensor: the per-tensor gap */
    int njobs = nt * ngrid;
    ttexp_job *jobs = xcalloc(njobs, sizeof *jobs);
    double *lrs = xmalloc((size_t)njobs * nt * sizeof(double));
    for (int t = 0; t < nt; t++)
        for (int k = 0; k < ngrid; k++)
            leave_out_job(&jobs[t * ngrid + k], alg2, lrs + (size_t)(t * ngrid + k) * nt, &t, &mult[k], 1, centre,
                          adam_lr, &sc, P);
    ttexp_run_jobs(e.s, &sc, jobs, njobs, threads, "leave-one-out");
    f = csv_open_in(a.out, "gap.csv", "tensor,name,role,best_mult,best_score,gap_eval,gap_se,best_final_eval,adam_final_eval");
    int n_not_worse = 0;
    const double *w_adam = ga[ba].rec.final_params;
    for (int t = 0; t < nt; t++) {
        int b = ttexp_best(jobs + t * ngrid, ngrid);
        const ttexp_record *r = &jobs[t * ngrid + b].rec;
        double gap = INFINITY, se = 0;
        if (isfinite(r->final_eval)) ttexp_paired_diff(&e, r->final_params, w_adam, &gap, &se);
        n_not_worse += gap <= 2 * se;
        csv_row(f, "%d,%s,%s,%g,%.10g,%.10g,%.10g,%.10g,%.10g", t, m->tensors[t].name,
                role_name(m->tensors[t].role), mult[b], r->score, gap, se, r->final_eval, ga[ba].rec.final_eval);
    }
    csv_close(f);
    ttexp_jobs_free(jobs, njobs);
    free(lrs);

    /* x = 2, 3: random tensor sets, joint grids */
    gsl_rng *r = rng_new(seed_for((unsigned long)a.seed, SEED_DRAWS));
    f = csv_open_in(a.out, "leave_x.csv", "x,draw,tensors,best_mults,best_score,adam_score,diff_eval,diff_se,"
                                        "best_final_eval,adam_final_eval");
    const ttexp_record *curves[4] = {&ga[ba].rec, NULL, NULL, NULL};
    ttexp_job *keep[4] = {NULL};
    int keep_n[4] = {0};
    double best_gap_x[4] = {0}, best_se_x[4] = {0};
    for (int x = 1; x <= 3; x++) {
        best_gap_x[x] = INFINITY;
        for (int d = 0; d < draws; d++) {
            int tens[3];
            for (int i = 0; i < x; i++) { /* distinct random tensors */
                int t, dup;
                do {
                    t = (int)rng_int(r, (unsigned long)nt);
                    dup = 0;
                    for (int k = 0; k < i; k++) dup |= tens[k] == t;
                } while (dup);
                tens[i] = t;
            }
            int nj = 1;
            for (int i = 0; i < x; i++) nj *= ngrid;
            ttexp_job *jx = xcalloc(nj, sizeof *jx);
            double *lx = xmalloc((size_t)nj * nt * sizeof(double));
            for (int c = 0; c < nj; c++) {
                double mu[3];
                for (int i = 0, rest = c; i < x; i++, rest /= ngrid) mu[i] = mult[rest % ngrid];
                leave_out_job(&jx[c], alg2, lx + (size_t)c * nt, tens, mu, x, centre, adam_lr, &sc, P);
            }
            char label[32];
            snprintf(label, sizeof label, "leave-%d-out", x);
            ttexp_run_jobs(e.s, &sc, jx, nj, threads, label);
            int b = ttexp_best(jx, nj);
            char names[200] = "", mus[64] = "";
            for (int i = 0, rest = b; i < x; i++, rest /= ngrid) {
                size_t ln = strlen(names), lm = strlen(mus);
                snprintf(names + ln, sizeof names - ln, "%s%s", i ? " " : "", m->tensors[tens[i]].name);
                snprintf(mus + lm, sizeof mus - lm, "%s%g", i ? " " : "", mult[rest % ngrid]);
            }
            double gap = INFINITY, se = 0;
            if (isfinite(jx[b].rec.final_eval)) ttexp_paired_diff(&e, jx[b].rec.final_params, w_adam, &gap, &se);
            csv_row(f, "%d,%d,%s,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", x, d, names, mus, jx[b].rec.score,
                    adam_score, gap, se, jx[b].rec.final_eval, ga[ba].rec.final_eval);
            if (gap < best_gap_x[x]) {
                best_gap_x[x] = gap;
                best_se_x[x] = se;
                ttexp_jobs_free(keep[x], keep_n[x]);
                keep[x] = jx;
                keep_n[x] = nj;
                curves[x] = &jx[b].rec;
            } else {
                ttexp_jobs_free(jx, nj);
            }
            free(lx); /* the block_lr arrays are no longer read */
        }
    }
    csv_close(f);
    rng_free(r);
    const char *cols[4] = {"adam", "leave_1_out", "leave_2_out", "leave_3_out"};
    char *path = path_join(a.out, "eval.csv");
    ttexp_write_curves(path, cols, curves, 4, &sc, 1);
    free(path);

    path = path_join(a.out, "claims.txt");
    f = outfile_open(path);
    FILE *c = outfile_fp(f);
    fprintf(c, "leave_out: %d-layer Transformer (P = %zu, %d tensors), %ld steps; Adam lr %.4g, score %.4f "
               "(mean training loss over the last 10%% of steps), held-out %.4f\n", layers, P, nt, a.steps, adam_lr,
            adam_score, ga[ba].rec.final_eval);
    fprintf(c, "rule: differences of held-out loss paired over the %d positions, +- one standard error; "
               "'not worse' means difference <= 2 SE\n", e.s->eval_B * e.s->cfg.T);
    fprintf(c, "per-tensor gap (Fig. 5d; leave-one-out at its best of a %d-point grid, minus Adam): %d of %d tensors "
               "not worse than Adam (gap.csv)\n", ngrid, n_not_worse, nt);
    for (int x = 1; x <= 3; x++)
        fprintf(c, "%s: Adam leave-%d-out with searched learning rates performs on par with Adam (not worse; "
                   "best of %d random draw(s)): %+.4f +- %.4f\n", best_gap_x[x] <= 2 * best_se_x[x] ? "PASS" : "FAIL",
                x, draws, best_gap_x[x], best_se_x[x]);
    outfile_commit(f);
    echo_file(path);
    free(path);
    ttexp_write_reference(&e, a.out);
    run_write_info(a.out, (unsigned long)a.seed);

    for (int x = 1; x <= 3; x++) ttexp_jobs_free(keep[x], keep_n[x]);
    ttexp_jobs_free(ga, 5);
    free(centre);
    partition_free(alg2);
    ttexp_close(&e);
    return 0;
}
