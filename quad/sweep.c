/* The Fig. 4 sweep: angle draws × R grid × points x, r for both κ methods;
 * summaries (mean, median, quartiles) and the Spearman correlation. */
#include "quad.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

unsigned long quad_task_seed(unsigned long seed, int d, double kappa, int draw)
{
    uint64_t kbits;
    memcpy(&kbits, &kappa, sizeof kbits);
    uint64_t task = seed_hash(SEED_RUN, seed, (unsigned long)d, kbits);
    return seed_hash(SEED_RUN, task, 0x71756164UL /* "quad" */, (unsigned long)draw);
}

/* The control's r at one sample: D = diag(1/|z|), z ~ N(0, I) from crng. */
static void control_sample(quad_sweep_result *s, size_t i, gsl_rng *crng, const double *q, double *z, double *work)
{
    for (int j = 0; j < s->d; j++) z[j] = rng_gaussian(crng, 1);
    quad_ratio r;
    if (quad_ratio_scaled(&r, q, s->kappa, z, work, s->d)) s->ca[i] = r.a, s->cb[i] = r.b;
    else s->ca[i] = s->cb[i] = NAN;
}

/* One angle draw: every R, every x. */
static long sweep_draw(quad_sweep_result *s, int draw, const quad_sweep_config *c)
{
    int d = s->d, nr = s->nr, np = s->npoints;
    gsl_rng *rng = rng_new(quad_task_seed(c->seed, d, s->kappa, draw));
    gsl_rng *crng = c->control ? rng_new(quad_task_seed(c->control_seed, d, s->kappa, draw)) : NULL;
    double *theta = xmalloc(quad_nangles(d) * sizeof(double));
    double *q = xmalloc((size_t)d * sizeof(double)), *x = xmalloc((size_t)d * sizeof(double));
    double *work = xmalloc(2 * (size_t)d * sizeof(double)), *z = xmalloc((size_t)d * sizeof(double));
    double sigma = pow(d, -0.25);  /* x_i ~ N(0, 1/√d): variance 1/√d */
    long skipped = 0;
    quad_draw_angles(theta, rng, d);
    for (int k = 0; k < nr; k++) {
        double R = (double)k / (nr - 1);
        quad_first_column(q, theta, R, d);
        s->tau[(size_t)draw * nr + k] = quad_tau(q, s->kappa, d);
        size_t base = ((size_t)draw * nr + k) * np;
        for (int p = 0; p < np; p++) {
            for (int i = 0; i < d; i++) x[i] = rng_gaussian(rng, sigma);
            quad_ratio r;
            if (quad_ratio_fast(&r, q, s->kappa, x, work, d)) {
                s->ra[base + p] = r.a;
                s->rb[base + p] = r.b;
            } else {
                s->ra[base + p] = s->rb[base + p] = NAN;
                skipped++;
            }
            if (crng) control_sample(s, base + p, crng, q, z, work);
        }
    }
    if (crng) rng_free(crng);
    free(z);
    free(theta);
    free(q);
    free(x);
    free(work);
    rng_free(rng);
    return skipped;
}

typedef struct {
    const quad_sweep_config *c;
    quad_sweep_result *s;
    long *skipped;           /* (nthetas) per draw */
} sweep_job;

static void sweep_item(void *arg, int draw, int worker)
{
    (void)worker;
    sweep_job *w = arg;
    w->skipped[draw] = sweep_draw(w->s, draw, w->c);
}

quad_sweep_result *quad_sweep_run(const quad_sweep_config *c)
{
    if (c->d < 2 || c->kappa < 1 || c->nthetas < 1 || c->npoints < 1 || c->nr < 2 || c->threads < 1)
        DIE("quad_sweep_run: bad configuration d %d kappa %g counts %d %d %d threads %d", c->d, c->kappa,
            c->nthetas, c->npoints, c->nr, c->threads);
    quad_sweep_result *s = xcalloc(1, sizeof *s);
    s->d = c->d, s->kappa = c->kappa, s->nthetas = c->nthetas, s->npoints = c->npoints, s->nr = c->nr;
    size_t nm = (size_t)c->nthetas * c->nr, ns = checked_mul(nm, (size_t)c->npoints, "sweep samples");
    s->tau = xmalloc(nm * sizeof(double));
    s->ra = xmalloc(checked_mul(ns, sizeof(double), "sweep samples"));
    s->rb = xmalloc(ns * sizeof(double));
    if (c->control) {
        s->ca = xmalloc(ns * sizeof(double));
        s->cb = xmalloc(ns * sizeof(double));
    }
    sweep_job w = {.c = c, .s = s, .skipped = xcalloc((size_t)c->nthetas, sizeof(long))};
    parallel_for(c->nthetas, c->threads, sweep_item, &w, c->prog, c->prog_base);
    for (int k = 0; k < c->nthetas; k++) s->skipped += w.skipped[k];
    free(w.skipped);
    return s;
}

void quad_sweep_free(quad_sweep_result *s)
{
    if (!s) return;
    free(s->tau);
    free(s->ra);
    free(s->rb);
    free(s->ca);
    free(s->cb);
    free(s);
}

/* mean, median, quartiles of the finite entries of v[n] */
static void stats(double *mean, double *median, double *q1, double *q3, const double *v, size_t n, long *used)
{
    double *c = xmalloc((n ? n : 1) * sizeof(double));
    size_t m = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            c[m++] = v[i];
            sum += v[i];
        }
    *mean = m ? sum / m : NAN;
    *median = quantile(c, m, 0.5);
    *q1 = quantile(c, m, 0.25);
    *q3 = quantile(c, m, 0.75);
    *used = (long)m;
    free(c);
}

/* The samples of v (nthetas, nr, npoints) at R index k, gathered into out (nthetas·npoints). */
static void gather_at(double *out, const double *v, const quad_sweep_result *s, int k)
{
    size_t np = (size_t)s->npoints;
    for (int t = 0; t < s->nthetas; t++) memcpy(out + t * np, v + ((size_t)t * s->nr + k) * np, np * sizeof(double));
}

void quad_sweep_summary(quad_sweep_row *rows, const quad_sweep_result *s)
{
    size_t np = (size_t)s->npoints, per = (size_t)s->nthetas * np;
    double *a = xmalloc(per * sizeof(double)), *b = xmalloc(per * sizeof(double));
    for (int k = 0; k < s->nr; k++) {
        quad_sweep_row *r = &rows[k];
        r->R = (double)k / (s->nr - 1);
        r->tau_mean = 0, r->tau_min = INFINITY, r->tau_max = -INFINITY;
        for (int t = 0; t < s->nthetas; t++) {
            double tau = s->tau[(size_t)t * s->nr + k];
            r->tau_mean += tau / s->nthetas;
            r->tau_min = fmin(r->tau_min, tau);
            r->tau_max = fmax(r->tau_max, tau);
            memcpy(a + t * np, s->ra + ((size_t)t * s->nr + k) * np, np * sizeof(double));
            memcpy(b + t * np, s->rb + ((size_t)t * s->nr + k) * np, np * sizeof(double));
        }
        long used;
        stats(&r->ra_mean, &r->ra_median, &r->ra_q1, &r->ra_q3, a, per, &used);
        stats(&r->rb_mean, &r->rb_median, &r->rb_q1, &r->rb_q3, b, per, &r->n);
        r->ca_mean = r->ca_median = r->cb_mean = r->cb_median = NAN;
        if (s->ca) {
            double q1, q3;
            gather_at(a, s->ca, s, k);
            gather_at(b, s->cb, s, k);
            stats(&r->ca_mean, &r->ca_median, &q1, &q3, a, per, &used);
            stats(&r->cb_mean, &r->cb_median, &q1, &q3, b, per, &used);
        }
    }
    free(a);
    free(b);
}

/* Ranks 1..n, ties get their average rank. */
static void ranks(double *rk, const double *v, int n)
{
    int *idx = xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) idx[i] = i;
    /* insertion sort of indices by value: n is small (one curve) */
    for (int i = 1; i < n; i++) {
        int k = idx[i], j = i - 1;
        while (j >= 0 && v[idx[j]] > v[k]) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = k;
    }
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) j++;
        for (int k = i; k <= j; k++) rk[idx[k]] = 0.5 * (i + j) + 1;
        i = j + 1;
    }
    free(idx);
}

double spearman(const double *x, const double *y, int n)
{
    double *rx = xmalloc((size_t)n * sizeof(double)), *ry = xmalloc((size_t)n * sizeof(double));
    ranks(rx, x, n);
    ranks(ry, y, n);
    double mx = 0.5 * (n + 1), my = mx;  /* average ranks always sum to n(n+1)/2 */
    double sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    free(rx);
    free(ry);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

void quad_check_sweep(int d, double kappa, int nthetas, int npoints, int nr)
{
    if (d < 2) die_user("dimension d must be >= 2 (got %d)", d);
    if (d > 5000) die_user("dimension d must be <= 5000 (got %d)", d);
    if (!(kappa >= 1)) die_user("condition number kappa must be >= 1 (got %g)", kappa);
    if (nthetas < 1) die_user("number of angle draws must be >= 1 (got %d)", nthetas);
    if (npoints < 1) die_user("number of points x per matrix must be >= 1 (got %d)", npoints);
    if (nr < 2) die_user("number of R values must be >= 2 (got %d)", nr);
}

double quad_trend_rho(const double *tau, const double *s, const int *perm, int n)
{
    if (!perm) return spearman(tau, s, n);
    double *t = xmalloc((size_t)n * sizeof(double));
    for (int k = 0; k < n; k++) t[k] = tau[perm[k]];
    double rho = spearman(t, s, n);
    free(t);
    return rho;
}

double quad_share_falling(const double *rho, int n, double threshold)
{
    int falls = 0;
    for (int i = 0; i < n; i++) falls += rho[i] <= threshold;  /* NaN compares false */
    return n > 0 ? (double)falls / n : NAN;
}
