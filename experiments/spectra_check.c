/* spectra_check — how wrong are the stochastic block spectra? SLQ and Lanczos
 * (hessian/spectra.h) against the exact spectra of the same blocks from the
 * streamed analysis (hessian/stream.h), on the tiny Transformer and the MLP, at
 * several checkpoints, for Algorithm 3's blocks, Algorithm 2's tensors and the
 * whole model.
 *
 * Per block, SLQ runs n_v,max probes × m_max steps once; every (m, n_v) of the
 * grid is read from the same tridiagonals (the first n_v probes, the leading
 * m × m part: with full reorthogonalisation that is exactly the m-step run).
 * Per block and (m, n_v), against the exact eigenvalues λ (scale |λ|max):
 *   lmax, lmin   |λ̂ − λ| / |λ|max for the largest and smallest quadrature node;
 *   kappa        |log10(κ̂/κ)|, κ = |λ|max/|λ|min (κ̂ from the nodes), |λ|min
 *                floored at 1e-16 |λ|max (a singular block: 16 decades);
 *   trace        |t̂r − tr| / Σ|λ| (Hutchinson from the same probes), and its
 *                z-score (t̂r − tr)/se;
 *   w1           the Wasserstein-1 distance between the SLQ measure and the
 *                exact one (1/n) Σ δ(λ_i), / |λ|max;
 *   neg          the SLQ mass on λ < −zero minus the exact fraction there;
 *   neg3         the same on λ < −1e-3 |λ|max (negative mass well away from a
 *                cluster at zero).
 * Lanczos extremes with the residual test (nev 1) give a row of their own
 * (method lanczos: lmax, lmin, the steps taken). Blocks with no curvature
 * beyond round-off (|λ|max ≤ zero = 1e-12 of the largest |λ|max of the
 * partition) are left out and counted.
 *
 * Outputs (--out): errors.csv (one row per model, checkpoint, partition, block,
 * method, m, n_v), table.csv (per partition and (m, n_v), pooled over the models
 * and checkpoints: median and worst of every error), headline.csv (per model
 * and partition at the default m, n_v), curves_<partition>.csv (for the
 * figure), misleads.csv (the errors by block kind: indefinite, near-singular,
 * clustered, the rest), exact_<model>_<checkpoint>_<partition>.npy (the exact
 * eigenvalues), run.txt. The headline table is printed on stdout.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/models.h"
#include "harness/tt_train.h"
#include "hessian/hdist.h"
#include "hessian/hessian.h"
#include "hessian/spectra.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 3
#define MAXK 8
#define ZERO_REL 1e-12

/* A growing array of values. */
typedef struct vec {
    double *v;
    size_t n, cap;
} vec;

static void push(vec *a, double x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = xrealloc(a->v, a->cap * sizeof(double));
    }
    a->v[a->n++] = x;
}

typedef struct {
    model_cli mc;              /* every model kind's flags (the MLP's width 32 here) */
    const char *out, *models, *parts;
    int def_m, def_nv, lanczos_steps, whole_max;
    int_list ms, nvs;
    double_list fracs;
    long probe_seed;
    double lanczos_tol, pick_lmax, pick_w1;
    /* state */
    int nkinds;
    model_ckpt k[MAXK];        /* the models of --models, checked */
    int nparts, ncells, def_cell;
    char part_names[MAXP][32];
    outfile *errors;
    struct vec *pooled;            /* [part][cell][metric]: every block, model and checkpoint */
    struct vec *head;              /* [model][part][metric] at the default cell */
    struct vec *kinds;             /* [kind][metric] at the default cell */
    struct vec *lz_err, *lz_steps; /* Lanczos extremes: lambda max error, steps */
    long directions, exact_directions;
    double slq_seconds, exact_seconds;
} check;

enum { M_LMAX, M_LMIN, M_KAPPA, M_TRACE, M_W1, M_NEG, M_Z, M_NEG3, NMETRIC };
static const char *METRIC[NMETRIC] = {"lmax", "lmin", "kappa_log10", "trace", "w1", "neg_mass", "trace_z", "neg_mass_1e-3"};

/* misleads: block kinds */
enum { K_INDEF, K_SINGULAR, K_CLUSTER, K_REST, NKIND };
static const char *KIND[NKIND] = {"indefinite (exact negative mass > 1%)", "near-singular (|l|min < 1e-6 |l|max)",
                                  "clustered (half the eigenvalues within 1e-3 |l|max of one value)", "the rest"};

static vec *pooled(check *c, int part, int cell, int metric)
{
    return &c->pooled[((size_t)part * c->ncells + cell) * NMETRIC + metric];
}

/* kinds per block from its exact eigenvalues (ascending, n), scale |λ|max */
static void block_kinds(const double *w, size_t n, double zero, int *kind)
{
    double big = fmax(fabs(w[0]), fabs(w[n - 1])), small = INFINITY;
    size_t neg = 0;
    for (size_t i = 0; i < n; i++) {
        small = fmin(small, fabs(w[i]));
        neg += w[i] < -zero;
    }
    kind[K_INDEF] = neg > 0.01 * n;
    kind[K_SINGULAR] = small < 1e-6 * big;
    /* a cluster: some window of width 1e-3 |λ|max holds half the eigenvalues */
    size_t best = 0;
    for (size_t i = 0, j = 0; i < n; i++) {
        while (w[i] - w[j] > 1e-3 * big) j++;
        best = i - j + 1 > best ? i - j + 1 : best;
    }
    kind[K_CLUSTER] = n >= 4 && best >= n / 2;
    kind[K_REST] = !kind[K_INDEF] && !kind[K_SINGULAR] && !kind[K_CLUSTER];
}

/* Errors of one estimate (nodes, weights) against the exact w (n). */
static void errors_of(const double *nodes, const double *weights, int cnt, const double *w, size_t n, double zero,
                      double tr_est, double tr_se, double *e)
{
    double big = fmax(fabs(w[0]), fabs(w[n - 1])), abs_sum = 0, tr = 0;
    size_t neg = 0;
    for (size_t i = 0; i < n; i++) {
        abs_sum += fabs(w[i]);
        tr += w[i];
        neg += w[i] < -zero;
    }
    spectrum ex = spectrum_of((int)n, w);
    measure_stats s = measure_stats_of(nodes, weights, cnt, zero);
    e[M_LMAX] = fabs(s.lmax - w[n - 1]) / big;
    e[M_LMIN] = fabs(s.lmin - w[0]) / big;
    /* κ with |λ|min floored at 1e-16 |λ|max (an exactly singular block: 16 decades) */
    double k_est = s.absmax / fmax(s.absmin, 1e-16 * s.absmax), k_ex = ex.absmax / fmax(ex.absmin, 1e-16 * ex.absmax);
    e[M_KAPPA] = fabs(log10(k_est) - log10(k_ex));
    measure_stats s3 = measure_stats_of(nodes, weights, cnt, 1e-3 * big);
    size_t neg3 = 0;
    for (size_t i = 0; i < n; i++) neg3 += w[i] < -1e-3 * big;
    e[M_NEG3] = s3.neg_mass - (double)neg3 / n;
    e[M_TRACE] = isnan(tr_est) ? NAN : fabs(tr_est - tr) / abs_sum;
    e[M_Z] = isnan(tr_est) ? NAN : tr_se > 0 ? (tr_est - tr) / tr_se : tr_est == tr ? 0 : NAN;
    double *uw = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) uw[i] = 1.0 / n;
    e[M_W1] = nodes ? wasserstein1(nodes, weights, cnt, w, uw, (int)n) / big : NAN;
    free(uw);
    e[M_NEG] = s.neg_mass - (double)neg / n;
}

/* Everything for model mi at one checkpoint. */
static void check_model(check *c, int mi, const char *point)
{
    model *m = c->k[mi].m;
    const char *mname = c->k[mi].kind->name;
    for (int pi = 0; pi < c->nparts; pi++) {
        const char *pname = c->part_names[pi];
        if (!strcmp(pname, "whole") && m->P > (size_t)c->whole_max) {
            fprintf(stderr, "spectra_check: %s P = %zu > --whole-max %d: the whole model left out\n", mname, m->P,
                    c->whole_max);
            continue;
        }
        partition *p = model_partition_blocks(&c->k[mi], pname);
        int nb = p->nblocks;
        hessian_opts ho = hessian_defaults();
        ho.panel = c->mc.cli.panel;
        ho.label = "exact blocks";
        size_t *off = xmalloc(((size_t)nb + 1) * sizeof(size_t));
        double t0 = wall_seconds();
        double *eig = exact_block_eigs(m, p, &ho, off);
        c->exact_seconds += wall_seconds() - t0;
        c->exact_directions += (long)m->P;
        char name[160];
        snprintf(name, sizeof name, "exact_%s_%s_%s.npy", mname, point, pname);
        npy_write_in(c->out, name, eig, 1, &off[nb]);

        /* SLQ at the largest m and n_v; Lanczos extremes */
        int mmax = 0, nvmax = 0;
        for (int i = 0; i < c->ms.n; i++) mmax = c->ms.v[i] > mmax ? c->ms.v[i] : mmax;
        for (int i = 0; i < c->nvs.n; i++) nvmax = c->nvs.v[i] > nvmax ? c->nvs.v[i] : nvmax;
        spectra_op *A = spectra_op_blocks(m, p, c->mc.cli.panel);
        slq_opts o = slq_defaults();
        o.probes = nvmax, o.steps = mmax, o.seed = (uint64_t)c->probe_seed;
        slq_data d;
        slq_data_init(&d, A, nvmax, mmax);
        extremes_data ex;
        extremes_init(&ex, nb, 1);
        t0 = wall_seconds();
        slq_run(&d, A, &o);
        extremes_run(&ex, A, c->lanczos_steps, c->lanczos_tol, &o, NULL, NULL);
        c->slq_seconds += wall_seconds() - t0;
        for (size_t r = 0; r < (size_t)nb * nvmax; r++) c->directions += d.count[r];
        for (int b = 0; b < nb; b++) c->directions += ex.steps[b];
        spectra_op_free(A);

        double ref = 0;
        for (int b = 0; b < nb; b++) ref = fmax(ref, fmax(fabs(eig[off[b]]), fabs(eig[off[b + 1] - 1])));
        double zero = ZERO_REL * ref;
        double *nodes = xmalloc((size_t)nvmax * mmax * sizeof(double)), *wts = xmalloc((size_t)nvmax * mmax * sizeof(double));
        int skipped = 0;
        for (int b = 0; b < nb; b++) {
            const double *w = eig + off[b];
            size_t n = p->b[b].n;
            if (fmax(fabs(w[0]), fabs(w[n - 1])) <= zero) {
                skipped++;
                continue;
            }
            int kind[NKIND];
            block_kinds(w, n, zero, kind);
            double e[NMETRIC];
            for (int im = 0; im < c->ms.n; im++)
                for (int iv = 0; iv < c->nvs.n; iv++) {
                    int mm = c->ms.v[im], nv = c->nvs.v[iv], cell = im * c->nvs.n + iv;
                    int cnt = slq_measure(&d, b, nv, mm, nodes, wts);
                    double tr, se;
                    slq_trace(&d, b, nv, &tr, &se);
                    errors_of(nodes, wts, cnt, w, n, zero, tr, se, e);
                    for (int k = 0; k < NMETRIC; k++) push(pooled(c, pi, cell, k), e[k]);
                    if (cell == c->def_cell)
                        for (int k = 0; k < NMETRIC; k++) {
                            push(&c->head[((size_t)mi * MAXP + pi) * NMETRIC + k], e[k]);
                            for (int kk = 0; kk < NKIND; kk++)
                                if (kind[kk]) push(&c->kinds[(size_t)kk * NMETRIC + k], e[k]);
                        }
                    csv_row(c->errors, "%s,%s,%s,%d,%s,%zu,slq,%d,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", mname,
                            point, pname, b, p->b[b].name, n, mm, nv, kind[K_INDEF], kind[K_SINGULAR], kind[K_CLUSTER],
                            kind[K_REST], e[M_LMAX], e[M_LMIN], e[M_KAPPA], e[M_TRACE], e[M_Z], e[M_W1], e[M_NEG], e[M_NEG3]);
                }
            /* Lanczos extremes: the Ritz values as nodes without weights */
            double lo = ex.theta[(size_t)b * 2], hi = ex.theta[(size_t)b * 2 + 1];
            double big = fmax(fabs(w[0]), fabs(w[n - 1]));
            push(c->lz_err, fabs(hi - w[n - 1]) / big);
            push(c->lz_steps, ex.steps[b]);
            csv_row(c->errors, "%s,%s,%s,%d,%s,%zu,lanczos,%d,0,%d,%d,%d,%d,%.6g,%.6g,nan,nan,nan,nan,nan,nan", mname, point, pname,
                    b, p->b[b].name, n, ex.steps[b], kind[K_INDEF], kind[K_SINGULAR], kind[K_CLUSTER], kind[K_REST],
                    fabs(hi - w[n - 1]) / big, fabs(lo - w[0]) / big);
        }
        if (!core_quiet)
            fprintf(stderr, "spectra_check: %s %s %s: %d blocks (%d without curvature left out)\n", mname, point, pname, nb,
                    skipped);
        free(nodes), free(wts), free(eig), free(off);
        slq_data_free(&d);
        extremes_free(&ex);
        partition_free(p);
    }
}

/* ---- each model at its checkpoints: one training run ------------------------------------------ */

static void check_kind(check *c, int mi)
{
    model_ckpt *k = &c->k[mi];
    model_ckpt_start(k);
    char *train_dir = path_join(c->out, "train");
    model_ckpt_train(k, train_dir);
    free(train_dir);
    for (int i = 0; i < k->nfracs; i++) {
        char point[32];
        snprintf(point, sizeof point, "%g", k->fracs[i]);
        model_ckpt_load(k, i);
        check_model(c, mi, point);
    }
}

/* ---- tables --------------------------------------------------------------------------------- */

/* Quantile q of the values that are not NAN (undefined errors are left out). */
static double qn(const double *v, size_t n, double q)
{
    double *x = xmalloc((n ? n : 1) * sizeof(double));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) x[k++] = v[i];
    double r = quantile(x, k, q);
    free(x);
    return r;
}

static void write_tables(check *c)
{
    outfile *f = csv_open_in(c->out, "table.csv", "partition,m,nv,blocks,metric,median,q90,worst");
    for (int pi = 0; pi < c->nparts; pi++)
        for (int im = 0; im < c->ms.n; im++)
            for (int iv = 0; iv < c->nvs.n; iv++)
                for (int k = 0; k < NMETRIC; k++) {
                    vec *a = pooled(c, pi, im * c->nvs.n + iv, k);
                    size_t n = a->n;
                    if (n == 0) continue;
                    double *v = a->v;
                    for (size_t i = 0; i < n; i++) v[i] = k == M_NEG || k == M_NEG3 || k == M_Z ? fabs(v[i]) : v[i];
                    csv_row(f, "%s,%d,%d,%zu,%s,%.6g,%.6g,%.6g", c->part_names[pi], c->ms.v[im], c->nvs.v[iv], n, METRIC[k],
                            qn(v, n, 0.5), qn(v, n, 0.9), qn(v, n, 1));
                }
    csv_close(f);
    /* curves for the figure: per partition, rows m, columns per n_v: median lmax, worst lmax, median w1, worst w1 */
    for (int pi = 0; pi < c->nparts; pi++) {
        char name[64], header[2048] = "m";
        snprintf(name, sizeof name, "curves_%s.csv", c->part_names[pi]);
        const char *what[4] = {"lmax_median", "lmax_worst", "w1_median", "w1_worst"};
        for (int w = 0; w < 4; w++)
            for (int iv = 0; iv < c->nvs.n; iv++) {
                char col[64];
                snprintf(col, sizeof col, ",%s_nv%d", what[w], c->nvs.v[iv]);
                strcat(header, col);
            }
        f = csv_open_in(c->out, name, header);
        for (int im = 0; im < c->ms.n; im++) {
            fprintf(outfile_fp(f), "%d", c->ms.v[im]);
            for (int w = 0; w < 4; w++)
                for (int iv = 0; iv < c->nvs.n; iv++) {
                    vec *a = pooled(c, pi, im * c->nvs.n + iv, w < 2 ? M_LMAX : M_W1);
                    double v = a->n ? qn(a->v, a->n, w % 2 ? 1 : 0.5) : NAN;
                    /* a zero error has no place on a log axis: floor at 1e-17 */
                    fprintf(outfile_fp(f), ",%.6g", v > 1e-17 ? v : 1e-17);
                }
            fputc('\n', outfile_fp(f));
        }
        csv_close(f);
    }
}

/* The headline at the default (m, n_v): per model and partition, stdout and headline.csv. */
static void print_headline(check *c)
{
    outfile *hf = csv_open_in(c->out, "headline.csv",
                              "model,partition,m,nv,blocks,lmax_median,lmax_worst,w1_median,w1_worst,lmin_median,lmin_worst,"
                              "trace_median,trace_worst,neg_mass_median,neg_mass_worst");
    printf("SLQ at m = %d, n_v = %d against the exact block spectra (checkpoints", c->def_m, c->def_nv);
    for (int i = 0; i < c->fracs.n; i++) printf(" %g", c->fracs.v[i]);
    printf("); errors relative to the block's |lambda|max (trace: to sum |lambda|)\n");
    printf("%-5s %-6s %6s  %11s %11s  %11s %11s  %11s %11s  %11s  %11s\n", "model", "blocks", "count", "lmax median",
           "lmax worst", "W1 median", "W1 worst", "lmin median", "lmin worst", "trace med.", "neg worst");
    enum { NH = 5 };
    const int hm[NH] = {M_LMAX, M_W1, M_LMIN, M_TRACE, M_NEG};
    for (int a = 0; a < c->nkinds; a++)
        for (int b = 0; b < c->nparts; b++) {
            vec *v = &c->head[((size_t)a * MAXP + b) * NMETRIC];
            size_t n = v[M_LMAX].n;
            if (n == 0) continue;
            double q[NH][2];
            for (int k = 0; k < NH; k++) {
                vec *x = &v[hm[k]];
                for (size_t i = 0; i < x->n; i++) x->v[i] = fabs(x->v[i]);
                q[k][0] = qn(x->v, x->n, 0.5), q[k][1] = qn(x->v, x->n, 1);
            }
            printf("%-5s %-6s %6zu  %11.2e %11.2e  %11.2e %11.2e  %11.2e %11.2e  %11.2e  %11.2e\n", c->k[a].kind->name, c->part_names[b],
                   n, q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1], q[3][0], q[4][1]);
            csv_row(hf, "%s,%s,%d,%d,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", c->k[a].kind->name, c->part_names[b], c->def_m,
                    c->def_nv, n, q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1], q[3][0], q[3][1], q[4][0], q[4][1]);
        }
    csv_close(hf);
}

/* The errors by block kind at the default (m, n_v), stdout and misleads.csv; the Lanczos extremes. */
static void print_misleads(check *c)
{
    outfile *mf = csv_open_in(c->out, "misleads.csv",
                              "kind,blocks,kappa_log10_median,kappa_log10_worst,neg_mass_median,neg_mass_worst,"
                              "neg_mass_1e-3_median,neg_mass_1e-3_worst,lmin_median,lmin_worst,w1_median,w1_worst");
    printf("\nwhere SLQ misleads (same m, n_v; all models, checkpoints, partitions):\n");
    printf("%-66s %6s  %14s %14s  %11s %11s  %11s  %11s %11s  %9s\n", "block kind", "count", "log10 k err med",
           "log10 k err max", "neg median", "neg worst", "neg<-1e-3 w", "lmin median", "lmin worst", "W1 median");
    const int km[5] = {M_KAPPA, M_NEG, M_LMIN, M_W1, M_NEG3};
    for (int kk = 0; kk < NKIND; kk++) {
        vec *v = &c->kinds[(size_t)kk * NMETRIC];
        size_t n = v[M_LMAX].n;
        if (n == 0) continue;
        double q[5][2];
        for (int k = 0; k < 5; k++) {
            vec *x = &v[km[k]];
            for (size_t i = 0; i < x->n; i++) x->v[i] = fabs(x->v[i]);
            q[k][0] = qn(x->v, x->n, 0.5), q[k][1] = qn(x->v, x->n, 1);
        }
        printf("%-66s %6zu  %14.2f %14.2f  %11.2e %11.2e  %11.2e  %11.2e %11.2e  %9.2e\n", KIND[kk], n, q[0][0], q[0][1],
               q[1][0], q[1][1], q[4][1], q[2][0], q[2][1], q[3][0]);
        csv_row(mf, "%s,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", KIND[kk], n, q[0][0], q[0][1], q[1][0], q[1][1],
                q[4][0], q[4][1], q[2][0], q[2][1], q[3][0], q[3][1]);
    }
    csv_close(mf);
    if (c->lz_err->n > 0)
        printf("\nLanczos extremes (residual test %.0e, at most %d steps): lambda max error median %.2e, worst %.2e; steps "
               "median %.0f, most %.0f (%zu blocks)\n",
               c->lanczos_tol, c->lanczos_steps, qn(c->lz_err->v, c->lz_err->n, 0.5), qn(c->lz_err->v, c->lz_err->n, 1),
               qn(c->lz_steps->v, c->lz_steps->n, 0.5), qn(c->lz_steps->v, c->lz_steps->n, 1), c->lz_err->n);
}

/* The pick: the cheapest (m, n_v) (fewest m·n_v; ties: fewer probes) whose worst λmax
 * error over every block and whose median W1 in every partition are within the bounds. */
static void print_pick(check *c)
{
    int pick = -1;
    for (int im = 0; im < c->ms.n; im++)
        for (int iv = 0; iv < c->nvs.n; iv++) {
            int cell = im * c->nvs.n + iv, ok = 1;
            for (int pi = 0; pi < c->nparts && ok; pi++) {
                vec *l = pooled(c, pi, cell, M_LMAX), *w = pooled(c, pi, cell, M_W1);
                if (l->n == 0) continue;
                ok = qn(l->v, l->n, 1) <= c->pick_lmax && qn(w->v, w->n, 0.5) <= c->pick_w1;
            }
            if (!ok) continue;
            long cost = (long)c->ms.v[im] * c->nvs.v[iv];
            if (pick < 0) pick = cell;
            else {
                long pc = (long)c->ms.v[pick / c->nvs.n] * c->nvs.v[pick % c->nvs.n];
                if (cost < pc || (cost == pc && c->nvs.v[iv] < c->nvs.v[pick % c->nvs.n])) pick = cell;
            }
        }
    if (pick >= 0)
        printf("\npick: the cheapest (m, n_v) with the worst lambda max error <= %g and the median W1 <= %g in every "
               "partition: m = %d, n_v = %d (%d Hessian-vector products per block)\n",
               c->pick_lmax, c->pick_w1, c->ms.v[pick / c->nvs.n], c->nvs.v[pick % c->nvs.n],
               c->ms.v[pick / c->nvs.n] * c->nvs.v[pick % c->nvs.n]);
    else
        printf("\npick: no (m, n_v) of the grid has the worst lambda max error <= %g and the median W1 <= %g\n", c->pick_lmax,
               c->pick_w1);
}

static void parse_args(check *c, int argc, char **argv)
{
    *c = (check){0};
    model_cli_init(&c->mc);
    c->mc.mlp.width = 32;
    c->mc.cli.hess_batch = 64;
    c->out = "results/spectra_check";
    c->models = "tt,mlp";
    c->parts = "alg3,alg2,whole";
    c->def_m = 20;
    c->def_nv = 4;
    c->lanczos_steps = 200;
    c->lanczos_tol = 1e-6;
    c->whole_max = 6000;
    c->probe_seed = 1;
    c->pick_lmax = 1e-5;
    c->pick_w1 = 0.04;
    parse_int_list("--m", "5,10,20,40", &c->ms);
    parse_int_list("--nv", "1,2,4,8", &c->nvs);
    parse_double_list("--checkpoints", "0,0.01,1", &c->fracs);
    const cli_opt opts[] = {
        {"models", OPT_STRING, &c->models, "the models, comma-separated (tt, mlp)"},
        {"partitions", OPT_STRING, &c->parts, "comma-separated: alg3, alg2, whole (at most 3)"},
        {"checkpoints", OPT_DOUBLE_LIST, &c->fracs, "fractions of training (0: initialisation)"},
        {"m", OPT_INT_LIST, &c->ms, "Lanczos steps m to measure"},
        {"nv", OPT_INT_LIST, &c->nvs, "probe counts n_v to measure"},
        {"default-m", OPT_INT, &c->def_m, "the m of the headline table (spectra's default)"},
        {"default-nv", OPT_INT, &c->def_nv, "the n_v of the headline table (spectra's default)"},
        {"probe-seed", OPT_LONG, &c->probe_seed, "probe i of block b: Rademacher from splitmix64(seed, b, i)"},
        {"lanczos-steps", OPT_INT, &c->lanczos_steps, "Lanczos extremes: most steps per block"},
        {"lanczos-tol", OPT_DOUBLE, &c->lanczos_tol, "Lanczos extremes: residual bound relative to max |Ritz value|"},
        {"pick-lmax", OPT_DOUBLE, &c->pick_lmax, "the pick: worst lambda max error (over every block) at most this"},
        {"pick-w1", OPT_DOUBLE, &c->pick_w1, "the pick: median W1 / |lambda|max (in every partition) at most this"},
        {"whole-max", OPT_INT, &c->whole_max, "the whole model as one block only up to this P (its H_bb is P x P)"},
        MODEL_KINDS_RUN_OPTS(&c->mc),
        {"out", OPT_STRING, &c->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "SLQ and Lanczos per block against the exact block spectra (streamed) of the same Hessian: the tiny\n"
              "Transformer (hessian_blocks' flags; H on --hess-batch sequences, 64 here) and the MLP (width 32), at\n"
              "initialisation (0) and the --checkpoints fractions of training, for Algorithm 3's blocks, Algorithm\n"
              "2's tensors and the whole model. Relative errors of lambda max and min, kappa, the trace, the\n"
              "Wasserstein-1 distance of the densities and the negative mass, as functions of m and n_v; the\n"
              "headline (median and worst at --default-m, --default-nv) on stdout.",
              opts, sizeof opts / sizeof *opts);
}

/* Range checks (one user error each), which models, and their setups. */
static void check_args(check *c)
{
    const model_kind *kinds[MAXK];
    c->nkinds = model_kinds_parse(c->models, kinds, MAXK, "--models");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", c->parts);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (strcmp(t, "alg3") && strcmp(t, "alg2") && strcmp(t, "whole"))
            die_user("--partitions: unknown partition '%s' (alg3, alg2, whole)", t);
        if (c->nparts == MAXP) die_user("--partitions: at most %d", MAXP);
        snprintf(c->part_names[c->nparts++], sizeof c->part_names[0], "%s", t);
    }
    if (c->fracs.n < 1 || c->fracs.n > TT_MAX_CHECKPOINTS) die_user("--checkpoints: 1 to %d fractions", TT_MAX_CHECKPOINTS);
    for (int i = 0; i < c->fracs.n; i++)
        if (!(c->fracs.v[i] >= 0 && c->fracs.v[i] <= 1)) die_user("--checkpoints: fraction %g not in [0, 1]", c->fracs.v[i]);
    c->def_cell = -1;
    for (int i = 0; i < c->ms.n; i++)
        if (c->ms.v[i] < 1 || c->ms.v[i] > 2000) die_user("--m: %d not in 1..2000", c->ms.v[i]);
    for (int i = 0; i < c->nvs.n; i++)
        if (c->nvs.v[i] < 1 || c->nvs.v[i] > 10000) die_user("--nv: %d not in 1..10000", c->nvs.v[i]);
    for (int i = 0; i < c->ms.n; i++)
        for (int j = 0; j < c->nvs.n; j++)
            if (c->ms.v[i] == c->def_m && c->nvs.v[j] == c->def_nv) c->def_cell = i * c->nvs.n + j;
    if (c->def_cell < 0) die_user("--default-m %d and --default-nv %d must be in --m and --nv", c->def_m, c->def_nv);
    if (c->lanczos_steps < 1) die_user("--lanczos-steps must be >= 1 (got %d)", c->lanczos_steps);
    if (!(c->lanczos_tol > 0 && c->lanczos_tol < 1)) die_user("--lanczos-tol must be in (0, 1) (got %g)", c->lanczos_tol);
    if (c->probe_seed < 0) die_user("--probe-seed must be >= 0 (got %ld)", c->probe_seed);
    for (int i = 0; i < c->nkinds; i++)
        model_ckpt_check_at(&c->k[i], &c->mc, kinds[i]->name, c->fracs.v, c->fracs.n);
}

static void check_free(check *c)
{
    vec *all[3] = {c->pooled, c->head, c->kinds};
    size_t counts[3] = {(size_t)MAXP * c->ncells * NMETRIC, (size_t)c->nkinds * MAXP * NMETRIC, (size_t)NKIND * NMETRIC};
    for (int i = 0; i < 3; i++) {
        for (size_t j = 0; j < counts[i]; j++) free(all[i][j].v);
        free(all[i]);
    }
    free(c->lz_err->v), free(c->lz_steps->v), free(c->lz_err), free(c->lz_steps);
    for (int i = 0; i < c->nkinds; i++) model_ckpt_free(&c->k[i]);
    model_cli_free(&c->mc);
}

int main(int argc, char **argv)
{
    check c;
    parse_args(&c, argc, argv);
    check_args(&c);
    ensure_dir(c.out);

    c.ncells = c.ms.n * c.nvs.n;
    c.pooled = xcalloc((size_t)MAXP * c.ncells * NMETRIC, sizeof(vec));
    c.head = xcalloc((size_t)c.nkinds * MAXP * NMETRIC, sizeof(vec));
    c.kinds = xcalloc((size_t)NKIND * NMETRIC, sizeof(vec));
    c.lz_err = xcalloc(1, sizeof(vec));
    c.lz_steps = xcalloc(1, sizeof(vec));
    c.errors = csv_open_in(c.out, "errors.csv",
                           "model,checkpoint,partition,block,name,n,method,m,nv,indefinite,near_singular,clustered,rest,"
                           "lmax,lmin,kappa_log10,trace,trace_z,w1,neg_mass,neg_mass_1e-3");
    double t0 = wall_seconds();
    for (int i = 0; i < c.nkinds; i++) check_kind(&c, i);
    csv_close(c.errors);
    write_tables(&c);

    print_headline(&c);
    print_misleads(&c);
    print_pick(&c);
    printf("Hessian-vector products: %ld stochastic (%.1f s), exact streamed: %ld columns (%.1f s)\n", c.directions,
           c.slq_seconds, c.exact_directions, c.exact_seconds);
    run_note("stochastic seconds: %.3f", c.slq_seconds);
    run_note("exact seconds: %.3f", c.exact_seconds);
    run_note("total seconds: %.3f", wall_seconds() - t0);
    run_write_info(c.out, (unsigned long)c.mc.cli.seed);

    check_free(&c);
    return 0;
}
